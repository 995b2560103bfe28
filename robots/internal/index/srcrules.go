package index

import (
	"math"
	"strings"
)

// The Allow and Disallow lines of a body, while it is parsed, are small
// records in one array for the whole file, each group as written a range
// of it: the parts are built from them, and only a part that is compiled
// gets the rules as [Rule] values.

// srcRule is an Allow or Disallow line as written: its pattern is the
// text's text[off:][:n], written on line line. A text too long for the
// offsets and lines to fit keeps them in [Builder.wide] instead.
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
// of its rules in [Builder.wide]: a line number is at most the length plus 1.
const srcMaxText = math.MaxUint32 - 1

// srcBytesPerRule is the density of rules for which presize makes room
// without growing: files of the web hardly write shorter rule lines on
// average, and a hostile file of short lines costs at most a fraction of
// its size.
const srcBytesPerRule = 16

// presize makes room for the rules of text.
func (p *Builder) presize(text string) {
	lines := strings.Count(text, "\n")
	if lines == 0 || len(text)/lines > 256 {
		lines += strings.Count(text, "\r") // a file of CR line ends
	}
	p.rules = make([]srcRule, 0, min(lines+1, len(text)/srcBytesPerRule+1))
}

// Room returns the number of rules the builder made room for, by which
// a parser may size its arrays of groups and agents.
func (p *Builder) Room() int { return cap(p.rules) }

// NumRules returns the number of rules added so far.
func (p *Builder) NumRules() int { return len(p.rules) }

// AddRule records an Allow (allow set) or Disallow line, of pattern
// text[off:][:n], on line num. The rules of a group as written are added
// one after the other (see [Builder.Parts]).
func (p *Builder) AddRule(allow bool, off, n, num int) {
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
}

// ruleAt returns rule i of p.rules, but for its line, and the offset of
// its pattern.
func (p *Builder) ruleAt(i int) (Rule, int) {
	sr := &p.rules[i]
	off := int(sr.off)
	if p.wide != nil {
		off = p.wide[2*i]
	}
	return Rule{Allow: sr.flags&srcAllow != 0, Pattern: p.text[off:][:sr.n]}, off
}

// lineOf returns the line of rule i of p.rules.
func (p *Builder) lineOf(i int) int {
	if p.wide != nil {
		return p.wide[2*i+1]
	}
	return int(p.rules[i].line)
}

// plainRules returns the rules of the group as written k.
func (p *Builder) plainRules(k int) []Rule {
	from, to := p.ruleRange(k)
	out := make([]Rule, to-from)
	for i := range out {
		out[i], _ = p.ruleAt(from + i)
		out[i].Line = p.lineOf(from + i)
	}
	return out
}

// numRecords returns the number of records of a compact part of g: one a
// rule, and one more for the directory of an Allow of ".../index.htm...".
func (p *Builder) numRecords(k int) int {
	n := 0
	from, to := p.ruleRange(k)
	for _, r := range p.rules[from:to] {
		n += 1 + int(r.flags&srcDir>>1)
	}
	return n
}
