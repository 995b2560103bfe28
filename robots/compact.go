package robots

import (
	"bytes"
	"math"
	"slices"
	"sort"
)

// The compact form of a group as written. Most robots.txt files are a few
// hundred octets of plain prefix rules, for which the compiled matchers
// (see matcher) hold several times the file. A part whose patterns are
// canonical as written, with few wildcards and not too many rules, keeps
// instead one small record per rule pointing into the file's text, and is
// matched from there: a prefix comparison per rule, and for the few
// wildcard rules the greedy search of matcher.match over the pattern's
// segments as written. Its decisions are those of the compiled form:
// [part.initCompact] checks, rule by rule, that the segments read from the
// text are the compiled ones, and compiles the part otherwise.

// compactMax is the number of rules above which a part is compiled: a
// compact part tries its rules one by one.
const compactMax = 2048

// compactWild is the number of rules with a wildcard above which a part
// is compiled: each such rule may search the whole path, which the
// compiled form's filters and indexes avoid.
const compactWild = 128

// crule is one rule of a compact part: its pattern is src[off:off+n]
// (without the final '$' of an anchored pattern), lf its line number
// shifted left by [crBits] and its flags.
type crule struct {
	off  uint32
	lf   uint32
	n    uint16
	prio uint16
}

// crBits is the number of bits of crule.lf that hold flags.
const crBits = 5

func (c *crule) line() uint32 { return c.lf >> crBits }
func (c *crule) flags() uint8 { return uint8(c.lf & (1<<crBits - 1)) }

const (
	crAllow    uint8 = 1 << iota
	crAnchored       // the pattern ended in '$'
	crWild           // the pattern has a '*'
	crDir            // the directory of an Allow of ".../index.htm...": src[off:off+n] + "$"
	crEmpty          // an empty pattern: never matches
)

// compactRule is a rule of a group as written while its part is built:
// the rule and the offset of its pattern in the file's text.
type compactRule struct {
	Rule
	off int
}

// initCompact makes pt the compact part of rules, whose patterns are
// src[rs[i].off:][:len(rs[i].Pattern)], and reports whether it could: a
// part that must be compiled is left as it is.
func (pt *part) initCompact(src string, rs []compactRule) bool {
	if len(rs) > compactMax || len(src) >= math.MaxUint32 {
		return false
	}
	crs, wild, sc := make([]crule, 0, len(rs)+1), 0, matcher{}
	for _, r := range rs {
		cr, ok := newCrule(src, r.off, r.Rule, &sc)
		if !ok {
			return false
		}
		if cr.flags()&crWild != 0 {
			wild++
		}
		crs = append(crs, cr)
		if !r.Allow || r.Pattern == "" {
			continue
		}
		if j := lastSlash(r.Pattern); j >= 0 && hasPrefix(r.Pattern[j:], "/index.htm") {
			d := crule{off: cr.off, lf: cr.lf&^(1<<crBits-1) | uint32(crAllow|crAnchored|crDir|cr.flags()&crWild),
				n: uint16(j + 1), prio: uint16(priority(r.Pattern[:j+1] + "$"))}
			m := compile(r.Pattern[:j+1]+"$", true, 0)
			if !sameSegments(&m, src[d.off:][:d.n]) {
				return false
			}
			crs = append(crs, d)
		}
	}
	if wild > compactWild {
		return false
	}
	slices.SortStableFunc(crs, cruleCmp)
	pt.src, pt.crs, pt.cix = src, crs, newCindex(src, crs)
	return true
}

// newCrule returns the record of rule r, whose pattern starts at off in
// src, and whether its compiled form is read from the text as written
// (compiled with the scratch arrays of sc).
func newCrule(src string, off int, r Rule, sc *matcher) (crule, bool) {
	cr := crule{off: uint32(off), lf: uint32(r.Line) << crBits, n: uint16(len(r.Pattern))}
	if r.Line < 0 || r.Line >= 1<<(32-crBits) || len(r.Pattern) > math.MaxUint16 {
		return cr, false
	}
	if r.Allow {
		cr.lf |= uint32(crAllow)
	}
	if r.Pattern == "" {
		cr.lf |= uint32(crEmpty)
		return cr, true
	}
	m := compileInto(r.Pattern, r.Allow, 0, sc)
	if m.prio > math.MaxUint16 {
		return cr, false
	}
	cr.prio = uint16(m.prio)
	text := r.Pattern
	if m.anchored {
		cr.lf |= uint32(crAnchored)
		text = text[:len(text)-1]
		cr.n--
	}
	if len(m.ends) > 1 || len(m.lit) != len(text) {
		cr.lf |= uint32(crWild)
	}
	return cr, sameSegments(&m, text)
}

