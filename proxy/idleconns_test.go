package proxy

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
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

// TestTrackedConnKeepsReusedConnections: a connection put back idle after
// its second forwarded request, or used since it was put back idle, is
// left to the transport's idle timeout.
func TestTrackedConnKeepsReusedConnections(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	tr := &connTracker{firstIdle: time.Hour}
	tr.open.Add(1)
	c := &trackedConn{Conn: a, t: tr}
	c.taken()
	c.putIdle()
	if c.timer == nil || tr.idle.Load() != 1 {
		t.Fatalf("first idle period: timer %v, %d idle", c.timer, tr.idle.Load())
	}
	c.timer.Stop()
	gen, n := c.gen, c.io.Load()
	c.taken() // a second forwarded request
	c.closeIfIdle(gen, n)
	c.timer = nil
	c.putIdle()
	if c.closed || c.timer != nil {
		t.Fatalf("reused connection: closed %v, early close armed %v", c.closed, c.timer != nil)
	}
	// Bytes moved since it went idle: a request the tracker does not see.
	c2 := &trackedConn{Conn: b, t: tr}
	tr.open.Add(1)
	c2.taken()
	c2.putIdle()
	c2.timer.Stop()
	gen, n = c2.gen, c2.io.Load()
	go a.Read(make([]byte, 1))
	c2.Write([]byte("x"))
	c2.closeIfIdle(gen, n)
	if c2.closed {
		t.Fatal("connection closed although it was used since it went idle")
	}
	c2.closeIfIdle(c2.gen, c2.io.Load())
	if !c2.closed || tr.closed.Load() != 1 || tr.open.Load() != 1 || tr.idle.Load() != 1 {
		t.Fatalf("idle connection not closed: closed %v, counts %d closed %d open %d idle", c2.closed, tr.closed.Load(), tr.open.Load(), tr.idle.Load())
	}
}

// TestTracedContext: the context traced gives a forwarded request answers
// httptrace's key with its trace, the handoff mark only when asked, its
// parent's values and cancellation; a trace already in the parent is
// composed with, not hidden.
func TestTracedContext(t *testing.T) {
	if clientTraceKey == nil {
		t.Fatal("httptrace's context key was not learnt")
	}
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	req := httptest.NewRequest(http.MethodGet, "http://a.test/", nil)
	for _, handoff := range []bool{false, true} {
		ctx := traced(parent, req, handoff).Context()
		if tr := httptrace.ContextClientTrace(ctx); tr == nil || tr.GotConn == nil || tr.PutIdleConn == nil {
			t.Fatalf("no trace in the context: %v", tr)
		}
		if ok, _ := ctx.Value(handoffOKKey{}).(bool); ok != handoff {
			t.Errorf("handoff mark %v, want %v", ok, handoff)
		}
		if ctx.Value(key{}) != "v" {
			t.Errorf("parent's value lost")
		}
	}
	ctx := traced(parent, req, false).Context()
	cancel()
	<-ctx.Done()
	if ctx.Err() != context.Canceled {
		t.Errorf("Err = %v", ctx.Err())
	}

	var theirs bool
	outer := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { theirs = true }})
	tr := httptrace.ContextClientTrace(traced(outer, req, true).Context())
	tr.GotConn(httptrace.GotConnInfo{})
	if !theirs {
		t.Errorf("the parent's trace was not composed with")
	}
}
