package index

import (
	"encoding/binary"
	"slices"
	"unsafe"

	"github.com/robotsgate/robotsgate/robots/heapsize"
)

// FirstMatch matches a path against a list of wildcard patterns in which
// the first that matches wins (package robots' FirstMatch). Its patterns are compiled, filtered and indexed as a robots.txt
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
	// same maps the number of a pattern kept to those of the later
	// patterns identical to it, which are left out (nil when none is).
	same map[int][]int
	// reach holds, for each pattern number, which paths that start with
	// "/" it can match: [reachNone], [reachSome] or [reachEvery].
	reach []uint8
}

// What a pattern of a [FirstMatch] can match ([FirstMatch.reach]).
const (
	reachNone  uint8 = iota // no path that starts with "/"
	reachSome               // some
	reachEvery              // every one ("/", "/*", "*" and the like)
)

// MatchesEvery reports whether pattern number i matches every path that
// starts with "/" ("/", "/*", "*").
func (f *FirstMatch) MatchesEvery(i int) bool {
	return i >= 0 && i < len(f.reach) && f.reach[i] == reachEvery
}

// MatchesSome reports whether pattern number i can match some path that
// starts with "/".
func (f *FirstMatch) MatchesSome(i int) bool {
	return i >= 0 && i < len(f.reach) && f.reach[i] != reachNone
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
// earlier one can never be the first to match, and is left out (and
// reported with it by [FirstMatch.AllWork]).
func NewFirstMatch(pats []Segments) *FirstMatch {
	return newFirstMatch(len(pats), func(i int) matcher { return segmentsMatcher(pats[i], i) })
}

// NewPatternMatch is [NewFirstMatch] for robots.txt patterns as written
// (the values of Allow and Disallow lines), compiled as a [Builder]
// compiles them: against [CanonicalPath] of a path they match as
// robots' MatchPath matches the rule (but for its allowance of
// /robots.txt). An empty pattern matches no path that starts with "/".
// A pattern written as an earlier one is compiled once.
func NewPatternMatch(patterns []string) *FirstMatch {
	done := make(map[string]matcher, len(patterns))
	return newFirstMatch(len(patterns), func(i int) matcher {
		pat := patterns[i]
		if m, ok := done[pat]; ok {
			return m // left out as a duplicate
		}
		var m matcher
		if pat == "" {
			m = segmentsMatcher(Segments{Segs: []string{""}, Anchored: true}, i)
		} else {
			m = compile(pat, false, i)
		}
		done[pat] = m
		return m
	})
}

// newFirstMatch compiles the n patterns of compileAt, in order.
func newFirstMatch(n int, compileAt func(i int) matcher) *FirstMatch {
	f := &FirstMatch{}
	cp := &compiledPart{matchers: make([]matcher, 0, n)}
	f.pt.partX = &partX{compiledPart: cp}
	seen := make(map[string]int, n)
	f.reach = make([]uint8, n)
	var key []byte
	for i := range n {
		m := compileAt(i)
		switch {
		case m.universal():
			f.reach[i] = reachEvery
		case m.canMatch():
			f.reach[i] = reachSome
		}
		key = m.appendKey(key[:0])
		if first, dup := seen[string(key)]; dup {
			if f.same == nil {
				f.same = make(map[int][]int)
			}
			f.same[first] = append(f.same[first], i)
			continue
		}
		seen[string(key)] = i
		cp.matchers = append(cp.matchers, m)
	}
	if len(cp.matchers) > indexMin {
		cp.index = newMatchIndex(cp.matchers)
	}
	assignKeys(nil, []*part{&f.pt})
	f.idx = &fileIndex{segs: newFileFilter(nil, []*part{&f.pt}), budget: directBudget, eager: eagerPath}
	f.idx.pool.New = func() any { return new(occIndex) }
	f.size = heapsize.Alloc(unsafe.Sizeof(*f)) + f.pt.memSize() + heapsize.Alloc(unsafe.Sizeof(*f.idx)) + f.idx.segs.memSize() +
		int64(n-len(cp.matchers))*8 + int64(n)
	return f
}

// CanonicalPath returns path (path, params and query, as sent) in the
// canonical form robots' MatchPath matches, with "/" prepended when it
// does not start with one: the form the patterns of [NewPatternMatch]
// are matched against.
func CanonicalPath(path string) string {
	slash := path == "" || path[0] != '/'
	if !slash && isCanonical(path) {
		return path
	}
	b := make([]byte, 0, len(path)+16)
	if slash {
		b = append(b, '/')
	}
	return string(appendCanon(b, path))
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
	i, _, work := f.search(path, false, nil)
	return i, work
}

// AllWork appends to dst the numbers of all the patterns that match
// path, in the order given to [NewFirstMatch], with the count of work of
// [FirstMatch.IndexWork]. It costs what a decision that matches nothing
// costs: every pattern goes through the same filters and, past the
// direct budget, the same index of the path, never a search of the path
// per pattern.
func (f *FirstMatch) AllWork(path string, dst []int) ([]int, int) {
	_, dst, work := f.search(path, true, dst)
	return dst, work
}

// search is IndexWork (all unset) and AllWork (all set).
func (f *FirstMatch) search(path string, all bool, dst []int) (int, []int, int) {
	if f == nil {
		return -1, dst, 0
	}
	p := bytesOf(path)
	segs := f.idx.segs
	switch {
	case segs == nil:
		ps := pathSet{p: p, fi: f.idx}
		return f.first(&ps, all, dst)
	case segs.nkeys <= maxKeys:
		var found [maxKeys / 64]uint64
		ps := pathSet{p: p, fi: f.idx, found: found[:(segs.nkeys+63)>>6]}
		return f.first(&ps, all, dst)
	}
	x := f.idx.pool.Get().(*occIndex)
	defer f.idx.pool.Put(x)
	words := (segs.nkeys + 63) >> 6
	if cap(x.found) < words {
		x.found = make([]uint64, words)
	}
	ps := pathSet{p: p, fi: f.idx, found: x.found[:words]}
	return f.first(&ps, all, dst)
}

// first is search with the path's [pathSet]. The part's index narrows
// the patterns by the path's second octet only for a path that starts
// with "/", as the index assumes.
func (f *FirstMatch) first(ps *pathSet, all bool, dst []int) (int, []int, int) {
	lz := lazyIndex{fi: f.idx}
	var m *matcher
	switch {
	case all:
		dst = f.all(ps, &lz, dst)
	case len(ps.p) > 0 && ps.p[0] == '/':
		m = f.pt.firstMatch(ps, &lz, nil)
	default:
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
		return -1, dst, work
	}
	return m.rule, dst, work
}

// all appends to dst the numbers of the patterns that match the path of
// ps, in order: those the part's index leaves for a path that starts
// with "/" (as [part.firstMatch] walks them), else every pattern.
func (f *FirstMatch) all(ps *pathSet, lz *lazyIndex, dst []int) []int {
	from := len(dst)
	ms, ix := f.pt.matchers, f.pt.index
	try := func(m *matcher) {
		if ps.matches(m, lz) {
			dst = append(dst, m.rule)
			dst = append(dst, f.same[m.rule]...)
		}
	}
	if ix == nil || len(ps.p) == 0 || ps.p[0] != '/' {
		for i := range ms {
			try(&ms[i])
		}
	} else {
		var keyed []int32
		if len(ps.p) >= 2 {
			keyed = ix.keyed[ix.start[ps.p[1]]:ix.start[int(ps.p[1])+1]]
		}
		for _, i := range ix.wild {
			try(&ms[i])
		}
		for _, i := range keyed {
			try(&ms[i])
		}
	}
	slices.Sort(dst[from:])
	return dst
}
