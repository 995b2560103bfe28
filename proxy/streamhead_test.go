package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestStreamedHeadNotHeldPlain: a forwarded response of unknown length
// reaches the client with its header while the origin still withholds
// the body (an event stream, a long poll). The origin sends its body once
// the client has the head, or after a long fallback, which fails the test.
func TestStreamedHeadNotHeldPlain(t *testing.T) {
	release := make(chan struct{})
	byFallback := make(chan bool, 1)
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select {
		case <-release:
			byFallback <- false
		case <-time.After(20 * time.Second):
			byFallback <- true
		}
		io.WriteString(w, "data: late\n\n")
	}))
	defer o.Close()
	h := newHarness(t, harnessOpts{})
	c := dialRaw(t, h.addr)
	defer c.Close()
	br := bufio.NewReader(c)
	fmt.Fprintf(c, "GET %s/stream HTTP/1.1\r\nHost: %s\r\nUser-Agent: TestBot/1.0\r\n\r\n", o.URL, o.Listener.Addr())
	resp, err := http.ReadResponse(br, nil)
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if <-byFallback {
		t.Fatal("the head reached the client only after the origin sent the body")
	}
	if b, err := io.ReadAll(io.LimitReader(resp.Body, 12)); err != nil || string(b) != "data: late\n\n" {
		t.Fatalf("body %q, %v", b, err)
	}
}
