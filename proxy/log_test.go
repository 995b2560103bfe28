package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
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

// goproxy's warnings name the CONNECT target as "client" and fire at
// warn when a client hangs up: reworded, with the target and the error
// as fields, a client's disconnect at debug, an origin's failure at warn.
func TestGoproxyWarningsReworded(t *testing.T) {
	cases := []struct {
		format string
		args   []any
		level  string
		msg    string
		target string
	}{
		{"[%03d] WARN: Cannot read request from mitm'd client %v %v\n", []any{3, "origin.test:443", io.EOF}, "debug", "cannot read a request from the client in an HTTPS session", "origin.test:443"},
		{"[%03d] WARN: Cannot handshake client %v %v\n", []any{4, "origin.test:443", errors.New("remote error: tls: unknown certificate authority")}, "warn", "TLS handshake with the client failed (does it trust robotsgate's CA?)", "origin.test:443"},
		{"[%03d] WARN: Error copying to client: %s\n", []any{5, "write tcp 127.0.0.1:1->127.0.0.1:2: write: broken pipe"}, "debug", "cannot write to the client", ""},
		{"[%03d] WARN: Cannot read response from mitm'd server %v\n", []any{6, io.EOF}, "warn", "cannot read the response from the origin", ""},
	}
	for _, tc := range cases {
		var buf bytes.Buffer
		goproxyLogger{log: zerolog.New(&buf)}.Printf(tc.format, tc.args...)
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatalf("%q: %v", buf.String(), err)
		}
		if m["level"] != tc.level || m["message"] != tc.msg || (tc.target != "" && m["target"] != tc.target) || m["error"] == "" {
			t.Errorf("%q → %v", tc.format, m)
		}
	}
}
