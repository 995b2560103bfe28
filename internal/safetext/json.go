package safetext

import (
	"unicode/utf8"
)

// JSON returns the JSON text b (one value, or lines of values) made safe
// for a terminal without changing what it decodes to: inside a string,
// each unsafe rune is written as a "\u" escape (JSON allows a C1 or bidi
// control raw; encoding/json and zerolog write them so) and each byte
// that is not UTF-8 as "\ufffd", as a decoder reads it; outside strings a
// control character other than a line feed or tab, which no valid JSON
// holds there, becomes a space. b itself is returned when it needs
// nothing, which is the common case.
func JSON(b []byte) []byte {
	i := firstUnsafe(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	in := inString(b[:i])
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case in && c == '\\' && i < len(b):
				out = append(out, c, b[i])
				i++
				continue
			case c == '"':
				in = !in
			case c < 0x20 || c == 0x7f:
				if !in {
					if c != '\n' && c != '\t' {
						c = ' '
					}
				} else {
					out = appendU(out, rune(c))
					continue
				}
			}
			out = append(out, c)
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = appendU(out, utf8.RuneError)
		case Unsafe(r):
			out = appendU(out, r)
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// firstUnsafe returns the index of the first byte of b that JSON must
// rewrite (a control character other than a line feed or tab outside a
// string, any inside one, an unsafe rune, a byte that is not UTF-8), or
// -1.
func firstUnsafe(b []byte) int {
	in := false
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			switch {
			case in && c == '\\':
				i += 2
				continue
			case c == '"':
				in = !in
			case c == 0x7f || c < 0x20 && (in || c != '\n' && c != '\t'):
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 || Unsafe(r) {
			return i
		}
		i += n
	}
	return -1
}

// inString reports whether the JSON text b ends inside a string.
func inString(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		}
	}
	return in
}

// appendU appends the JSON escape "\u00XX" of r (in the Basic
// Multilingual Plane).
func appendU(dst []byte, r rune) []byte {
	const digits = "0123456789abcdef"
	return append(dst, '\\', 'u', digits[r>>12&15], digits[r>>8&15], digits[r>>4&15], digits[r&15])
}
