package index

import (
	"math"
	"unsafe"
)

// A few patterns are not canonical as written: a space, a '|', a
// non-ASCII octet, an escape of an unreserved character... Their compiled
// segments differ from the text, so a compact record cannot be matched
// from the text as written. Such a record keeps instead its canonical
// text in a side table of its file ([canonTable]): the text of its
// compiled segments joined by '*'. Its offset still points to the pattern as written, which gives
// its line, its order among equals and the rule a decision reports.

// canonTable is the side table of a file's records flagged [crCanon]:
// their entries, in the order of (off, dir), which identifies a record,
// and their canonical texts one after the other.
type canonTable struct {
	recs []canonRec
	text string
}

// canonRec locates the canonical text of a record flagged [crCanon]:
// text[coff:][:n] of its file's [canonTable], n being the record's.
type canonRec struct {
	off  uint32 // the record's offset in the text, as crule.off
	coff uint32
	wn   uint16 // the length of the pattern as written, a final '$' included
	dir  bool   // the record is the directory of its rule (crDir)
}

// crText returns the text of record c, of a compact part of r, from
// which it is matched: the pattern as written, or its canonical text.
func (r *File) crText(c *crule) string {
	if c.flags()&crCanon != 0 {
		return r.canonText(c)
	}
	return r.text[c.off():][:c.n]
}

// canonText returns the canonical text of record c, flagged [crCanon].
func (r *File) canonText(c *crule) string { return r.cx.text[r.canonOf(c).coff:][:c.n] }

// canonOf returns the entry of the side table of record c, which is flagged
// [crCanon].
func (r *File) canonOf(c *crule) *canonRec { return &r.cx.recs[r.canonOfIndex(c)] }

// canonOfIndex returns the index into r.cx.recs of the entry of record c,
// which is flagged [crCanon].
func (r *File) canonOfIndex(c *crule) int {
	off, dir := uint32(c.off()), c.flags()&crDir != 0
	lo, hi := 0, len(r.cx.recs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		e := &r.cx.recs[m]
		if e.off < off || e.off == off && !e.dir && dir {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// canonCrule returns the record of rule rl, whose pattern as written is
// at off, with its canonical text added to the file's side table (as
// the directory of rl when dir is set; pattern is then the directory's,
// with its '$'), and whether its compiled form can be read from that
// text: not when a segment holds a '*' (written "%2A"), or when the text
// is too long for a record.
func (p *Builder) canonCrule(off int, rl Rule, pattern string, dir bool) (crule, bool) {
	r := p.r
	m := compileInto(pattern, rl.Allow, 0, &p.sc)
	cr := crule{of: uint32(off)<<crBits | uint32(crCanon)}
	if rl.Allow {
		cr.of |= uint32(crAllow)
	}
	if dir {
		cr.of |= uint32(crDir)
	}
	if m.anchored {
		cr.of |= uint32(crAnchored)
	}
	if len(m.ends) > 1 {
		cr.of |= uint32(crWild)
	}
	n := len(m.lit) + len(m.ends) - 1
	if off < 0 || off >= crMaxText || m.prio > math.MaxUint16 || n > math.MaxUint16 ||
		len(rl.Pattern) > math.MaxUint16 || len(p.cbuf)+n > math.MaxUint32 {
		return cr, false
	}
	cr.prio, cr.n = uint16(m.prio), uint16(n)
	from := len(p.cbuf)
	for k := range m.ends {
		if k > 0 {
			p.cbuf = append(p.cbuf, '*')
		}
		p.cbuf = append(p.cbuf, m.seg(k)...)
	}
	if !sameSegments(&m, stringOf(p.cbuf[from:])) {
		p.cbuf = p.cbuf[:from]
		return cr, false
	}
	if r.cx == nil {
		r.cx = &canonTable{}
	}
	r.cx.recs = append(r.cx.recs, canonRec{off: uint32(off), coff: uint32(from), wn: uint16(len(rl.Pattern)), dir: dir})
	r.cx.text = stringOf(p.cbuf)
	return cr, true
}

// undoCompact drops what a part that could not be compact added to the
// file's records and side table, which had crs, canons and ctext of them.
func (p *Builder) undoCompact(crs, canons, ctext int) {
	p.r.crs = p.r.crs[:crs]
	if p.r.cx != nil {
		p.r.cx.recs = p.r.cx.recs[:canons]
	}
	p.cbuf = p.cbuf[:ctext]
}

// numCanon returns the number of entries of r's side table.
func (r *File) numCanon() int {
	if r.cx == nil {
		return 0
	}
	return len(r.cx.recs)
}

// finishCanon gives r its side table and canonical texts in arrays of
// their size, without the entries of the parts compiled since.
func (p *Builder) finishCanon() {
	r := p.r
	if r.cx == nil {
		return
	}
	n := make([]int, len(r.cx.recs)) // the length of each entry's text, -1 for one dropped
	for i := range n {
		n[i] = -1
	}
	kept := 0
	for i := range r.crs {
		if c := &r.crs[i]; c.flags()&crCanon != 0 {
			n[r.canonOfIndex(c)] = int(c.n)
			kept++
		}
	}
	if kept == 0 {
		r.cx = nil
		return
	}
	canon := make([]canonRec, 0, kept)
	text := make([]byte, 0, len(p.cbuf))
	for i, e := range r.cx.recs {
		if n[i] >= 0 {
			text = append(text, p.cbuf[e.coff:][:n[i]]...)
			e.coff = uint32(len(text) - n[i])
			canon = append(canon, e)
		}
	}
	r.cx = &canonTable{recs: canon, text: string(text)}
}

// stringOf returns the bytes of b as a string without copying them: b
// must not be modified while the string is in use.
func stringOf(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
