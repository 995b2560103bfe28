package index

import (
	"bytes"
	"sort"
)

// matcher is a compiled Allow or Disallow pattern.
//
// Patterns and paths are compared in a canonical percent-encoding (see
// [appendCanon]). The pattern is split at its '*' wildcards into literal
// segments; the first must be a prefix of the path, the others are found
// left to right, and with anchored set the last must end the path. Greedy
// leftmost matching is exact for patterns whose only wildcard is '*', and
// costs O(len(path)·len(pattern)) at worst.
type matcher struct {
	// lit holds the literal segments one after the other; segment k is
	// lit[ends[k-1]:ends[k]] (with ends[-1] = 0). Only the first segment
	// and, when anchored, the last can be empty.
	lit      []byte
	ends     []int32
	anchored bool // the pattern ended in '$'
	// The ids of the matcher's keys in its file's [segFilter] (see
	// [newFileFilter]) are ids[kfrom:kto].
	kfrom, kto int32
	need       byteSet // the octets of lit: a path lacking one cannot match
	prio       int     // precedence: length of the pattern in octets, non-ASCII octets counted %-encoded
	allow      bool
	rule       int // index into the part's rules
}

// byteSet is a set of octets.
type byteSet [4]uint64

func (s *byteSet) add(b []byte) {
	for _, c := range b {
		s[c>>6] |= 1 << (c & 63)
	}
}

// within reports whether every octet of s is in t.
func (s *byteSet) within(t *byteSet) bool {
	return s[0]&^t[0]|s[1]&^t[1]|s[2]&^t[2]|s[3]&^t[3] == 0
}

// seg returns segment k.
func (m *matcher) seg(k int) []byte {
	start := int32(0)
	if k > 0 {
		start = m.ends[k-1]
	}
	return m.lit[start:m.ends[k]]
}

// match reports whether m matches the canonical path p.
func (m *matcher) match(p []byte) bool {
	if len(p) < len(m.lit) {
		return false
	}
	first := m.seg(0)
	if !bytes.HasPrefix(p, first) {
		return false
	}
	last := len(m.ends) - 1
	if last == 0 {
		return !m.anchored || len(p) == len(first)
	}
	pos := len(first)
	// Cheap checks on the last segment first, so that most long patterns
	// that do not match fail in linear time.
	s := m.seg(last)
	if m.anchored {
		if !bytes.HasSuffix(p, s) {
			return false
		}
	} else if last > 1 && bytes.Index(p[pos:], s) < 0 {
		return false
	}
	for k := 1; k < last; k++ {
		mid := m.seg(k)
		var i int
		if len(mid) == 1 {
			i = bytes.IndexByte(p[pos:], mid[0])
		} else {
			i = bytes.Index(p[pos:], mid)
		}
		if i < 0 {
			return false
		}
		pos += i + len(mid)
	}
	if m.anchored {
		return len(p)-pos >= len(s) // and the suffix was checked above
	}
	return bytes.Index(p[pos:], s) >= 0
}

// universal reports whether m matches every path (all paths start with "/"):
// "/", "/*", "*", "*/" and the like.
func (m *matcher) universal() bool {
	return !m.anchored && (len(m.lit) == 0 || len(m.lit) == 1 && m.lit[0] == '/')
}

// canMatch reports whether some path matches m.
func (m *matcher) canMatch() bool {
	s0 := m.seg(0)
	return len(s0) == 0 || s0[0] == '/'
}

// priority returns the precedence of a pattern: its length in octets after
// Google's normalisation, which percent-encodes non-ASCII octets.
func priority(pattern string) int {
	n := len(pattern)
	for i := 0; i < len(pattern); i++ {
		if pattern[i] >= 0x80 {
			n += 2
		}
	}
	return n
}

// compile compiles pattern (non-empty) into a matcher.
func compile(pattern string, allow bool, rule int) matcher {
	return compileInto(pattern, allow, rule, nil)
}