// segIter yields the segments of a pattern as written (without its final
// '$'), split at its runs of '*' as compile splits them: the first
// segment is kept even when empty, and so, when the pattern is anchored
// and has a '*', is an empty last one.
type segIter struct {
	s        string
	anchored bool
	first    bool
	star     bool // a '*' was read
	done     bool
}

// next returns the next segment, and false when there is none.
func (it *segIter) next() (string, bool) {
	for !it.done {
		i := 0
		for i < len(it.s) && it.s[i] != '*' {
			i++
		}
		seg := it.s[:i]
		if i == len(it.s) {
			it.done = true
			if seg == "" && !it.first && !(it.anchored && it.star) {
				return "", false
			}
		} else {
			it.s = it.s[i+1:]
			it.star = true
		}
		if seg != "" || it.first || it.done {
			it.first = false
			return seg, true
		}
	}
	return "", false
}

// sameSegments reports whether m's segments are those of the pattern text
// as written (without its final '$').
func sameSegments(m *matcher, text string) bool {
	it := segIter{s: text, anchored: m.anchored, first: true}
	k := 0
	for seg, ok := it.next(); ok; seg, ok = it.next() {
		if k >= len(m.ends) || string(m.seg(k)) != seg {
			return false
		}
		k++
	}
	return k == len(m.ends)
}

// before is matcher.before for records of one part: a longer pattern,
// else Allow over Disallow, else the earlier line (a directory record
// right after its rule).
func (c *crule) before(o *crule) bool {
	if c.prio != o.prio {
		return c.prio > o.prio
	}
	if a, b := c.flags()&crAllow != 0, o.flags()&crAllow != 0; a != b {
		return a
	}
	if c.line() != o.line() {
		return c.line() < o.line()
	}
	return c.flags()&crDir == 0 && o.flags()&crDir != 0
}

// match reports whether the record, of a part whose text is src, matches
// the canonical path p, as its compiled matcher would.
func (c *crule) match(src string, p []byte) bool {
	if c.flags()&crEmpty != 0 {
		return false
	}
	text := src[c.off:][:c.n]
	anchored := c.flags()&crAnchored != 0
	if c.flags()&crWild == 0 {
		if !bytes.HasPrefix(p, bytesOf(text)) {
			return false
		}
		return !anchored || len(p) == len(text)
	}
	return matchSegments(text, anchored, p)
}

// matchSegments is matcher.match with the segments read from the
// pattern text as written.
func matchSegments(text string, anchored bool, p []byte) bool {
	it := segIter{s: text, anchored: anchored, first: true}
	first, _ := it.next()
	if !bytes.HasPrefix(p, bytesOf(first)) {
		return false
	}
	pos := len(first)
	seg, ok := it.next()
	if !ok {
		return !anchored || len(p) == len(first)
	}
	for {
		next, more := it.next()
		if !more {
			// seg is the last segment.
			if anchored {
				return len(p)-pos >= len(seg) && bytes.HasSuffix(p, bytesOf(seg))
			}
			return bytes.Index(p[pos:], bytesOf(seg)) >= 0
		}
		var i int
		if len(seg) == 1 {
			i = bytes.IndexByte(p[pos:], seg[0])
		} else {
			i = bytes.Index(p[pos:], bytesOf(seg))
		}
		if i < 0 {
			return false
		}
		pos += i + len(seg)
		seg = next
	}
}

// rule returns the rule of record i of compact part pt.
func (pt *part) crRule(i int) Rule {
	c := &pt.crs[i]
	if c.flags()&crDir != 0 {
		// The rule is the Allow of its line.
		for j := range pt.crs {
			if o := &pt.crs[j]; o.line() == c.line() && o.flags()&crDir == 0 {
				return pt.crRule(j)
			}
		}
	}
	n := int(c.n)
	if c.flags()&crAnchored != 0 {
		n++
	}
	return Rule{Allow: c.flags()&crAllow != 0, Pattern: pt.src[c.off:][:n], Line: int(c.line())}
}

// appendRules appends the rules of pt, in file order, to dst.
func (pt *part) appendRules(dst []Rule) []Rule {
	if pt.crs == nil {
		return append(dst, pt.rules...)
	}
	k := len(dst)
	for i := range pt.crs {
		if pt.crs[i].flags()&crDir == 0 {
			dst = append(dst, pt.crRule(i))
		}
	}
	sort.Slice(dst[k:], func(i, j int) bool { return dst[k+i].Line < dst[k+j].Line })
	return dst
}

// numRules returns the number of rules of pt.
func (pt *part) numRules() int {
	if pt.crs == nil {
		return len(pt.rules)
	}
	n := 0
	for i := range pt.crs {
		if pt.crs[i].flags()&crDir == 0 {
			n++
		}
	}
	return n
}

