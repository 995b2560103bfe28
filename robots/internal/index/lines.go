package index

import "strings"

// The records of compact parts keep the offset of their pattern, not its
// line: a rule's line is counted from the text when a Match, Group or
// Groups reports it, as parseMode counts lines (a CR, an LF, or a CRLF
// once, ends a line; a byte order mark ends none). A long text keeps the
// count at every [lineStep] octets, so that counting costs at most
// lineStep octets whatever the size of the file.

// lineStep is the interval, in octets, of the line checkpoints of a text.
const lineStep = 1024

// lineTable returns the checkpoints of text: element k is the number of
// line breaks in text[:(k+1)*lineStep]. Only the texts of compact parts
// (shorter than [crMaxText]) need them.
func lineTable(text string) []uint32 {
	if len(text) < lineStep || len(text) >= crMaxText {
		return nil
	}
	t := make([]uint32, len(text)/lineStep)
	n := 0
	for k := range t {
		n += countBreaks(text, k*lineStep, (k+1)*lineStep, true)
		t[k] = uint32(n)
	}
	return t
}

// countBreaks returns the number of line breaks at the offsets of
// text[from:to]; the LF of a CRLF is none, even when its CR is at from-1.
// Without cr, text has no CR.
func countBreaks(text string, from, to int, cr bool) int {
	s := text[from:to]
	n := strings.Count(s, "\n")
	if !cr {
		return n
	}
	if cr := strings.Count(s, "\r"); cr > 0 {
		n += cr - strings.Count(s, "\r\n")
	}
	if from > 0 && len(s) > 0 && s[0] == '\n' && text[from-1] == '\r' {
		n--
	}
	return n
}

// lineAt returns the 1-based number of the line that holds offset off of
// r.text, for offsets of compact parts' records.
func (r *File) lineAt(off int) int {
	from, n := 0, 0
	if k := off / lineStep; k > 0 {
		from, n = k*lineStep, int(r.lines[k-1])
	}
	return 1 + n + countBreaks(r.text, from, off, r.cr)
}

// lineCursor counts the lines of increasing offsets of r.text, each from
// the one before.
type lineCursor struct {
	r    *File
	off  int
	line int // the line of off; 0 before the first count
}

// at returns the line of offset off.
func (lc *lineCursor) at(off int) int {
	if lc.line == 0 || off < lc.off {
		lc.off, lc.line = off, lc.r.lineAt(off)
		return lc.line
	}
	lc.line += countBreaks(lc.r.text, lc.off, off, lc.r.cr)
	lc.off = off
	return lc.line
}
