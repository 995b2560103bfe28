package upstream

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Idle upstream connections. A keep-alive connection the transport keeps
// idle costs two goroutines, two buffers and a file descriptor; in a
// broad crawl most origins get one request, so their connections are
// never used again. The transport bounds the idle pool
// (upstream.max_idle_conns, upstream.idle_timeout); ConnTracker closes
// sooner (upstream.first_idle_timeout) an idle connection that has
// carried one forwarded request, and counts connections for /metrics.
//
// It learns what the transport does with a connection from the
// httptrace.ClientTrace of the forwarded requests (GotConn, PutIdleConn).
// A connection it has seen no traced request put back idle is taken as
// busy and left to the transport, so a request it does not trace (should
// one share the transport) is never cut: besides, a connection is closed
// only when no byte has moved on it since it was put back idle.
// robots.txt fetches have a transport of their own (NewPolicyTransport)
// that keeps no idle connection at all.

// ConnTracker tracks the connections its dialer made.
type ConnTracker struct {
	firstIdle time.Duration // 0: none closed early
	open      atomic.Int64
	idle      atomic.Int64
	closed    atomic.Int64 // closed by firstIdle
}

// NewConnTracker returns a tracker that closes an idle connection that
// carried one forwarded request after firstIdle (0: never early).
func NewConnTracker(firstIdle time.Duration) *ConnTracker {
	return &ConnTracker{firstIdle: firstIdle}
}

// trackedConn is a connection dialed through a [ConnTracker].
type trackedConn struct {
	net.Conn
	t  *ConnTracker
	io atomic.Uint64 // Read and Write calls that moved bytes

	mu     sync.Mutex
	idle   bool
	uses   int    // forwarded requests it carried
	gen    uint64 // of the latest idle period; a timer of another does nothing
	timer  *time.Timer
	closed bool
}

// Wrap returns dial with its connections tracked by t.
func (t *ConnTracker) Wrap(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		t.open.Add(1)
		return &trackedConn{Conn: c, t: t}, nil
	}
}

// Read counts the reads that return bytes: an idle connection's
// transport keeps a read pending, which returns none until it is used.
func (c *trackedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.io.Add(1)
	}
	return n, err
}

func (c *trackedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.io.Add(1)
	}
	return n, err
}

// Close closes the connection once and stops counting it.
func (c *trackedConn) Close() error {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		c.t.open.Add(-1)
		if c.idle {
			c.idle = false
			c.t.idle.Add(-1)
		}
		if c.timer != nil {
			c.timer.Stop()
		}
	}
	c.mu.Unlock()
	return c.Conn.Close()
}

// taken records that a forwarded request got the connection.
func (c *trackedConn) taken() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.uses++
	c.gen++
	if c.idle {
		c.idle = false
		c.t.idle.Add(-1)
	}
}

// putIdle records that the transport put the connection back idle after
// a forwarded request and, after its first, arms its early close.
func (c *trackedConn) putIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.idle {
		return
	}
	c.idle = true
	c.t.idle.Add(1)
	c.gen++
	if c.uses != 1 || c.t.firstIdle <= 0 {
		return
	}
	gen, io := c.gen, c.io.Load()
	c.timer = time.AfterFunc(c.t.firstIdle, func() { c.closeIfIdle(gen, io) })
}

// closeIfIdle closes the connection if it is still in the idle period
// gen and nothing moved on it since (io calls).
func (c *trackedConn) closeIfIdle(gen, io uint64) {
	c.mu.Lock()
	still := !c.closed && c.idle && c.gen == gen && c.io.Load() == io
	c.mu.Unlock()
	if still {
		c.t.closed.Add(1)
		_ = c.Close() // the transport drops it from its idle pool
	}
}

// tracedConn returns the [trackedConn] under conn (a TLS connection's
// too), or nil.
func tracedConn(conn net.Conn) *trackedConn {
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	c, _ := conn.(*trackedConn)
	return c
}

// traced returns req with the context ctx (req's own, or one made from
// it) and a trace that reports to the tracked connection it is sent on:
// one copy of req for both. With handoff, the request may take a parked
// connection ([withHandoff]).
func traced(ctx context.Context, req *http.Request, handoff bool) *http.Request {
	if clientTraceKey == nil || httptrace.ContextClientTrace(ctx) != nil { // a trace to compose with: httptrace's way
		if handoff {
			ctx = withHandoff(ctx)
		}
		t := &connTrace{}
		t.trace = httptrace.ClientTrace{GotConn: t.gotConn, PutIdleConn: t.putIdleConn}
		return req.WithContext(httptrace.WithClientTrace(ctx, &t.trace))
	}
	t := &connTrace{Context: ctx, handoff: handoff}
	t.trace = httptrace.ClientTrace{GotConn: t.gotConn, PutIdleConn: t.putIdleConn}
	return req.WithContext(t)
}

// connTrace is the trace of one forwarded request ([traced]) and, unless
// its parent context has a trace already, the request's context: its
// parent's, which also answers the trace to [httptrace.ContextClientTrace]
// and the handoff mark to the dialer, as [httptrace.WithClientTrace] and
// [withHandoff] would with a context each.
type connTrace struct {
	context.Context
	trace   httptrace.ClientTrace
	c       *trackedConn // the connection the request got, when tracked
	handoff bool
}

func (t *connTrace) Value(key any) any {
	switch key {
	case clientTraceKey:
		return &t.trace
	case handoffOKKey{}:
		if t.handoff {
			return true
		}
	}
	return t.Context.Value(key)
}

func (t *connTrace) gotConn(info httptrace.GotConnInfo) {
	if t.c = tracedConn(info.Conn); t.c != nil {
		t.c.taken()
	}
}

func (t *connTrace) putIdleConn(err error) {
	if t.c != nil && err == nil {
		t.c.putIdle()
	}
}

// clientTraceKey is the key under which httptrace keeps a request's
// trace in its context (nil if it could not be learnt: [traced] then
// uses [httptrace.WithClientTrace]). It is found by asking a context that
// notes the key it is asked for; it is never changed after.
var clientTraceKey = func() any {
	p := &keyProbe{Context: context.Background()}
	httptrace.ContextClientTrace(p)
	return p.key
}()

// keyProbe is a context that notes the last key it was asked for.
type keyProbe struct {
	context.Context
	key any
}

func (p *keyProbe) Value(key any) any {
	p.key = key
	return nil
}

// Collectors returns the metrics of t.
func (t *ConnTracker) Collectors() []prometheus.Collector {
	gauge := func(name, help string, v *atomic.Int64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(v.Load()) })
	}
	return []prometheus.Collector{
		gauge("robotsgate_upstream_connections", "Connections to origins open for forwarded requests (robots.txt fetches have a transport of their own).", &t.open),
		gauge("robotsgate_upstream_idle_connections", "Connections to origins kept idle after a forwarded request.", &t.idle),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "robotsgate_upstream_idle_closed_total",
			Help: "Idle connections closed after upstream.first_idle_timeout because they carried one forwarded request."},
			func() float64 { return float64(t.closed.Load()) }),
	}
}
