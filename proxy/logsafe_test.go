package proxy

import (
	"errors"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/rs/zerolog"
)

// TestConsoleWriterEscapesLineBreaks logs attacker-controlled text (a
// header value with CR/LF that forges a second log line) through the
// console writer and checks that exactly one line comes out.
func TestConsoleWriterEscapesLineBreaks(t *testing.T) {
	var sb strings.Builder
	log := zerolog.New(ConsoleWriter(&sb, true))
	forged := "MyBot\r\n12:00:00 INF admin login ok user=root"
	log.Info().Str("agent", forged).Err(errors.New("bad\nthing")).Msg("request from " + forged + "\x1b[31m")
	out := sb.String()
	if strings.Count(out, "\n") != 1 || strings.Contains(out, "\r") || strings.Contains(out, "\x1b") {
		t.Fatalf("console output not on one line: %q", out)
	}
	for _, want := range []string{`request from MyBot\r\n12:00:00 INF admin login ok user=root\x1b[31m`, `agent="MyBot\r\n12:00:00`, `bad\nthing`} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}

	// JSON (the default off a terminal) escapes too.
	sb.Reset()
	jl := zerolog.New(&sb)
	jl.Info().Str("agent", forged).Msg(forged)
	if strings.Count(sb.String(), "\n") != 1 {
		t.Errorf("JSON output not on one line: %q", sb.String())
	}
}

func TestEscapeControl(t *testing.T) {
	for in, want := range map[string]string{
		"plain":        "plain",
		"a\nb":         `a\nb`,
		"a\r\nb":       `a\r\nb`,
		"t\tx\x00\x7f": `t\tx\x00\x7f`,
		"ünïcode ✓":    "ünïcode ✓",
	} {
		if got := answer.EscapeControl(in); got != want {
			t.Errorf("answer.EscapeControl(%q) = %q, want %q", in, got, want)
		}
	}
}
