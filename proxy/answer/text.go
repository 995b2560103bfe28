package answer

import (
	"strings"
	"unicode/utf8"

	"github.com/robotsgate/robotsgate/internal/safetext"
)

// Text that comes from the origin or the client (rules, robot tags,
// header values, URLs), made safe for the headers, audit records, bodies
// and log lines robotsgate writes: no control character (C0, C1, bidi;
// see [safetext.Unsafe]), bounded length.

// WithoutControl returns s with its unsafe characters (and bytes that are
// not UTF-8) replaced by repl, or removed when repl is negative.
func WithoutControl(s string, repl rune) string { return safetext.Replace(s, repl) }

// BoundedLine returns s with its unsafe characters as spaces, cut to max
// bytes (and made valid UTF-8) with "..." appended when longer.
func BoundedLine(s string, max int) string {
	s = WithoutControl(s, ' ')
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "..."
	}
	return s
}

// TruncateUTF8 returns s cut to at most n bytes, not inside a UTF-8
// sequence.
func TruncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// EscapeControl returns s with its unsafe characters written as Go
// escapes ([safetext.Escape]), so that it prints on one line and cannot
// carry terminal escape sequences.
func EscapeControl(s string) string { return safetext.Escape(s) }
