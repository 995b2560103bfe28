package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
// Every format of the one list ([goproxyWarnings]) is tried, as goproxy's
// ctx.Warnf writes it.
func TestGoproxyWarningsReworded(t *testing.T) {
	for _, w := range goproxyWarnings() {
		t.Run(w.format, func(t *testing.T) {
			args := []any{3, "origin.test:443", "origin.test:443"}
			errAt := 1 + w.error
			if w.target < 0 {
				args = args[:2]
			}
			for _, gone := range []bool{true, false} {
				err := errors.New("remote error: tls: unknown certificate authority")
				if gone {
					err = io.EOF
				}
				args[errAt] = err
				var buf bytes.Buffer
				goproxyLogger{log: zerolog.New(&buf)}.Printf("[%03d] WARN: "+w.format+"\n", args...)
				var m map[string]any
				if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
					t.Fatalf("%q: %v", buf.String(), err)
				}
				level := "warn"
				if gone && w.client {
					level = "debug"
				}
				if m["level"] != level || m["message"] != w.msg || (w.target >= 0 && m["target"] != "origin.test:443") || m["error"] != err.Error() {
					t.Errorf("error %v → %v", err, m)
				}
			}
		})
	}
}

// TestGoproxyWarningsExist: every warning format goproxyLogger rewords
// is one the pinned goproxy module writes (a string literal of its
// source), and goproxy still prefixes warnings as goproxyLogger expects:
// an upgrade that rewords one fails here rather than passing every test
// while the matching silently stops.
func TestGoproxyWarningsExist(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-json", "github.com/elazarl/goproxy").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/elazarl/goproxy: %v", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go list -m: no module directory in %q (%v)", out, err)
	}
	files, err := filepath.Glob(filepath.Join(mod.Dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s (%v)", mod.Dir, err)
	}
	var src strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	for _, lit := range []string{`"[%03d] "+msg+"\n"`, `"WARN: "+msg`} { // ctx.printf, ctx.Warnf
		if !strings.Contains(src.String(), lit) {
			t.Errorf("goproxy (%s) no longer writes warnings as %s", mod.Dir, lit)
		}
	}
	for _, w := range goproxyWarnings() {
		if !strings.Contains(src.String(), strconv.Quote(w.format)) {
			t.Errorf("goproxy (%s) has no warning %q any more: goproxyWarnings no longer matches it", mod.Dir, w.format)
		}
	}
}
