package robots

import (
	"bytes"
	"sort"
)

// matcher is a compiled Allow or Disallow pattern.
//
// Patterns and paths are compared in a canonical percent-encoding (see
// appendCanon). The pattern is split at its '*' wildcards into literal
// segments; the first must be a prefix of the path, the others are found
// left to right, and with anchored set the last must end the path. Greedy
// leftmost matching is exact for patterns whose only wildcard is '*', and
// costs O(len(path)·len(pattern)) at worst.
type matcher struct {
	segs     [][]byte // literal segments between wildcards; len(segs) >= 1
	anchored bool     // the pattern ended in '$'
	minLen   int      // sum of the segments' lengths
	prio     int      // precedence: length of the pattern in octets, non-ASCII octets counted %-encoded
	allow    bool
	rule     int // index into Group.Rules
}

// match reports whether m matches the canonical path p.
func (m *matcher) match(p []byte) bool {
	if len(p) < m.minLen {
		return false
	}
	segs := m.segs
	if !bytes.HasPrefix(p, segs[0]) {
		return false
	}
	if len(segs) == 1 {
		return !m.anchored || len(p) == len(segs[0])
	}
	pos := len(segs[0])
	last := len(segs) - 1
	// Cheap checks on the last segment first, so that most long patterns
	// that do not match fail in linear time.
	s := segs[last]
	if m.anchored {
		if !bytes.HasSuffix(p, s) {
			return false
		}
	} else if last > 1 && bytes.Index(p[pos:], s) < 0 {
		return false
	}
	for _, s := range segs[1:last] {
		i := bytes.Index(p[pos:], s)
		if i < 0 {
			return false
		}
		pos += i + len(s)
	}
	if m.anchored {
		return len(p)-pos >= len(s) // and the suffix was checked above
	}
	return bytes.Index(p[pos:], s) >= 0
}

// universal reports whether m matches every path (all paths start with "/").
func (m *matcher) universal() bool {
	if m.anchored || m.minLen > 1 {
		return false
	}
	// At most one segment is non-empty, and it has one byte: it must be
	// the '/' every path starts with ("/", "/*", "*", "*/").
	for _, s := range m.segs {
		if len(s) == 1 && s[0] != '/' {
			return false
		}
	}
	return true
}

// canMatch reports whether some path matches m.
func (m *matcher) canMatch() bool {
	s0 := m.segs[0]
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
	m := matcher{prio: priority(pattern), allow: allow, rule: rule}
	end := len(pattern)
	if pattern[end-1] == '$' {
		m.anchored = true
		end--
	}
	// All segments share one buffer; bounds[k] is where segment k ends.
	buf := make([]byte, 0, m.prio)
	bounds := make([]int, 0, 4)
	for i := 0; i < end; i++ {
		c := pattern[i]
		if c == '*' {
			bounds = append(bounds, len(buf))
			continue
		}
		if c == '%' && i+2 < end && isHex(pattern[i+1]) && isHex(pattern[i+2]) {
			c = unhex(pattern[i+1])<<4 | unhex(pattern[i+2])
			i += 2
		}
		buf = appendOctet(buf, c)
	}
	bounds = append(bounds, len(buf))
	// Runs of '*' are one wildcard, and a trailing unanchored '*' adds
	// nothing.
	m.segs = make([][]byte, 0, len(bounds))
	m.segs = append(m.segs, buf[:bounds[0]:bounds[0]])
	for k := 1; k < len(bounds); k++ {
		seg := buf[bounds[k-1]:bounds[k]:bounds[k]]
		if len(seg) > 0 || k == len(bounds)-1 && m.anchored {
			m.segs = append(m.segs, seg)
		}
	}
	for _, s := range m.segs {
		m.minLen += len(s)
	}
	return m
}

// part is one group as written, with its rules compiled.
type part struct {
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
	pt := &part{rules: rules}
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
	if len(pt.matchers) > indexMin {
		pt.index = newMatchIndex(pt.matchers)
	}
	return pt
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
// matchIndex; fewer are scanned one by one.
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
		s0 := ms[i].segs[0]
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
		if s0 := ms[i].segs[0]; len(s0) >= 2 && s0[0] == '/' {
			ix.keyed[next[s0[1]]] = int32(i)
			next[s0[1]]++
		}
	}
	return ix
}

// firstMatch returns the matcher of highest precedence that matches the
// canonical path p (which starts with '/'), or nil.
func (pt *part) firstMatch(p []byte) *matcher {
	ix := pt.index
	if ix == nil {
		for i := range pt.matchers {
			if m := &pt.matchers[i]; m.match(p) {
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
		if m := &pt.matchers[i]; m.match(p) {
			return m
		}
	}
	return nil
}

// match returns the rule of highest precedence of all parts of g that
// matches the canonical path p, and whether there is one.
func (g *Group) match(p []byte) (Rule, bool) {
	var best *matcher
	var rule Rule
	for _, pt := range g.parts {
		// Among equals the earlier part wins, so only a strictly better
		// match replaces best.
		if m := pt.firstMatch(p); m != nil && (best == nil || m.prio > best.prio || m.prio == best.prio && m.allow && !best.allow) {
			best, rule = m, pt.rules[m.rule]
		}
	}
	return rule, best != nil
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

// allowsNothing reports whether a Disallow rule matches every path and no
// Allow rule that could match some path takes precedence over it.
func (g *Group) allowsNothing() bool {
	best := -1
	for _, pt := range g.parts {
		for i := range pt.matchers {
			if m := &pt.matchers[i]; !m.allow && m.universal() && m.prio > best {
				best = m.prio
			}
		}
	}
	if best < 0 {
		return false
	}
	for _, pt := range g.parts {
		for i := range pt.matchers {
			if m := &pt.matchers[i]; m.allow && m.prio >= best && m.canMatch() {
				return false
			}
		}
	}
	return true
}

// stackPath is the length of a canonical path decide handles without
// allocating when the path needs normalising.
const stackPath = 2048

// decide matches path (with a "/" prepended when slash is set) against the
// group for agent.
func (r *Robots) decide(agent, path string, slash bool) Decision {
	g, tok := r.lookup(agent)
	var p []byte
	if !slash && isCanonical(path) {
		p = bytesOf(path) // read only
	} else {
		var buf [stackPath]byte
		p = buf[:0]
		if slash {
			p = append(p, '/')
		}
		p = appendCanon(p, path)
	}
	if string(p) == "/robots.txt" {
		return Decision{Allowed: true, Rule: Rule{Allow: true, Pattern: "/robots.txt"}, Group: tok}
	}
	if g == nil {
		return Decision{Allowed: true}
	}
	if rule, ok := g.match(p); ok {
		return Decision{Allowed: rule.Allow, Rule: rule, Group: tok}
	}
	return Decision{Allowed: true, Group: tok}
}
