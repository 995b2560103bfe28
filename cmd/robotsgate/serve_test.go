package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// testTimeout bounds waits so that a bug fails instead of hanging; no
// assertion depends on it.
const testTimeout = 10 * time.Second

// syncBuffer is a goroutine-safe bytes.Buffer.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// running is a runServe in a goroutine.
type running struct {
	addr   net.Addr
	cancel context.CancelFunc
	code   chan int
	stderr *syncBuffer
	client *http.Client
}

// startServe runs runServe with args (plus a free loopback port, a private
// data dir and JSON logs) and waits until it listens.
func startServe(t *testing.T, args []string, env map[string]string) *running {
	t.Helper()
	args = append([]string{"-listen", "127.0.0.1:0", "-data-dir", t.TempDir(), "-log-format", "json"}, args...)
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, code: make(chan int, 1), stderr: &syncBuffer{}}
	ready := make(chan net.Addr, 1)
	go func() { r.code <- runServe(ctx, args, testsupport.EnvMap(env), io.Discard, r.stderr, ready) }()
	select {
	case r.addr = <-ready:
	case c := <-r.code:
		t.Fatalf("runServe exited %d before listening: %s", c, r.stderr)
	case <-time.After(testTimeout):
		t.Fatal("runServe did not listen")
	}
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: r.addr.String()})}
	t.Cleanup(tr.CloseIdleConnections)
	r.client = &http.Client{Transport: tr, Timeout: testTimeout}
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.code:
		case <-time.After(testTimeout):
			t.Error("runServe did not stop")
		}
	})
	return r
}

// stop cancels runServe and returns its exit code.
func (r *running) stop(t *testing.T) int {
	t.Helper()
	r.cancel()
	select {
	case c := <-r.code:
		r.code <- c // for Cleanup
		return c
	case <-time.After(testTimeout):
		t.Fatal("runServe did not stop")
		return -1
	}
}

// countingOrigin is a test origin: robotsTxt at /robots.txt and "ok" (or
// page's answer) at every other path, both counted.
type countingOrigin struct {
	*httptest.Server
	robots, pages atomic.Int64
}

func newCountingOrigin(t *testing.T, robotsTxt string, page http.HandlerFunc) *countingOrigin {
	t.Helper()
	o := &countingOrigin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			o.robots.Add(1)
			io.WriteString(w, robotsTxt)
			return
		}
		o.pages.Add(1)
		if page != nil {
			page(w, r)
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(o.Close)
	return o
}

// newTestOrigin is a countingOrigin that disallows /private, and the
// count of its pages' hits.
func newTestOrigin(t *testing.T, page http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	o := newCountingOrigin(t, "User-agent: *\nDisallow: /private\n", page)
	return o.Server, &o.pages
}

// readAudit returns the records of the audit file path, its digest and
// volume records left out.
func readAudit(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if m["kind"] == audit.KindDigest || m["kind"] == audit.KindVolume { // volume: report_test.go
			continue
		}
		recs = append(recs, m)
	}
	return recs
}

func TestServeBlocksAndShutdownFlushesAudit(t *testing.T) {
	origin, hits := newTestOrigin(t, nil)
	auditPath := filepath.Join(t.TempDir(), "audit.log") // its directory must exist
	r := startServe(t, []string{"-audit-log", auditPath}, nil)

	resp, err := r.client.Get(origin.URL + "/private/doc")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || hits.Load() != 0 {
		t.Fatalf("blocked request: %d, origin hits %d", resp.StatusCode, hits.Load())
	}
	resp, err = r.client.Get(origin.URL + "/public")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("allowed request: %d", resp.StatusCode)
	}

	if code := r.stop(t); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, r.stderr)
	}
	recs := readAudit(t, auditPath)
	if len(recs) != 1 || recs[0]["decision"] != "blocked" || recs[0]["url"] != origin.URL+"/private/doc" {
		t.Fatalf("audit after shutdown: %v", recs)
	}
	if !strings.Contains(r.stderr.String(), `"message":"robotsgate listening"`) {
		t.Errorf("operator log (JSON on a non-terminal) lacks the start line:\n%s", r.stderr)
	}
}

