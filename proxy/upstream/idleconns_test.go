package upstream

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"testing"
	"time"
)

// TestTrackedConnKeepsReusedConnections: a connection put back idle after
// its second forwarded request, or used since it was put back idle, is
// left to the transport's idle timeout.
func TestTrackedConnKeepsReusedConnections(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	tr := NewConnTracker(time.Hour)
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
