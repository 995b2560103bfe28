package proxy

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Text that comes from the origin or the client (rules, robot tags,
// header values, URLs), made safe for the headers, audit records, bodies
// and log lines robotsgate writes: no control character, bounded length.

// isControl reports whether c is an ASCII control character or DEL.
func isControl(c rune) bool { return c < 0x20 || c == 0x7f }

// withoutControl returns s with its ASCII control characters (and DEL)
// replaced by repl, or removed when repl is negative.
func withoutControl(s string, repl rune) string {
	return strings.Map(func(c rune) rune {
		if isControl(c) {
			return repl
		}
		return c
	}, s)
}

// boundedLine returns s with its control characters as spaces, cut to max
// bytes (and made valid UTF-8) with "..." appended when longer.
func boundedLine(s string, max int) string {
	s = withoutControl(s, ' ')
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "..."
	}
	return s
}

// truncateUTF8 returns s cut to at most n bytes, not inside a UTF-8
// sequence.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// escapeControl returns s with ASCII control characters (and DEL)
// replaced by Go-style escapes, so that it prints on one line and cannot
// carry terminal escape sequences. Other characters are unchanged.
func escapeControl(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if isControl(rune(s[i])) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case isControl(rune(c)):
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
