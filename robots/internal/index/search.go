package index

import (
	"encoding/binary"
	"unsafe"

	"github.com/robotsgate/robotsgate/robots/heapsize"
)

// A decision that matches more than a group's rules (the usage lines'
// paths too) shares one search of its path: the paths of those lines are
// compiled as rules are ([CompilePaths]) and matched within the search
// ([Search.Longest]), so the path is scanned and indexed at most once.

// Paths is the compiled paths of a set of lines other than Allow and
// Disallow (a group's Content-Usage lines, say): patterns matched as
// theirs are, and filtered and indexed with the file's rules (see
// [Builder.Finish]).
type Paths struct {
	pt part
}

// CompilePaths compiles the patterns of rules (their Allow is ignored),
// numbered in the order given.
func CompilePaths(rules []Rule) *Paths { return &Paths{pt: *newPart(rules)} }

// MemSize estimates the heap ps holds.
func (ps *Paths) MemSize() int64 {
	if ps == nil {
		return 0
	}
	return heapsize.Alloc(unsafe.Sizeof(*ps)) + ps.pt.memSize()
}

// PatternKey appends to dst what identifies the compiled form of
// pattern: two patterns of the same key match the same paths with the
// same precedence, however they are spelled.
func PatternKey(dst []byte, pattern string) []byte {
	m := compile(pattern, false, 0)
	return binary.AppendUvarint(m.appendKey(dst), uint64(m.prio))
}

// samePrio returns the range of ms, sorted by decreasing precedence, whose
// precedence is prio.
func samePrio(ms []matcher, prio int) (lo, hi int) {
	a, b := 0, len(ms)
	for a < b {
		if h := int(uint(a+b) >> 1); ms[h].prio > prio {
			a = h + 1
		} else {
			b = h
		}
	}
	lo, b = a, len(ms)
	for a < b {
		if h := int(uint(a+b) >> 1); ms[h].prio >= prio {
			a = h + 1
		} else {
			b = h
		}
	}
	return lo, a
}

// Search is one decision's matching of a canonical path against a
// group's rules and the paths of other lines: what it learns about the
// path on first use (its octets, which keys of the file's filter it
// holds, its index) serves every match of the decision, and the direct
// searches of all count against one budget. [File.Begin] starts it,
// [Scratch.End] ends it.
//
// A search is two variables on its caller's stack: the Search holds the
// path, which may be on that stack too, and the [Scratch] what the search
// borrows from pools and gives back; kept apart, the path never escapes
// to the heap with them.
type Search struct {
	ps pathSet
}

// Scratch is what a [Search] borrows: its index of the path, the scratch
// of the keys found, and the file index built for a restart.
type Scratch struct {
	lz    lazyIndex
	f     *File
	fi    *fileIndex // the file's index, to which built goes back
	found *occIndex  // the pooled scratch of the keys found, when the file has a filter
	built *fileIndex // the file index built for a restart (see [Search.Restart])
}

// Begin starts a search of the canonical path p (see [CanonPath]) in r,
// a nil r having no rules. The caller keeps both results in variables
// of its own and ends the search with [Scratch.End].
func (r *File) Begin(p []byte) (Search, Scratch) {
	var fi *fileIndex
	if r != nil {
		fi = r.idx
	}
	sc := Scratch{f: r, fi: fi}
	return Search{ps: pathSet{p: p, fi: fi, found: sc.start(fi)}}, sc
}

// start readies sc for a search with the file index fi, and returns the
// scratch of the keys found, nil when fi has no filter.
func (sc *Scratch) start(fi *fileIndex) []uint64 {
	sc.lz = lazyIndex{fi: fi}
	if fi == nil || fi.segs == nil {
		return nil
	}
	x := fi.pool.Get().(*occIndex)
	words := (fi.segs.nkeys + 63) >> 6
	if cap(x.found) < words {
		x.found = make([]uint64, words)
	}
	sc.found = x
	return x.found[:words]
}

// Path returns the canonical path of s.
func (s *Search) Path() []byte { return s.ps.p }

// release gives back the scratch sc took from its file index's pool.
func (sc *Scratch) release() {
	fi := sc.lz.fi
	sc.lz.release()
	if sc.found != nil {
		fi.pool.Put(sc.found)
		sc.found = nil
	}
}

// Restart reports whether the search must start over: a file that keeps
// no filter stops a search whose direct searches spent its budget, with
// nothing found. Restart then starts s over with the file indexed, and
// the caller repeats its matches.
func (s *Search) Restart(sc *Scratch) bool {
	if !s.ps.over {
		return false
	}
	sc.release()
	x := sc.fi.indexed(sc.f)
	sc.built = x
	// Every field but the path, which stays where the caller put it.
	ps := &s.ps
	ps.done, ps.set, ps.fi, ps.found, ps.scanned = false, byteSet{}, x, sc.start(x), false
	ps.work, ps.tried, ps.over = 0, 0, false
	return true
}

// End releases what sc holds.
func (sc *Scratch) End() {
	sc.release()
	if sc.built != nil {
		sc.fi.built.Put(sc.built)
	}
}

// Match is [File.Match] within the search.
func (s *Search) Match(sc *Scratch, gparts []uint32) (Rule, bool) {
	return sc.f.matchWith(gparts, &s.ps, &sc.lz)
}

// Longest looks for the paths of ps of highest precedence that match the
// path: when that precedence is at least min, it calls yield with it and
// the number of each such path, in order.
func (s *Search) Longest(sc *Scratch, ps *Paths, min int, yield func(prio, rule int)) {
	pt := &ps.pt
	m := pt.firstMatch(&s.ps, &sc.lz, nil)
	if m == nil || m.prio < min {
		return
	}
	// Every path of the same precedence that matches counts: the
	// matchers are in precedence order, so they follow one another.
	lo, hi := samePrio(pt.matchers, m.prio)
	for j := lo; j < hi; j++ {
		if t := &pt.matchers[j]; t == m || s.ps.matches(t, &sc.lz) {
			yield(m.prio, t.rule)
		}
	}
}