// compileInto is compile with the matcher's segments written into the
// arrays of sc when they are large enough, which then keeps the arrays
// of the result: a caller that only inspects each matcher reuses them.
func compileInto(pattern string, allow bool, rule int, sc *matcher) matcher {
	m := matcher{prio: priority(pattern), allow: allow, rule: rule}
	end := len(pattern)
	if pattern[end-1] == '$' {
		m.anchored = true
		end--
	}
	stars := 0
	for i := 0; i < end; i++ {
		if pattern[i] == '*' {
			stars++
		}
	}
	if sc != nil && cap(sc.lit) >= m.prio && cap(sc.ends) > stars {
		m.lit, m.ends = sc.lit[:0], sc.ends[:0]
	} else {
		m.lit, m.ends = make([]byte, 0, m.prio), make([]int32, 0, stars+1)
	}
	for i := 0; i < end; i++ {
		c := pattern[i]
		if c == '*' {
			// The first segment is kept even when empty; runs of '*'
			// are one wildcard.
			if len(m.ends) == 0 || int(m.ends[len(m.ends)-1]) < len(m.lit) {
				m.ends = append(m.ends, int32(len(m.lit)))
			}
			continue
		}
		var n int
		m.lit, n = appendCanonAt(m.lit, pattern[:end], i)
		i += n - 1
	}
	// The last segment; empty after a trailing '*', where it only matters
	// when anchored ("/a*$").
	if len(m.ends) == 0 || int(m.ends[len(m.ends)-1]) < len(m.lit) || m.anchored && stars > 0 {
		m.ends = append(m.ends, int32(len(m.lit)))
	}
	m.need.add(m.lit)
	if sc != nil {
		sc.lit, sc.ends = m.lit, m.ends
	}
	return m
}

// part is the rules of one group as written: compact (see
// [Builder.initCompact]), its records a range of its file's, or compiled.
type part struct {
	from, to uint32 // a compact part's records are its file's crs[from:to]
	*partX          // nil for a compact part without a cindex
}

// partX is what a part holds besides its records, when it holds anything.
type partX struct {
	cix           *cindex  // a compact part's, nil for a small or a large one
	tab           *ptable  // a large compact part's (see [ptableMin]), else nil
	keys          *recKeys // a keyed compact part's (see [part.keyed]), else nil
	*compiledPart          // nil for a compact part
}

// compact reports whether pt is compact rather than compiled.
func (pt *part) compact() bool { return pt.partX == nil || pt.compiledPart == nil }

// compiledPart is the compiled form of a part.
type compiledPart struct {
	rules []Rule
	// matchers are the non-empty rules compiled, ordered by decreasing
	// precedence (Allow first among equals, then file order), so the first
	// that matches decides.
	matchers []matcher
	index    *matchIndex // nil for a small group
}

// newPart compiles rules. Empty patterns are left out: they match with
// precedence 0 and never decide. As in Google's matcher, an Allow of
// ".../index.htm..." also allows its directory (".../$").
func newPart(rules []Rule) *part {
	pt := &part{partX: &partX{compiledPart: &compiledPart{rules: rules, matchers: make([]matcher, 0, len(rules))}}}
	for i, r := range rules {
		if r.Pattern == "" {
			continue
		}
		pt.matchers = append(pt.matchers, compile(r.Pattern, r.Allow, i))
		if r.Allow {
			if j := lastSlash(r.Pattern); j >= 0 && hasPrefix(r.Pattern[j:], "/index.htm") {
				pt.matchers = append(pt.matchers, compile(r.Pattern[:j+1]+"$", true, i))
			}
		}
	}
	sort.SliceStable(pt.matchers, func(i, j int) bool { return pt.matchers[i].before(&pt.matchers[j]) })
	pt.matchers = dedupMatchers(pt.matchers)
	if len(pt.matchers) > indexMin {
		pt.index = newMatchIndex(pt.matchers)
	}
	return pt
}

// dedupMatchers removes from ms, sorted by precedence, every matcher that
// is identical to an earlier one (same compiled pattern, precedence and
// verdict): the earlier wins every tie, so the later never decides. Small
// groups are left as they are. A file
// that repeats a short, costly pattern thousands of times thus costs one
// match per decision.
func dedupMatchers(ms []matcher) []matcher {
	if len(ms) <= indexMin {
		return ms // a few duplicates cost little
	}
	// Kept matchers by hash; a chain of indexes into out resolves
	// collisions.
	first := make(map[uint64]int32, len(ms))
	next := make([]int32, 0, len(ms))
	out := ms[:0]
	for _, m := range ms {
		h := m.hash()
		dup := false
		i, ok := first[h]
		for ok && i >= 0 && !dup {
			dup = out[i].same(&m)
			i = next[i]
		}
		if dup {
			continue
		}
		if j, ok := first[h]; ok {
			next = append(next, j)
		} else {
			next = append(next, -1)
		}
		first[h] = int32(len(out))
		out = append(out, m)
	}
	return out
}

