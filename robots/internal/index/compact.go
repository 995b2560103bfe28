package index

import (
	"bytes"
	"math"
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
// [Builder.initCompact] checks, rule by rule, that the segments read from the
// text are the compiled ones (at once for a plain pattern, see
// [plainPattern]; by compiling it otherwise). A record whose segments are
// not is matched from its canonical text, kept aside (see [canonRec]);
// the part is compiled only when that cannot be either.

// compactMax is the number of rules above which a part is compiled.
const compactMax = 1 << 15

// compactSmall is the number of rules above which the compact parts of a
// merged group are compiled unless there is one: a part of more records
// than [ptableMin] finds its plain records by a hash, a smaller one tries
// its records one by one after a [cindex], and a decision tries every
// part of its group.
const compactSmall = 2048

// compactWild is the number of rules with a wildcard above which a part
// is compiled: each such rule may search the whole path, which the
// compiled form's filters and indexes avoid.
const compactWild = 128

// crule is one rule of a compact part: its pattern is the file's
// text[off:off+n] (without the final '$' of an anchored pattern), of
// holds off shifted left by [crBits] and the flags. The rule's line is
// counted from its offset when a caller needs it (see [File.lineAt]).
type crule struct {
	of   uint32
	n    uint16
	prio uint16
}

// crBits is the number of bits of crule.of that hold flags.
const crBits = 6

// crMaxText is the length of a text from which parts are compiled: the
// offsets of a compact part's records must fit in crule.of.
const crMaxText = 1 << (32 - crBits)

func (c *crule) off() int     { return int(c.of >> crBits) }
func (c *crule) flags() uint8 { return uint8(c.of & (1<<crBits - 1)) }

const (
	crAllow    uint8 = 1 << iota
	crAnchored       // the pattern ended in '$'
	crWild           // the pattern has a '*'
	crDir            // the directory of an Allow of ".../index.htm...": text[off:off+n] + "$"
	crEmpty          // an empty pattern: never matches
	crCanon          // matched from its canonical text (see [canonRec]), n its length
)

// initCompact makes pt the compact part of the group as written k, its
// records appended to the file's, and reports whether it could: a part
// that must be compiled is left as it is, and the file's records as they
// were.
func (p *Builder) initCompact(pt *part, k int) bool {
	src, r := p.text, p.r
	first, end := p.ruleRange(k)
	if end-first > compactMax || len(src) >= crMaxText {
		return false
	}
	from, wild, wtext := len(r.crs), 0, 0
	canons, ctext := r.numCanon(), len(p.cbuf)
	for i := first; i < end; i++ {
		rl, off := p.ruleAt(i)
		cr, plain, ok := newCrule(off, rl, &p.sc)
		if !ok {
			cr, ok = p.canonCrule(off, rl, rl.Pattern, false)
		}
		if !ok {
			p.undoCompact(from, canons, ctext)
			return false
		}
		if cr.flags()&crWild != 0 {
			wild, wtext = wild+1, wtext+int(cr.n)
		}
		r.crs = append(r.crs, cr)
		if p.rules[i].flags&srcDir == 0 {
			continue
		}
		d, ok := dirCrule(src, cr, rl.Pattern, plain)
		if !ok {
			d, ok = p.canonCrule(off, rl, rl.Pattern[:lastSlash(rl.Pattern)+1]+"$", true)
		}
		if !ok {
			p.undoCompact(from, canons, ctext)
			return false
		}
		r.crs = append(r.crs, d)
	}
	crs := r.crs[from:]
	if wild > compactWild && (len(crs) > ptableMin || wtext > keyedText) {
		p.undoCompact(from, canons, ctext)
		return false
	}
	sortCrules(crs)
	*pt = part{from: uint32(from), to: uint32(len(r.crs))}
	if len(crs) > ptableMin {
		pt.partX = &partX{tab: newPtable(r, crs)}
	} else if cix := newCindex(r, crs); cix != nil {
		pt.partX = &partX{cix: cix}
	}
	if wild > compactWild {
		pt.key()
	}
	return true
}

// dirCrule returns the record of the directory of cr, the record of
// the Allow of pattern, ".../index.htm...", of text src, and whether
// its compiled form is read from the text as written; plain tells that
// pattern is (see [plainPattern]).
func dirCrule(src string, cr crule, pattern string, plain bool) (crule, bool) {
	j := lastSlash(pattern)
	d := crule{of: cr.of&^(1<<crBits-1) | uint32(crAllow|crAnchored|crDir|cr.flags()&crWild), n: uint16(j + 1)}
	if plain {
		// A prefix of a plain pattern, and '$', is plain.
		d.prio = uint16(j + 2)
		return d, true
	}
	d.prio = uint16(priority(pattern[:j+1] + "$"))
	m := compile(pattern[:j+1]+"$", true, 0)
	return d, sameSegments(&m, src[d.off():][:d.n])
}

// newCrule returns the record of rule r, whose pattern starts at off in
// its file's text, whether its pattern is plain (see [plainPattern]),
// and whether its compiled form is read from the text as written
// (compiled with the scratch arrays of sc).
func newCrule(off int, r Rule, sc *matcher) (crule, bool, bool) {
	cr := crule{of: uint32(off) << crBits, n: uint16(len(r.Pattern))}
	if off < 0 || off >= crMaxText || len(r.Pattern) > math.MaxUint16 {
		return cr, false, false
	}
	if r.Allow {
		cr.of |= uint32(crAllow)
	}
	if r.Pattern == "" {
		cr.of |= uint32(crEmpty)
		return cr, false, true
	}
	if flags, ok := plainPattern(r.Pattern); ok {
		cr.of |= uint32(flags)
		cr.prio = uint16(len(r.Pattern))
		if flags&crAnchored != 0 {
			cr.n--
		}
		return cr, true, true
	}
	cr, ok := compiledCrule(cr, r, sc)
	return cr, false, ok
}

// compiledCrule completes cr, the record of rule r but for its
// precedence and its flags other than [crAllow], from the compiled form of
// r, and reports whether that form is read from the text as written.
func compiledCrule(cr crule, r Rule, sc *matcher) (crule, bool) {
	m := compileInto(r.Pattern, r.Allow, 0, sc)
	if m.prio > math.MaxUint16 {
		return cr, false
	}
	cr.prio = uint16(m.prio)
	text := r.Pattern
	if m.anchored {
		cr.of |= uint32(crAnchored)
		text = text[:len(text)-1]
		cr.n--
	}
	if len(m.ends) > 1 || len(m.lit) != len(text) {
		cr.of |= uint32(crWild)
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

// crMatch reports whether record c, of a compact part of r, matches the
// canonical path p, as its compiled matcher would.
func (r *File) crMatch(c *crule, p []byte) bool {
	if c.flags()&crEmpty != 0 {
		return false
	}
	var text string // r.crText, inlined
	if c.flags()&crCanon != 0 {
		text = r.canonText(c)
	} else {
		text = r.text[c.off():][:c.n]
	}
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

// crRule returns the rule of record i of compact part pt of r, but for
// its line, and the offset of its pattern in r.text, from which
// [File.lineAt] counts the line.
func (pt *part) crRule(r *File, i int) (Rule, int) {
	crs := r.crs[pt.from:pt.to]
	c := &crs[i]
	if c.flags()&crDir != 0 {
		// The rule is the Allow of its line.
		for j := range crs {
			if o := &crs[j]; o.off() == c.off() && o.flags()&crDir == 0 {
				return pt.crRule(r, j)
			}
		}
	}
	n := int(c.n)
	if c.flags()&crCanon != 0 {
		n = int(r.canonOf(c).wn)
	} else if c.flags()&crAnchored != 0 {
		n++
	}
	return Rule{Allow: c.flags()&crAllow != 0, Pattern: r.text[c.off():][:n]}, c.off()
}

// appendRules appends the rules of pt, a part of r, in file order, to
// dst; lc counts the lines of a compact part's rules.
func (pt *part) appendRules(r *File, dst []Rule, lc *lineCursor) []Rule {
	if !pt.compact() {
		return append(dst, pt.rules...)
	}
	k := len(dst)
	crs := r.crs[pt.from:pt.to]
	for i := range crs {
		if crs[i].flags()&crDir == 0 {
			rl, off := pt.crRule(r, i)
			rl.Line = off // for the sort below: offsets are in line order
			dst = append(dst, rl)
		}
	}
	sort.Slice(dst[k:], func(i, j int) bool { return dst[k+i].Line < dst[k+j].Line })
	for i := k; i < len(dst); i++ {
		dst[i].Line = lc.at(dst[i].Line)
	}
	return dst
}

// numRules returns the number of rules of pt, a part of r.
func (pt *part) numRules(r *File) int {
	if !pt.compact() {
		return len(pt.rules)
	}
	n := 0
	for _, c := range r.crs[pt.from:pt.to] {
		if c.flags()&crDir == 0 {
			n++
		}
	}
	return n
}