// cindexMin is the number of records from which a compact part gets a
// cindex.
const cindexMin = 32

// cindex narrows the records of a compact part to try for a path by the
// path's second octet, as [matchIndex] does for matchers: keyed[from[k]:
// from[k+1]] are the records whose pattern starts with "/" and keys[k];
// wild are those that start otherwise (a wildcard, or "/" alone). Both
// lists are in precedence order.
type cindex struct {
	keys []byte
	from []uint16
	ids  []uint16 // keyed, then wild from index wild on
	wild uint16
}

// newCindex returns the cindex of crs, or nil when it has too few or too
// many records.
func newCindex(src string, crs []crule) *cindex {
	if len(crs) < cindexMin || len(crs) > math.MaxUint16 {
		return nil
	}
	var count [256]int
	key := func(c *crule) int {
		if t := src[c.off:][:c.n]; c.flags()&crEmpty == 0 && len(t) >= 2 && t[0] == '/' && t[1] != '*' {
			return int(t[1])
		}
		return -1
	}
	nwild := 0
	for i := range crs {
		if k := key(&crs[i]); k >= 0 {
			count[k]++
		} else {
			nwild++
		}
	}
	ix := &cindex{ids: make([]uint16, len(crs))}
	var next [256]int
	n := 0
	for k, c := range count {
		if c > 0 {
			ix.keys = append(ix.keys, byte(k))
			ix.from = append(ix.from, uint16(n))
			next[k] = n
			n += c
		}
	}
	ix.from = append(ix.from, uint16(n))
	ix.wild = uint16(n)
	w := n
	for i := range crs {
		if k := key(&crs[i]); k >= 0 {
			ix.ids[next[k]] = uint16(i)
			next[k]++
		} else {
			ix.ids[w] = uint16(i)
			w++
		}
	}
	return ix
}

// beatsBest reports whether c would replace best (nil for none), as
// matcher.beats.
func (c *crule) beatsBest(best *matcher) bool {
	return best == nil || int(c.prio) > best.prio || int(c.prio) == best.prio && c.flags()&crAllow != 0 && !best.allow
}

// firstCompact is firstMatch for a compact part: the index of the record
// of highest precedence that matches p and beats best, or -1.
func (pt *part) firstCompact(p []byte, best *matcher) int {
	ix := pt.cix
	if ix == nil {
		for i := range pt.crs {
			c := &pt.crs[i]
			if !c.beatsBest(best) {
				return -1
			}
			if c.match(pt.src, p) {
				return i
			}
		}
		return -1
	}
	var keyed []uint16
	if len(p) >= 2 {
		if k := sort.Search(len(ix.keys), func(i int) bool { return ix.keys[i] >= p[1] }); k < len(ix.keys) && ix.keys[k] == p[1] {
			keyed = ix.ids[ix.from[k]:ix.from[k+1]]
		}
	}
	wild := ix.ids[ix.wild:]
	for len(wild) > 0 || len(keyed) > 0 {
		var i uint16
		if len(keyed) == 0 || len(wild) > 0 && wild[0] < keyed[0] {
			i, wild = wild[0], wild[1:]
		} else {
			i, keyed = keyed[0], keyed[1:]
		}
		c := &pt.crs[i]
		if !c.beatsBest(best) {
			return -1
		}
		if c.match(pt.src, p) {
			return int(i)
		}
	}
	return -1
}

// compactUniversal returns, for allowsNothing, the highest precedence of
// a Disallow of pt matching every path, or -1 when none does; whether an
// Allow outranks it is [part.compactAllowFrom]'s answer.
func (pt *part) compactUniversal() int {
	best := -1
	for i := range pt.crs {
		c := &pt.crs[i]
		if c.flags()&(crAllow|crAnchored|crEmpty) == 0 && int(c.prio) > best && isUniversal(pt.src[c.off:][:c.n]) {
			best = int(c.prio)
		}
	}
	return best
}

// compactAllowFrom reports whether an Allow of pt that can match some path
// has a precedence of at least prio.
func (pt *part) compactAllowFrom(prio int) bool {
	for i := range pt.crs {
		c := &pt.crs[i]
		if c.flags()&crAllow != 0 && c.flags()&crEmpty == 0 && int(c.prio) >= prio {
			if t := pt.src[c.off:][:c.n]; t == "" || t[0] == '/' || t[0] == '*' {
				return true
			}
		}
	}
	return false
}

// isUniversal reports whether a pattern text (not anchored) matches every
// path: its octets other than '*' are none or one '/'.
func isUniversal(t string) bool {
	slash := false
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '*':
		case t[i] == '/' && !slash:
			slash = true
		default:
			return false
		}
	}
	return true
}
