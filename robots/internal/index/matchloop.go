package index

import "bytes"

// The matching loop of a decision: the rules of the group's parts are
// tried in precedence order, each first through the cheap filters, then
// searched for in the path directly or, once that has cost too much, in
// the path's occIndex.

// pathSet is what a decision learns about its path on first use: the set
// of its octets and which keys of the file's [segFilter] occur in it. Only
// patterns with a wildcard, whose matching searches the path, consult it.
type pathSet struct {
	p    []byte
	done bool
	set  byteSet
	fi   *fileIndex
	// found is scratch for the keys found (nil when the file has no
	// [segFilter]); scanned reports whether it is filled.
	found   []uint64
	scanned bool
	// work is the number of octets searched directly so far; past
	// [directBudget] the decision indexes the path and searches no more.
	work int
	// tried counts the patterns considered and the segments of those
	// looked for in the path's index, for tests of the work bounds.
	tried int
	// over: the file's index is lazy and the budget was spent; the
	// decision found nothing and must start over (see [fileIndex.lazy]).
	over bool
}

// lazyIndex is the [occIndex] of a decision, from the file's pool once
// needed. It is kept apart from the [pathSet], which may point to the stack.
type lazyIndex struct {
	fi *fileIndex
	ix *occIndex
}

// pooledPath is the length of the longest path whose index goes back to
// the pool: the scratch of longer ones is left to the garbage collector.
const pooledPath = 64 << 10

// index builds the index of p, whose filter f has not scanned p yet,
// setting the keys found in found as the scan would.
func (lz *lazyIndex) index(p []byte, f *segFilter, found []uint64) {
	lz.ix = lz.fi.pool.Get().(*occIndex)
	lz.ix.buildFound(p, f, found)
}

// release returns the index, if any, to the pool.
func (lz *lazyIndex) release() {
	if lz.ix != nil && lz.ix.n <= pooledPath {
		lz.fi.pool.Put(lz.ix)
	}
	lz.ix = nil
}

// mayMatch reports whether m can match the path: false when the pattern
// has a wildcard and an octet or a key (a literal segment) the path lacks.
// The octet set costs O(len(path)) once per decision, the keys one pass
// of the [segFilter]; both spare searching the path for such patterns. A
// file whose index is eager (see [fileIndex]) indexes a long path in that
// pass, into lz.
func (ps *pathSet) mayMatch(m *matcher, lz *lazyIndex) bool {
	if len(m.ends) < 2 {
		return true // a prefix comparison is cheaper
	}
	if !ps.done {
		ps.set.add(ps.p)
		ps.done = true
	}
	if !m.need.within(&ps.set) {
		return false
	}
	return ps.keysFound(m.kfrom, m.kto, lz)
}

// keysFound reports whether the keys ids[kfrom:kto] of the file's
// [segFilter] all occur in the path; the first call scans the path.
func (ps *pathSet) keysFound(kfrom, kto int32, lz *lazyIndex) bool {
	if kfrom == kto || ps.found == nil {
		return true
	}
	f := ps.fi.segs
	if !ps.scanned {
		ps.scanned = true
		clear(ps.found)
		if lz.ix == nil && lz.fi != nil && lz.fi.eager > 0 && len(ps.p) >= lz.fi.eager {
			lz.index(ps.p, f, ps.found) // in the same pass of the automaton
		} else {
			f.scan(ps.p, ps.found)
		}
	}
	for _, id := range f.ids[kfrom:kto] {
		if ps.found[id>>6]&(1<<(id&63)) == 0 {
			return false
		}
	}
	return true
}

// matches reports whether m matches the path. A decision first searches
// the path directly for each pattern; once that has cost [directBudget]
// octets, it indexes the path (see [occIndex]), after which a pattern costs
// O(segments·log len(path)) whatever the file.
func (ps *pathSet) matches(m *matcher, lz *lazyIndex) bool {
	ps.tried++
	if !ps.mayMatch(m, lz) {
		return false
	}
	if len(m.ends) < 2 {
		return m.match(ps.p)
	}
	var f *segFilter
	if lz.fi != nil {
		f = lz.fi.segs
	}
	if lz.ix == nil && lz.fi != nil && ps.work >= lz.fi.budget {
		lz.ix = lz.fi.pool.Get().(*occIndex)
		lz.ix.build(ps.p, f)
	}
	if lz.ix != nil {
		ps.tried += len(m.ends)
		if ok, indexed := m.matchIndexed(ps.p, lz.ix, f); indexed {
			return ok
		}
	}
	ps.work += len(ps.p)
	return m.match(ps.p)
}

// matchIndexed is match with the path indexed by x (f is the file's
// [segFilter], nil if none). It reports false for indexed when m has a
// segment of 2 octets or more without a key, which only a file with no
// segFilter has.
func (m *matcher) matchIndexed(p []byte, x *occIndex, f *segFilter) (ok, indexed bool) {
	first := m.seg(0)
	if len(p) < len(m.lit) || !bytes.HasPrefix(p, first) {
		return false, true
	}
	last := len(m.ends) - 1 // >= 1
	if m.anchored {
		if !bytes.HasSuffix(p, m.seg(last)) {
			return false, true
		}
		last-- // and checked below
	}
	pos, kid := len(first), m.kfrom
	for k := 1; k <= last; k++ {
		seg := m.seg(k)
		var id int32
		if len(seg) >= 2 {
			if f == nil || kid >= m.kto {
				return false, false
			}
			id = f.ids[kid]
			kid++
		}
		i := x.next(p, seg, id, f, pos)
		if i < 0 {
			return false, true
		}
		pos = i + len(seg)
	}
	if m.anchored {
		return len(p)-pos >= len(m.seg(last+1)), true
	}
	return true, true
}

