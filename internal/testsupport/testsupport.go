// Package testsupport holds the helpers that the tests of several
// packages share: an in-memory audit and log [Sink], reading a Prometheus
// exposition ([Exposition], [MetricValue]), writing a certificate and its
// key ([WriteCert]), configuration inputs ([EnvMap], [WriteFile]), a
// file's permissions ([AssertMode]), a refused address ([ClosedAddr]),
// polling for a condition ([WaitFor]), a CONNECT sent by hand
// ([RawConnect]), on unix, filling a pipe ([FillPipe]), and the crafted
// url patterns of the matchers' bounded-work tests ([HostileCases]).
//
// It sits beside [github.com/robotsgate/robotsgate/internal/redistest] and
// [github.com/robotsgate/robotsgate/internal/confdirtest] and, like them,
// imports nothing of robotsgate, so that any package's tests can use it.
package testsupport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// WaitTimeout bounds [WaitFor]: far more than any condition takes, even
// under the race detector on a loaded machine.
const WaitTimeout = 10 * time.Second

// WaitFor polls cond until it holds, and fails t, naming what it waited
// for, when [WaitTimeout] passes first. It is the tests' one way to wait
// for something another goroutine does: never a fixed sleep.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", WaitTimeout, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Sink is a goroutine-safe in-memory sink for audit records or operator
// logs. After Close, writes fail with [io.ErrClosedPipe]. The zero value
// is ready to use.
type Sink struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	closed bool
}

// Write appends p, or fails once the Sink is closed.
func (s *Sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, io.ErrClosedPipe
	}
	return s.buf.Write(p)
}

// Close makes every later Write fail.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// Closed reports whether Close was called.
func (s *Sink) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// String returns what was written so far.
func (s *Sink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// Records returns the JSON lines written so far, parsed; t fails on a line
// that is not JSON.
func (s *Sink) Records(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s.String()))
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("audit line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, rec)
	}
	return out
}

// Find returns the first record whose "reason" is reason; t fails when
// there is none.
func (s *Sink) Find(t testing.TB, reason string) map[string]any {
	t.Helper()
	recs := s.Records(t)
	for _, r := range recs {
		if r["reason"] == reason {
			return r
		}
	}
	t.Fatalf("no audit record with reason %q in %v", reason, recs)
	return nil
}

// Exposition returns what the metrics handler h answers to GET /metrics.
func Exposition(h http.Handler) string {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

// MetricValue returns the value of the sample series (name with its
// labels as exposed, e.g. `x_total{a="b"}`) in an exposition, or -1 when
// the exposition has no such series.
func MetricValue(t testing.TB, exposition, series string) float64 {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(exposition))
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return -1
}

// ClosedAddr returns a loopback address (host:port) that nothing listens
// on: a connection to it is refused.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// EnvMap returns an environment lookup function over m, in the shape of
// [os.Getenv].
func EnvMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// WriteFile writes content to a file name in a new temporary directory of
// t and returns its path.
func WriteFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// AssertMode fails t unless the file name has permission bits want.
func AssertMode(t testing.TB, name string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Fatalf("%s has mode %04o, want %04o", name, got, want)
	}
}

// RawConnect sends CONNECT target to the proxy at addr, with the extra
// header lines given ("Name: value"), and returns the response (its body
// unread), the connection (closed when the test ends, its deadline
// 2×[WaitTimeout] away) and its reader.
func RawConnect(t testing.TB, addr, target string, headers ...string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(2 * WaitTimeout))
	var req strings.Builder
	fmt.Fprintf(&req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n", target, target)
	for _, h := range headers {
		req.WriteString(h + "\r\n")
	}
	req.WriteString("\r\n")
	if _, err := io.WriteString(c, req.String()); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	return resp, c, br
}
