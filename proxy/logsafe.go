package proxy

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// ConsoleWriter returns the human-readable zerolog writer for operator
// logs on a terminal, made safe against log injection: zerolog's
// ConsoleWriter already quotes field values that hold control characters
// (strconv.Quote), but prints the message as it is, so a message built
// from a header value or URL could start a forged line. Here CR, LF and
// every other control character of the message are escaped ("\n",
// "\r", "\x1b"), as JSON output escapes them.
func ConsoleWriter(w io.Writer, noColor bool) zerolog.ConsoleWriter {
	return zerolog.ConsoleWriter{
		Out:        w,
		NoColor:    noColor,
		TimeFormat: time.RFC3339,
		FormatMessage: func(i any) string {
			if i == nil {
				return ""
			}
			return EscapeControl(fmt.Sprint(i))
		},
	}
}

// EscapeControl returns s with ASCII control characters (and DEL)
// replaced by Go-style escapes, so that it prints on one line and cannot
// carry terminal escape sequences. Other characters are unchanged.
func EscapeControl(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
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
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