func TestServeShutdownLetsInFlightFinish(t *testing.T) {
	arrived := make(chan struct{})
	release := make(chan struct{})
	origin, _ := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		select {
		case <-release:
		case <-time.After(testTimeout):
		}
		// A robot tag: its audit record is written once these headers
		// reach robotsgate, i.e. during the shutdown.
		w.Header().Set("X-Robots-Tag", "noindex")
		io.WriteString(w, "finished")
	})
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	r := startServe(t, []string{"-audit-log", auditPath, "-audit", "all"}, nil)

	type result struct {
		status int
		body   string
		err    error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := r.client.Get(origin.URL + "/slow")
		if err != nil {
			got <- result{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- result{resp.StatusCode, string(b), err}
	}()
	<-arrived
	r.cancel() // SIGINT/SIGTERM
	// Wait (bounded) until the shutdown has begun: runServe says so.
	testsupport.WaitFor(t, "the shutdown line on stderr", func() bool { return strings.Contains(r.stderr.String(), "shutting down") })
	// The shutdown is under way and the request still pending.
	select {
	case c := <-r.code:
		t.Fatalf("runServe exited %d with a request in flight", c)
	case res := <-got:
		t.Fatalf("request ended before the origin answered: %+v", res)
	default:
	}
	close(release)
	if res := <-got; res.err != nil || res.status != 200 || res.body != "finished" {
		t.Fatalf("in-flight request: %+v", res)
	}
	if code := r.stop(t); code != 0 {
		t.Fatalf("exit code %d:\n%s", code, r.stderr)
	}
	// Both records of the in-flight request are in the closed audit log,
	// the one written after the shutdown began included.
	recs := readAudit(t, auditPath)
	if len(recs) != 2 || recs[0]["decision"] != "allowed" || recs[1]["reason"] != "robot-tag" ||
		recs[1]["url"] != origin.URL+"/slow" {
		t.Fatalf("audit=all: %v", recs)
	}
}

func TestServeBadConfigExits2WithOneLine(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"bad mode", []string{"-mode", "nope"}, nil},
		{"bad env", nil, map[string]string{"ROBOTSGATE_LOG_LEVEL": "chatty"}},
		{"unknown key", []string{"-config", testsupport.WriteFile(t, "bad.yaml", "listen: 127.0.0.1:0\nshutdown_timout: 5s\n")}, nil},
		{"unwritable audit log", []string{"-audit-log", filepath.Join(testsupport.WriteFile(t, "file", "x"), "audit.log")}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"-data-dir", t.TempDir()}, tc.args...)
			code := runServe(context.Background(), args, testsupport.EnvMap(tc.env), &stdout, &stderr, nil)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", code, stderr.String())
			}
			lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "robotsgate: ") {
				t.Fatalf("stderr %q: want exactly one line", stderr.String())
			}
		})
	}
}

func TestServeListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var stderr bytes.Buffer
	code := runServe(context.Background(), []string{"-listen", ln.Addr().String(), "-data-dir", t.TempDir()},
		testsupport.EnvMap(nil), io.Discard, &stderr, nil)
	// A configuration error: exit 2 with one line naming the setting.
	lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
	if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "robotsgate: listen: ") ||
		!strings.Contains(lines[0], "address already in use") {
		t.Fatalf("exit %d, stderr %q; want 2 and one line", code, stderr.String())
	}
	// So is an admin_listen address that cannot be bound; nothing serves.
	stderr.Reset()
	code = runServe(context.Background(), []string{"-listen", "127.0.0.1:0", "-data-dir", t.TempDir(),
		"-admin-listen", ln.Addr().String()}, testsupport.EnvMap(nil), io.Discard, &stderr, nil)
	lines = strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
	if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "robotsgate: admin_listen: ") {
		t.Fatalf("admin_listen in use: exit %d, stderr %q; want 2 and one line", code, stderr.String())
	}
}

func TestRunDispatch(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, testsupport.EnvMap(nil), nil, &stdout, &stderr); code != 0 {
		t.Fatalf("-h: exit %d", code)
	}
	for _, want := range []string{"serve", "check", "ca", "-listen", "ROBOTSGATE_AUDIT_LOG", "127.0.0.1:9309"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("-h output lacks %q", want)
		}
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"frobnicate"}, testsupport.EnvMap(nil), nil, io.Discard, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "unknown command") {
		t.Fatalf("unknown command: exit %d, %q", code, stderr.String())
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"serve", "-h"}, testsupport.EnvMap(nil), nil, &stdout, io.Discard); code != 0 ||
		!strings.Contains(stdout.String(), "-audit-log") {
		t.Fatalf("serve -h: exit %d, %q", code, stdout.String())
	}
	// Flags alone mean serve: a bad one is serve's exit 2.
	stderr.Reset()
	if code := run(context.Background(), []string{"-mode", "x"}, testsupport.EnvMap(nil), nil, io.Discard, &stderr); code != 2 {
		t.Fatalf("flags without command: exit %d, %q", code, stderr.String())
	}
}

func TestServeReportModeAndAgentFlag(t *testing.T) {
	origin, hits := newTestOrigin(t, nil)
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	r := startServe(t, []string{"-audit-log", auditPath, "-agent", "ReportBot"},
		map[string]string{"ROBOTSGATE_MODE": "report"})
	resp, err := r.client.Get(origin.URL + "/private/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || hits.Load() != 1 {
		t.Fatalf("report mode: %d, origin hits %d", resp.StatusCode, hits.Load())
	}
	if code := r.stop(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	recs := readAudit(t, auditPath)
	if len(recs) != 1 || recs[0]["decision"] != "reported" || recs[0]["agent"] != "ReportBot" || recs[0]["mode"] != "report" {
		t.Fatalf("audit: %v", recs)
	}
}
