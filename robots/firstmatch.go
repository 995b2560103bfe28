package robots

import (
	"encoding/binary"
	"unsafe"
)

// FirstMatch matches a path against a list of wildcard patterns in which
// the first that matches wins, for the path patterns of other protocols
// (TDMRep's tdmrep.json) that name a file order rather than a longest
// match. Its patterns are compiled, filtered and indexed as a robots.txt
// group's Allow and Disallow patterns are (see [pathSet.matches]): a path
// costs one pass of the keys' automaton, a few bit tests per pattern, and
// at most [directBudget] octets of direct search before the path is
// indexed, whatever the patterns; never a search of the path per pattern.
//
// Patterns and paths are taken as given: the caller puts both in its own
// canonical form first. A pattern is its literal runs between '*'
// wildcards; the first must be a prefix of the path, the others follow in
// order with anything between them, and an anchored pattern ends where the
// path ends.
type FirstMatch struct {
	pt   part
	idx  *fileIndex
	size int64
}

// eagerPath is the eager length of the index of a [FirstMatch] (see
// [fileIndex]): a path this long costs, if its patterns are hostile, more
// to search directly than to index.
const eagerPath = 2 << 10

// Segments is one pattern of a [FirstMatch]: the literal runs between its
// wildcards (len(Segs)-1 wildcards; Segs[0] is a prefix of the path, maybe
// empty) and whether it ends where the path ends.
type Segments struct {
	Segs     []string
	Anchored bool
}

// NewFirstMatch compiles pats, in order. A pattern identical to an
// earlier one can never be the first to match, and is left out.
func NewFirstMatch(pats []Segments) *FirstMatch {
	f := &FirstMatch{}
	cp := &compiledPart{matchers: make([]matcher, 0, len(pats))}
	f.pt.partX = &partX{compiledPart: cp}
	seen := make(map[string]struct{}, len(pats))
	var key []byte
	for i, s := range pats {
		m := segmentsMatcher(s, i)
		key = m.appendKey(key[:0])
		if _, dup := seen[string(key)]; dup {
			continue
		}
		seen[string(key)] = struct{}{}
		cp.matchers = append(cp.matchers, m)
	}
	if len(cp.matchers) > indexMin {
		cp.index = newMatchIndex(cp.matchers)
	}
	f.idx = &fileIndex{segs: newFileFilter([]*part{&f.pt}), budget: directBudget, eager: eagerPath}
	f.idx.pool.New = func() any { return new(occIndex) }
	f.size = alloc(unsafe.Sizeof(*f)) + f.pt.memSize() + alloc(unsafe.Sizeof(*f.idx)) + f.idx.segs.memSize()
	return f
}

// segmentsMatcher compiles s, pattern number i, as [compile] would its
// written form: the first segment kept even when empty, the empty ones
// between wildcards dropped, and an empty last one kept only when the
// pattern is anchored.
func segmentsMatcher(s Segments, i int) matcher {
	m := matcher{anchored: s.Anchored, rule: i}
	n := 0
	for _, seg := range s.Segs {
		n += len(seg)
	}
	m.lit, m.ends = make([]byte, 0, n), make([]int32, 0, len(s.Segs))
	last := len(s.Segs) - 1
	for k, seg := range s.Segs {
		if seg == "" && k > 0 && !(k == last && s.Anchored) {
			continue
		}
		m.lit = append(m.lit, seg...)
		m.ends = append(m.ends, int32(len(m.lit)))
	}
	if len(m.ends) == 0 {
		m.ends = append(m.ends, 0)
	}
	m.need.add(m.lit)
	return m
}

// appendKey appends to dst what identifies m's compiled pattern.
func (m *matcher) appendKey(dst []byte) []byte {
	if m.anchored {
		dst = append(dst, 1)
	} else {
		dst = append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(len(m.ends)))
	for _, e := range m.ends {
		dst = binary.AppendUvarint(dst, uint64(e))
	}
	return append(dst, m.lit...)
}

// MemSize estimates the heap f holds, in bytes.
func (f *FirstMatch) MemSize() int64 {
	if f == nil {
		return 0
	}
	return f.size
}

// Index returns the number of the first pattern (in the order given to
// [NewFirstMatch]) that matches path, or -1 when none does.
func (f *FirstMatch) Index(path string) int {
	i, _ := f.IndexWork(path)
	return i
}

// IndexWork is Index with a count of the work it did: the octets of the
// path scanned or searched directly, the patterns considered and the
// segments looked up in the path's index. Tests bound it, where a clock
// would measure the machine.
func (f *FirstMatch) IndexWork(path string) (int, int) {
	if f == nil {
		return -1, 0
	}
	p := bytesOf(path)
	segs := f.idx.segs
	switch {
	case segs == nil:
		ps := pathSet{p: p, fi: f.idx}
		return f.first(&ps)
	case segs.nkeys <= maxKeys:
		var found [maxKeys / 64]uint64
		ps := pathSet{p: p, fi: f.idx, found: found[:(segs.nkeys+63)>>6]}
		return f.first(&ps)
	}
	x := f.idx.pool.Get().(*occIndex)
	defer f.idx.pool.Put(x)
	words := (segs.nkeys + 63) >> 6
	if cap(x.found) < words {
		x.found = make([]uint64, words)
	}
	ps := pathSet{p: p, fi: f.idx, found: x.found[:words]}
	return f.first(&ps)
}

// first is IndexWork with the path's [pathSet]. The part's index narrows
// the patterns by the path's second octet only for a path that starts
// with "/", as the index assumes.
func (f *FirstMatch) first(ps *pathSet) (int, int) {
	lz := lazyIndex{fi: f.idx}
	var m *matcher
	if len(ps.p) > 0 && ps.p[0] == '/' {
		m = f.pt.firstMatch(ps, &lz, nil)
	} else {
		for i := range f.pt.matchers {
			if ps.matches(&f.pt.matchers[i], &lz) {
				m = &f.pt.matchers[i]
				break
			}
		}
	}
	work := ps.work + ps.tried
	if ps.scanned {
		work += len(ps.p)
	}
	if lz.ix != nil {
		work += len(ps.p)
	}
	lz.release()
	if m == nil {
		return -1, work
	}
	return m.rule, work
}
