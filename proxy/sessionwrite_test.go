package proxy

import (
	"bufio"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSessionResponsesPipelined: inside an MITM session, and in plain
// HTTP inside a CONNECT, responses with and without a body (HEAD, 204,
// 304, an empty 200, a chunked one, robotsgate's own 403) asked for in
// one pipelined write come back whole and in order: a head held back
// for its body never waits for a body that does not come.
func TestSessionResponsesPipelined(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
		case "/nocontent":
			w.WriteHeader(http.StatusNoContent)
		case "/notmodified":
			w.WriteHeader(http.StatusNotModified)
		case "/empty":
			w.Header().Set("Content-Length", "0")
		case "/chunked":
			io.WriteString(w, "first;")
			w.(http.Flusher).Flush()
			io.WriteString(w, "second")
		default:
			io.WriteString(w, "page "+r.URL.Path)
		}
	})
	tlsO := &tlsOrigin{Server: quietTLSServer(h)}
	t.Cleanup(tlsO.Close)
	plainO := &tlsOrigin{Server: startTestServer(t, h, false)}
	cfg := mitmConfig(t, tlsO)
	cfg.HTTPS.AllowedPorts = append(cfg.HTTPS.AllowedPorts, plainO.port(t))
	p := startHTTPSProxy(t, cfg)

	for _, o := range []*tlsOrigin{tlsO, plainO} {
		target := strings.TrimPrefix(strings.TrimPrefix(o.URL, "https://"), "http://")
		c, br := plainSession(t, p, target)
		var conn io.ReadWriter = struct {
			io.Reader
			io.Writer
		}{br, c}
		if strings.HasPrefix(o.URL, "https://") {
			tc := tls.Client(c, &tls.Config{RootCAs: p.ca, ServerName: "127.0.0.1"})
			conn, br = tc, bufio.NewReader(tc)
		}
		checkPipelined(t, conn, br, target)
	}
}

// checkPipelined sends the requests of TestSessionResponsesPipelined in
// one write on conn and checks the answers read from br.
func checkPipelined(t *testing.T, conn io.Writer, br *bufio.Reader, host string) {
	t.Helper()
	reqs := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/page", 200, "page /page"},
		{"HEAD", "/page", 200, ""},
		{"GET", "/nocontent", 204, ""},
		{"GET", "/notmodified", 304, ""},
		{"GET", "/empty", 200, ""},
		{"GET", "/private/x", 403, "*"},
		{"GET", "/chunked", 200, "first;second"},
		{"GET", "/last", 200, "page /last"},
	}
	var all strings.Builder
	for _, r := range reqs {
		all.WriteString(r.method + " " + r.path + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: TestBot/1.0\r\n\r\n")
	}
	if _, err := io.WriteString(conn, all.String()); err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		resp, err := http.ReadResponse(br, &http.Request{Method: r.method})
		if err != nil {
			t.Fatalf("%s %s (Host %s): %v", r.method, r.path, host, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != r.status || (r.body != "*" && string(b) != r.body) || (r.body == "*" && len(b) == 0) {
			t.Fatalf("%s %s (Host %s): %d %q (%v), want %d %q", r.method, r.path, host, resp.StatusCode, b, err, r.status, r.body)
		}
	}
}

// TestStreamedHeadNotHeld: inside an MITM session the head of a response
// of unknown length reaches the client while its origin still withholds
// the body (a stream, a long poll): only a body of known length takes the
// head with it. The origin sends its body once the client has the head,
// or after a long fallback, which fails the test.
func TestStreamedHeadNotHeld(t *testing.T) {
	release := make(chan struct{})
	byFallback := make(chan bool, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-release:
			byFallback <- false
		case <-time.After(20 * time.Second):
			byFallback <- true
		}
		io.WriteString(w, "data: late\n\n")
	})
	o := &tlsOrigin{Server: quietTLSServer(h)}
	t.Cleanup(o.Close)
	p := startHTTPSProxy(t, mitmConfig(t, o))
	target := strings.TrimPrefix(o.URL, "https://")
	c, _ := plainSession(t, p, target)
	tc := tls.Client(c, &tls.Config{RootCAs: p.ca, ServerName: "127.0.0.1"})
	br := bufio.NewReader(tc)
	io.WriteString(tc, "GET /stream HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	close(release)
	if err != nil {
		t.Fatalf("reading the head: %v", err)
	}
	defer resp.Body.Close()
	if <-byFallback {
		t.Fatal("the head reached the client only after the origin sent the body")
	}
	if b, err := io.ReadAll(io.LimitReader(resp.Body, 12)); err != nil || string(b) != "data: late\n\n" {
		t.Fatalf("body %q, %v", b, err)
	}
}
