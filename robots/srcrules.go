package robots

import (
	"bytes"
	"math"
)

// The Allow and Disallow lines of a body, while it is parsed, are small
// records in one array for the whole file, each group a range of it: the
// parts are built from them, and only a part that is compiled gets the
// rules as [Rule] values.

// srcRule is an Allow or Disallow line as written: its pattern is the
// text's text[off:][:n], written on line line. A text too long for the
// offsets and lines to fit keeps them in parser.wide instead.
type srcRule struct {
	off   uint32
	line  uint32
	n     uint16 // at most maxLineLen
	flags uint8
}

const (
	srcAllow uint8 = 1 << iota
	srcDir         // an Allow of ".../index.htm...", which also allows its directory
)

// srcMaxText is the length from which a text keeps the offsets and lines
// of its rules in parser.wide: a line number is at most the length plus 1.
const srcMaxText = math.MaxUint32 - 1

// srcBytesPerRule is the density of rules for which presize makes room
// without growing: files of the web hardly write shorter rule lines on
// average, and a hostile file of short lines costs at most a fraction of
// its size.
const srcBytesPerRule = 16

// presize makes room for the groups, agents and rules of body.
func (p *parser) presize(body []byte) {
	lines := bytes.Count(body, []byte{'\n'})
	if lines == 0 || len(body)/lines > 256 {
		lines += bytes.Count(body, []byte{'\r'}) // a file of CR line ends
	}
	n := min(lines+1, len(body)/srcBytesPerRule+1)
	p.rules = make([]srcRule, 0, n)
	p.agents = make([]span, 0, min(n/4+2, 256))
	p.src = make([]srcGroup, 0, min(n/8+1, 64))
}

// addRule records an Allow (allow set) or Disallow line of the current
// group, of pattern text[off:][:n], on line num.
func (p *parser) addRule(allow bool, off, n, num int) {
	var f uint8
	if allow {
		f = srcAllow
		pat := p.text[off:][:n]
		if j := lastSlash(pat); j >= 0 && hasPrefix(pat[j:], "/index.htm") {
			f |= srcDir
		}
	}
	if len(p.text) >= srcMaxText {
		p.wide = append(p.wide, off, num)
		off, num = 0, 0
	}
	p.rules = append(p.rules, srcRule{off: uint32(off), line: uint32(num), n: uint16(n), flags: f})
	p.src[len(p.src)-1].rules[1] = uint32(len(p.rules))
}

// ruleAt returns rule i of p.rules, but for its line, and the offset of
// its pattern.
func (p *parser) ruleAt(i int) (Rule, int) {
	sr := &p.rules[i]
	off := int(sr.off)
	if p.wide != nil {
		off = p.wide[2*i]
	}
	return Rule{Allow: sr.flags&srcAllow != 0, Pattern: p.text[off:][:sr.n]}, off
}

// lineOf returns the line of rule i of p.rules.
func (p *parser) lineOf(i int) int {
	if p.wide != nil {
		return p.wide[2*i+1]
	}
	return int(p.rules[i].line)
}

// plainRules returns the rules of the group as written g.
func (p *parser) plainRules(g *srcGroup) []Rule {
	from, to := g.ruleRange()
	out := make([]Rule, to-from)
	for i := range out {
		out[i], _ = p.ruleAt(from + i)
		out[i].Line = p.lineOf(from + i)
	}
	return out
}

// numRecords returns the number of records of a compact part of g: one a
// rule, and one more for the directory of an Allow of ".../index.htm...".
func (p *parser) numRecords(g *srcGroup) int {
	n := 0
	from, to := g.ruleRange()
	for _, r := range p.rules[from:to] {
		n += 1 + int(r.flags&srcDir>>1)
	}
	return n
}