// firstMatch returns the matcher of highest precedence that matches the
// canonical path p (which starts with '/') and beats best, or nil. As the
// matchers are in precedence order, it stops at the first that cannot
// beat best.
func (pt *part) firstMatch(ps *pathSet, lz *lazyIndex, best *matcher) *matcher {
	p, ix := ps.p, pt.index
	if ix == nil {
		for i := range pt.matchers {
			m := &pt.matchers[i]
			if !m.beats(best) {
				return nil
			}
			if ps.matches(m, lz) {
				return m
			}
		}
		return nil
	}
	var keyed []int32
	if len(p) >= 2 {
		keyed = ix.keyed[ix.start[p[1]]:ix.start[int(p[1])+1]]
	}
	wild := ix.wild
	for len(wild) > 0 || len(keyed) > 0 {
		var i int32
		if len(keyed) == 0 || len(wild) > 0 && wild[0] < keyed[0] {
			i, wild = wild[0], wild[1:]
		} else {
			i, keyed = keyed[0], keyed[1:]
		}
		m := &pt.matchers[i]
		if !m.beats(best) {
			return nil
		}
		if ps.matches(m, lz) {
			return m
		}
	}
	return nil
}

// Match returns the rule of highest precedence of the group made of the
// parts gparts (indexes of the groups as written, in file order) that
// matches the canonical path p (see [CanonPath]; it starts with '/'),
// and whether there is one: the longest pattern, Allow over Disallow
// among equals, else the earlier rule. It allocates nothing but, for
// paths past its direct budget, scratch space from a pool.
func (r *File) Match(gparts []uint32, p []byte) (Rule, bool) { return r.matchIn(r.idx, gparts, p) }

// matchIn is match with the file index fi.
func (r *File) matchIn(fi *fileIndex, gparts []uint32, p []byte) (Rule, bool) {
	if fi != nil && fi.segs != nil {
		if fi.segs.nkeys <= maxKeys {
			return r.matchFiltered(fi, gparts, p)
		}
		return r.matchPooled(fi, gparts, p)
	}
	ps := pathSet{p: p, fi: fi}
	rule, ok := r.matchSet(fi, gparts, &ps)
	if ps.over {
		x := fi.indexed(r)
		rule, ok = r.matchIn(x, gparts, p)
		fi.built.Put(x)
	}
	return rule, ok
}

// matchFiltered is match for a file with a [segFilter]: it keeps the set of
// keys found on its stack, which only such files pay to clear.
func (r *File) matchFiltered(fi *fileIndex, gparts []uint32, p []byte) (Rule, bool) {
	var found [maxKeys / 64]uint64
	ps := pathSet{p: p, fi: fi, found: found[:(fi.segs.nkeys+63)>>6]}
	return r.matchSet(fi, gparts, &ps)
}

// matchPooled is match for a file with more keys than fit on the stack.
func (r *File) matchPooled(fi *fileIndex, gparts []uint32, p []byte) (Rule, bool) {
	x := fi.pool.Get().(*occIndex)
	defer fi.pool.Put(x)
	words := (fi.segs.nkeys + 63) >> 6
	if cap(x.found) < words {
		x.found = make([]uint64, words)
	}
	ps := pathSet{p: p, fi: fi, found: x.found[:words]}
	return r.matchSet(fi, gparts, &ps)
}

// matchSet is match with the path's [pathSet].
func (r *File) matchSet(fi *fileIndex, gparts []uint32, ps *pathSet) (Rule, bool) {
	lz := lazyIndex{fi: fi}
	defer lz.release()
	return r.matchWith(gparts, ps, &lz)
}

// matchWith is matchSet with the decision's [lazyIndex], which the usage
// lines of the decision share.
func (r *File) matchWith(gparts []uint32, ps *pathSet, lz *lazyIndex) (Rule, bool) {
	var best *matcher
	var won matcher // best, for a compact part's record
	var from *part  // the part of best
	rec := -1       // the index of best in from's records, for a compact part
	for _, w := range gparts {
		pt := &r.parts[w]
		// Among equals the earlier part wins, so only a strictly better
		// match replaces best.
		if pt.compact() {
			if i := pt.firstCompact(r, ps, lz, best); i >= 0 {
				c := &r.crs[int(pt.from)+i]
				won = matcher{prio: int(c.prio), allow: c.flags()&crAllow != 0}
				best, from, rec = &won, pt, i
			}
		} else if m := pt.firstMatch(ps, lz, best); m != nil {
			best, from, rec = m, pt, -1
		}
	}
	switch {
	case best == nil:
		return Rule{}, false
	case rec >= 0:
		rule, off := from.crRule(r, rec)
		rule.Line = r.lineAt(off)
		return rule, true
	}
	return from.rules[best.rule], true
}