// hash returns an FNV-1a hash of m's compiled form and verdict.
func (m *matcher) hash() uint64 {
	h := uint64(14695981039346656037)
	mix := func(b byte) { h = (h ^ uint64(b)) * 1099511628211 }
	for _, c := range m.lit {
		mix(c)
	}
	for _, e := range m.ends {
		mix(byte(e))
		mix(byte(e >> 8))
	}
	mix(byte(m.prio))
	mix(byte(m.prio >> 8))
	if m.anchored {
		mix(1)
	}
	if m.allow {
		mix(2)
	}
	return h
}

// same reports whether m and o have the same compiled form, precedence and
// verdict.
func (m *matcher) same(o *matcher) bool {
	if m.prio != o.prio || m.allow != o.allow || m.anchored != o.anchored ||
		len(m.ends) != len(o.ends) || !bytes.Equal(m.lit, o.lit) {
		return false
	}
	for i := range m.ends {
		if m.ends[i] != o.ends[i] {
			return false
		}
	}
	return true
}

// beats reports whether m would replace best (nil for none) as the
// deciding matcher of an earlier part: it must have a higher precedence,
// or the same and be an Allow where best is a Disallow.
func (m *matcher) beats(best *matcher) bool {
	return best == nil || m.prio > best.prio || m.prio == best.prio && m.allow && !best.allow
}

// before reports whether m takes precedence over o: a longer pattern, else
// Allow over Disallow, else the earlier rule (of the same part).
func (m *matcher) before(o *matcher) bool {
	if m.prio != o.prio {
		return m.prio > o.prio
	}
	if m.allow != o.allow {
		return m.allow
	}
	return m.rule < o.rule
}

// indexMin is the number of matchers above which a group gets a
// [matchIndex]; fewer are scanned one by one.
const indexMin = 8

// matchIndex narrows the matchers to try for a path by the path's second
// byte (the first is always '/'). keyed[start[c]:start[c+1]] are the
// indexes of the matchers whose pattern starts with "/" followed by c; wild
// are those that start with a wildcard or are just "/". Both lists are in
// precedence order. Patterns that cannot match any path (not starting with
// '/' or '*') are in neither.
type matchIndex struct {
	wild  []int32
	start [257]int32
	keyed []int32
}

func newMatchIndex(ms []matcher) *matchIndex {
	ix := &matchIndex{}
	var count [256]int32
	for i := range ms {
		s0 := ms[i].seg(0)
		switch {
		case len(s0) < 2 && ms[i].canMatch():
			ix.wild = append(ix.wild, int32(i))
		case len(s0) >= 2 && s0[0] == '/':
			count[s0[1]]++
		}
	}
	for c := 0; c < 256; c++ {
		ix.start[c+1] = ix.start[c] + count[c]
	}
	ix.keyed = make([]int32, ix.start[256])
	next := ix.start
	for i := range ms {
		if s0 := ms[i].seg(0); len(s0) >= 2 && s0[0] == '/' {
			ix.keyed[next[s0[1]]] = int32(i)
			next[s0[1]]++
		}
	}
	return ix
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

// StackPath is the length of a canonical path that [CanonPath] builds
// without allocating when the path needs normalising.
const StackPath = 2048

// CanonPath returns path in canonical form (with a "/" prepended when slash
// is set): path itself, read only, when it is canonical already, else the
// normalised copy built in buf (or on the heap when it outgrows buf).
func CanonPath(buf *[StackPath]byte, path string, slash bool) []byte {
	if !slash && isCanonical(path) {
		return bytesOf(path) // read only
	}
	p := buf[:0]
	if slash {
		p = append(p, '/')
	}
	return appendCanon(p, path)
}
