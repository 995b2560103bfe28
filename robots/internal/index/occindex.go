package index

import (
	"bytes"
	"sync"
)

// fileIndex is what the decisions of one file share: the [segFilter] over
// the keys of all its wildcard matchers (nil when few have one) and a pool
// of the scratch space of decisions that build an [occIndex].
type fileIndex struct {
	segs   *segFilter
	pool   sync.Pool // of *occIndex
	budget int       // directBudget; tests lower it
	// eager is the length of path from which the first scan of the
	// filter also indexes the path (0: never): one pass of the automaton
	// then serves both.
	eager int
	// lazy: the file has keyed compact parts only, and no filter; a
	// decision past the budget starts over with [fileIndex.indexed].
	lazy bool
	// built holds the file indexes with a filter that such decisions
	// built, for the next: the pool drops them when the heap is collected.
	built sync.Pool
}

// index builds the [fileIndex] of r, which all its groups share, from its
// parts (nil for the groups that name no agent) and the parts of the
// paths of its usage lines: usage paths are filtered and indexed as Allow
// and Disallow patterns are.
func (r *File) index(parts []*part, paths []*Paths) {
	all := parts[:len(parts):len(parts)]
	for _, s := range paths {
		all = append(all, &s.pt)
	}
	compiled, keyed := len(all) > len(parts), false
	for _, pt := range parts {
		compiled = compiled || pt != nil && !pt.compact()
		keyed = keyed || pt != nil && pt.keyed()
	}
	if !compiled && !keyed {
		return // compact parts need no index
	}
	fi := &fileIndex{budget: directBudget}
	fi.pool.New = func() any { return new(occIndex) }
	if owners, size := assignKeys(r, all); owners >= segFilterMin {
		if compiled || size > lazyKeyBytes {
			fi.segs = newFileFilter(r, all)
		} else {
			fi.lazy = true
		}
	}
	r.idx = fi
}

// lazyKeyBytes is the size of the keys of a file of compact parts only
// up to which the file keeps no [segFilter]: the few decisions that
// search their path directly for more than the budget build one for
// themselves (see [fileIndex.indexed]), which costs about as much as that
// search.
const lazyKeyBytes = keyedText

// indexed returns a file index of the keyed parts of r, whose file index
// fi is lazy: with its [segFilter], and a budget of 0, so that a decision
// indexes its path at once. The caller puts it back into fi.built.
func (fi *fileIndex) indexed(r *File) *fileIndex {
	if x, ok := fi.built.Get().(*fileIndex); ok {
		return x
	}
	parts := make([]*part, len(r.parts))
	for i := range r.parts {
		parts[i] = &r.parts[i]
	}
	x := &fileIndex{segs: newFileFilter(r, parts)}
	x.pool.New = func() any { return new(occIndex) }
	return x
}

// directBudget is how many octets of path a decision searches directly
// (one search of the path per wildcard matcher tried) before it builds an
// [occIndex] of the path: a few searches are cheaper than building one, a
// few thousand cost far more than it.
const directBudget = 256 << 10

// occIndex answers, for one path, where a literal segment next occurs at
// or after a position, in O(log len(path)) steps whatever the segment, so
// that the greedy match of a pattern costs O(segments·log len(path))
// rather than a search of the path per segment.
//
// One-octet segments are looked up in the positions of each octet,
// sorted. Longer segments are keys of the file's [segFilter]: one scan of
// the path with it yields, for each position where a key ends, the longest
// such key. A key occurs wherever a key of its subtree in the dictionary
// tree (a key's parent is its longest proper suffix that is a key) is the
// longest: the ends are grouped by the keys' preorder numbers, so the
// occurrences of a key are one range of them. For a key with no suffix
// key below it, that range is already sorted by position; otherwise a
// wavelet matrix over the ends gives the first end at or after a position
// within a range.
type occIndex struct {
	n     int        // the length of the path
	bpos  []int32    // positions of the octets of p, grouped by octet
	bfrom [257]int32 // octet c's positions are bpos[bfrom[c]:bfrom[c+1]]
	// keyed holds the preorder number of the longest key ending at each
	// end in ends, both sorted by preorder number, then end.
	keyed, ends   []int32
	keyed2, ends2 []int32 // sorting scratch
	wm            wavelet
	wmBuilt       bool
	found         []uint64 // the keys found, for a filter of more than maxKeys
}

