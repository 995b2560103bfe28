// Package safetext keeps text that comes from clients and origins (header
// values, URLs, robots.txt rules, tdmrep.json policies) from carrying
// control characters into what robotsgate writes: audit lines, operator
// logs, answers and their headers, and the CLI's output. On a terminal a
// C0 or C1 control starts an escape sequence (ESC, CSI U+009B, OSC
// U+009D), a bidi control (U+202A–U+202E, U+2066–U+2069) reorders what
// follows, and a line break forges a line. Every writer of such text uses
// this package, so that one definition of "unsafe" holds everywhere.
package safetext

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Unsafe reports whether r must not be written as it is: a C0 control,
// DEL, a C1 control, a bidi control or mark, or a line or paragraph
// separator.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r < 0x80:
		return false
	case r <= 0x9f:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f || r == 0x2028 || r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// clean reports whether s has no unsafe rune and is valid UTF-8: the
// common case, checked without decoding ASCII.
func clean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || Unsafe(r) {
			return false
		}
		i += n
	}
	return true
}

// Escape returns s with each unsafe rune written as a Go escape ("\n",
// "\r", "\t", "\x1b", "\u009b", "\u202e") and each byte that is not
// UTF-8 as "\xNN": printable on one line, the original still legible.
// Other characters, backslashes included, are unchanged.
func Escape(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case Unsafe(r):
			b.WriteString(escapeRune(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// escapeRune is the Go escape of r.
func escapeRune(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	}
	if r < 0x80 {
		return `\x` + hex2(byte(r))
	}
	q := strconv.QuoteRuneToASCII(r) // '\u009b'
	return q[1 : len(q)-1]
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// Replace returns s with each unsafe rune and each byte that is not UTF-8
// replaced by repl, or removed when repl is negative: for a header value
// or a line whose length must not grow.
func Replace(s string, repl rune) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1, Unsafe(r):
			if repl >= 0 {
				b.WriteRune(repl)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// EscapeLines is Escape for a text of several lines: its line feeds are
// kept.
func EscapeLines(s string) string {
	ok := true
	for l := range strings.SplitSeq(s, "\n") { // each line as Escape sees it below, without a copy
		if ok = clean(l); !ok {
			break
		}
	}
	if ok {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Escape(l)
	}
	return strings.Join(lines, "\n")
}

// Writer returns w with [JSON] applied to each Write, for writers that
// are given whole JSON texts, one a Write (zerolog, [encoding/json.Encoder]):
// a Write that ends inside a string would leave the next one misread.
// It reports len(p) written when the rewritten text was.
func Writer(w io.Writer) io.Writer { return jsonWriter{w} }

type jsonWriter struct{ w io.Writer }

func (j jsonWriter) Write(p []byte) (int, error) {
	q := JSON(p)
	n, err := j.w.Write(q)
	if err == nil && n < len(q) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return min(n, len(p)), err
	}
	return len(p), nil
}
