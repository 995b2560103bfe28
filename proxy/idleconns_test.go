package proxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
)

// TestIdleConnClosedAfterOneForwardedRequest: the connection that carried
// an origin's only request is closed after upstream.first_idle_timeout,
// not kept for upstream.idle_timeout, and /metrics counts it.
func TestIdleConnClosedAfterOneForwardedRequest(t *testing.T) {
	// Every connection the origin accepted (the robots.txt fetch's and
	// the forwarded request's) is closed.
	var mu sync.Mutex
	open := 0
	allClosed := make(chan struct{}, 16)
	o := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, privateRobots)
			return
		}
		io.WriteString(w, "page")
	}))
	o.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			open++
		case http.StateClosed, http.StateHijacked:
			if open--; open == 0 {
				allClosed <- struct{}{}
			}
		}
	}
	o.Start()
	t.Cleanup(o.Close)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) {
		c.Upstream.IdleTimeout = time.Hour
		c.Upstream.FirstIdleTimeout = 10 * time.Millisecond
	}})
	if resp, body := h.get(t, o.URL+"/page"); resp.StatusCode != http.StatusOK || body != "page" {
		t.Fatalf("GET /page: %d %q", resp.StatusCode, body)
	}
	// The robots.txt fetch's connection closes at once: wait for both.
	for done := false; !done; {
		select {
		case <-allClosed:
			mu.Lock()
			done = open == 0
			mu.Unlock()
		case <-time.After(testTimeout):
			t.Fatal("the connection of the only forwarded request was kept open")
		}
	}
	resp, body := get(t, &http.Client{Timeout: testTimeout}, "http://"+h.addr+"/metrics")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	for _, want := range []string{"robotsgate_upstream_idle_closed_total 1", "robotsgate_upstream_idle_connections 0", "robotsgate_upstream_connections "} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