// build indexes p; f may be nil.
func (x *occIndex) build(p []byte, f *segFilter) { x.buildFound(p, f, nil) }

// buildFound is build that also sets in found, when not nil, the keys of
// f that occur in p, as [segFilter.scan] does, in the same pass.
func (x *occIndex) buildFound(p []byte, f *segFilter, found []uint64) {
	x.n = len(p)
	x.wmBuilt = false
	var count [257]int32
	for _, c := range p {
		count[int(c)+1]++ // int: octet 255 too
	}
	for c := 1; c < 257; c++ {
		count[c] += count[c-1]
	}
	x.bfrom = count
	x.bpos = grow(x.bpos, len(p))
	for i, c := range p {
		x.bpos[count[c]] = int32(i)
		count[c]++
	}
	x.keyed, x.ends = x.keyed[:0], x.ends[:0]
	if f == nil {
		return
	}
	f.scanLongest(p, x, found)
	x.sortByKey(int32(f.nkeys))
}

// grow returns s resized to n, reallocated only when too small.
func grow(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

// sortByKey sorts keyed and ends by preorder number, keeping the order of
// the ends (increasing) among equals: a radix sort, 8 bits a pass.
func (x *occIndex) sortByKey(nkeys int32) {
	n := len(x.keyed)
	x.keyed2, x.ends2 = grow(x.keyed2, n), grow(x.ends2, n)
	for shift := uint(0); nkeys>>shift > 0; shift += 8 {
		var count [257]int32
		for _, k := range x.keyed {
			count[(k>>shift)&255+1]++
		}
		for c := 1; c < 257; c++ {
			count[c] += count[c-1]
		}
		for i, k := range x.keyed {
			d := (k >> shift) & 255
			x.keyed2[count[d]], x.ends2[count[d]] = k, x.ends[i]
			count[d]++
		}
		x.keyed, x.keyed2 = x.keyed2, x.keyed
		x.ends, x.ends2 = x.ends2, x.ends
	}
}

// searchGE returns the first index of a (sorted) whose value is >= v,
// len(a) if none.
func searchGE(a []int32, v int32) int {
	lo, hi := 0, len(a)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if a[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// nearby is how many positions from where it starts a search looks at
// directly, before it looks up the index: patterns such as "*a*a*a" find
// their segments right away.
const nearby = 32

// next returns the first position at or after pos where seg starts in p,
// the path indexed, or -1; id is seg's key id when it has 2 octets or
// more.
func (x *occIndex) next(p, seg []byte, id int32, f *segFilter, pos int) int {
	if w := p[pos:min(pos+len(seg)-1+nearby, len(p))]; len(w) >= len(seg) {
		if i := bytes.Index(w, seg); i >= 0 {
			return pos + i
		}
	}
	if len(seg) == 1 {
		ps := x.bpos[x.bfrom[seg[0]]:x.bfrom[int(seg[0])+1]]
		if i := searchGE(ps, int32(pos)); i < len(ps) {
			return int(ps[i])
		}
		return -1
	}
	end := int32(pos + len(seg) - 1)
	if int(end) >= x.n {
		return -1
	}
	pre, size := f.pre[id], f.size[id]
	lo := searchGE(x.keyed, pre)
	hi := lo + searchGE(x.keyed[lo:], pre+size)
	if size == 1 || lo == hi || x.keyed[lo] == x.keyed[hi-1] {
		// The ends of one key, sorted.
		ends := x.ends[lo:hi]
		if i := searchGE(ends, end); i < len(ends) {
			return int(ends[i]) - len(seg) + 1
		}
		return -1
	}
	if !x.wmBuilt {
		x.wm.build(x.ends, x.n, x.keyed2, x.ends2) // free once sorted
		x.wmBuilt = true
	}
	if e := x.wm.nextValue(lo, hi, end); e >= 0 {
		return int(e) - len(seg) + 1
	}
	return -1
}
