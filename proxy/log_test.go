package proxy

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/rs/zerolog"
)

func TestGoproxyLoggerLevels(t *testing.T) {
	cases := []struct {
		format string
		args   []any
		level  string
		msg    string
	}{
		{"[%03d] INFO: Got request %v\n", []any{7, "/x"}, "debug", "Got request /x"},
		{"[%03d] WARN: Cannot read TLS response from mitm'd server %v\n", []any{12, "EOF"}, "warn", "Cannot read TLS response from mitm'd server EOF"},
		{"something else", nil, "info", "something else"},
	}
	for _, tc := range cases {
		var buf bytes.Buffer
		l := goproxyLogger{log: zerolog.New(&buf)}
		l.Printf(tc.format, tc.args...)
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatalf("%q: %v", buf.String(), err)
		}
		if m["level"] != tc.level || m["message"] != tc.msg || m["component"] != "goproxy" {
			t.Errorf("%q → %v", tc.format, m)
		}
	}
}
