package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
)

// TestRobotsTxtExemptionExact sends raw requests for robots.txt through
// the proxy to an origin whose robots.txt says "Disallow: /": only a GET
// or HEAD of /robots.txt spelled so is forwarded; escaped spellings and
// other methods are decided by the rules (403, audited) and never reach
// the origin, which records every request line robotsgate forwards.
func TestRobotsTxtExemptionExact(t *testing.T) {
	var mu sync.Mutex
	var seen []string // method and request URI of each request but robotsgate's own fetch
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.RequestURI == "/robots.txt" && r.Header.Get("User-Agent") != "TestBot/1.0" {
			io.WriteString(w, "User-agent: *\nDisallow: /\n")
			return
		}
		mu.Lock()
		seen = append(seen, r.Method+" "+r.RequestURI)
		mu.Unlock()
		io.WriteString(w, "User-agent: *\nDisallow: /\n")
	}))
	t.Cleanup(o.Close)
	h := newHarness(t, harnessOpts{})
	host := strings.TrimPrefix(o.URL, "http://")

	refused := []struct{ method, path string }{
		{"GET", "/%72obots.txt"},
		{"GET", "/robots%2Etxt"},
		{"GET", "/robots.tx%74"},
		{"HEAD", "/%72obots.txt"},
		{"GET", "/robots.txt?x=1"},
		{"GET", "/robots.txt;x"},
		{"PUT", "/robots.txt"},
		{"DELETE", "/robots.txt"},
		{"POST", "/robots.txt"},
	}
	for _, c := range refused {
		if code := rawMethod(t, h.addr, c.method, o.URL+c.path, host); code != http.StatusForbidden {
			t.Errorf("%s %s: %d, want 403", c.method, c.path, code)
		}
	}
	mu.Lock()
	if len(seen) != 0 {
		t.Errorf("requests reached the origin: %q", seen)
	}
	mu.Unlock()
	n := 0
	for _, r := range h.audit.Records(t) {
		if r["reason"] == string(enforce.ReasonDisallowed) {
			n++
		}
	}
	if n != len(refused) {
		t.Errorf("%d disallowed audit records, want %d:\n%s", n, len(refused), h.audit.String())
	}

	for _, m := range []string{"GET", "HEAD"} {
		if code := rawMethod(t, h.addr, m, o.URL+"/robots.txt", host); code != http.StatusOK {
			t.Errorf("%s /robots.txt: %d, want 200 (exempt)", m, code)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"GET /robots.txt", "HEAD /robots.txt"}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("the origin saw %q, want %q", seen, want)
	}
}

// rawMethod sends "method target HTTP/1.1" to the proxy at addr as raw
// bytes (an empty body for the methods that may carry one) and returns
// the status of the answer.
func rawMethod(t *testing.T, addr, method, target, host string) int {
	t.Helper()
	c := dialRaw(t, addr)
	defer c.Close()
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: TestBot/1.0\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", method, target, host)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
