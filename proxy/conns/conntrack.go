// Package conns is the client side of the proxy listener's connections:
// the CONNECT connections goproxy hijacks, tracked for Shutdown and
// bounded by the client limits (conntrack.go, sessionread.go), the
// response heads held back inside an MITM session (sessionwrite.go), and
// the count of running handlers Shutdown waits for (lifetime.go).
package conns

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// HijackTracker tracks the client connections goproxy hijacks for CONNECT
// (MITM sessions and tunnels). [http.Server.Shutdown] neither waits for nor
// closes hijacked connections, so without it the audit log could close
// while requests inside an MITM session are still being decided.
//
// The Server wraps its handler with wrap and, after http.Server.Shutdown
// returned, calls shutdown before closing the audit log.
//
// It also applies the proxy listener's client limits, which net/http no
// longer does once it handed the connection over (goproxy sets no
// deadline or size bound of its own): a tunnel's client must send its
// first bytes within headerTimeout, and after that the tunnel is closed
// when no byte went either way for idleTimeout; an MITM session reads
// each request head within headerTimeout and maxHeaderBytes, and is
// bounded by idleTimeout otherwise ([sessionPhase]). Bytes the client sent
// with its CONNECT, which net/http had already buffered, are read first.
type HijackTracker struct {
	mu       sync.Mutex
	conns    map[*hijackedConn]struct{}
	draining bool       // shutdown has begun
	forced   bool       // shutdown's deadline passed: close on sight
	empty    zeroSignal // fired when conns becomes empty

	// limits are the client limits; a zero field means no bound. Set
	// before the first connection is tracked.
	limits Limits
}

// Info is what the CONNECT handler tells the tracker about one CONNECT
// request, through the request's context.
type Info struct {
	mitm atomic.Bool                  // the connection is intercepted (requests are parsed)
	conn atomic.Pointer[hijackedConn] // the connection, once hijacked
}

// EndSession makes the MITM session on the connection end after the
// response being written: its next read of a request sees end of file,
// so the session closes the connection (with a TLS close_notify). It is
// how an HTTP/1.0 client's connection is closed after its response.
func (ci *Info) EndSession() {
	c := ci.conn.Load()
	if c == nil {
		return
	}
	c.ended.Store(true)
	c.mu.Lock()
	c.drained = true
	_ = c.Conn.SetReadDeadline(aLongTimeAgo)
	c.mu.Unlock()
}

// MarkMITM records that the CONNECT's connection is intercepted: its
// requests are parsed, and Shutdown may end the session between them.
func (ci *Info) MarkMITM() { ci.mitm.Store(true) }

// HoldNext makes the session's connection, once hijacked, hold its next
// write back until the one after it (sessionwrite.go).
func (ci *Info) HoldNext() {
	if c := ci.conn.Load(); c != nil {
		c.holdNext()
	}
}

type infoKey struct{}

// InfoFrom returns the [Info] wrap put in ctx, or nil.
func InfoFrom(ctx context.Context) *Info {
	ci, _ := ctx.Value(infoKey{}).(*Info)
	return ci
}

// NewHijackTracker returns a tracker applying the proxy listener's
// client limits.
func NewHijackTracker(limits Limits) *HijackTracker {
	return &HijackTracker{conns: make(map[*hijackedConn]struct{}), limits: limits}
}

// wrap returns next with every CONNECT connection it hijacks tracked.
func (t *HijackTracker) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hj, ok := w.(http.Hijacker)
		if r.Method != http.MethodConnect || !ok {
			next.ServeHTTP(w, r)
			return
		}
		ci := &Info{}
		r = r.WithContext(context.WithValue(r.Context(), infoKey{}, ci))
		next.ServeHTTP(&trackingWriter{ResponseWriter: w, hj: hj, t: t, info: ci}, r)
	})
}

// active returns the number of tracked connections.
func (t *HijackTracker) Active() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.conns)
}

// Draining reports whether Shutdown has begun draining the connections.
func (t *HijackTracker) Draining() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.draining
}

// aLongTimeAgo is a read deadline that has passed: it makes a blocked
// Read return at once.
var aLongTimeAgo = time.Unix(1, 0)

// shutdown drains the tracked connections and waits until all are closed
// or ctx is done. MITM sessions are told to stop reading: a session idle
// between requests ends at once, one busy with a request finishes writing
// its response and then ends (a request body still being uploaded is cut
// short). Opaque tunnels cannot be drained per request, and write no
// audit record once open: they are closed at once (an idle keep-alive
// tunnel would otherwise hold every shutdown to its deadline). When ctx
// is done first, every remaining connection is closed and an error says
// how many there were. Connections hijacked after shutdown began are
// drained or closed the same way.
func (t *HijackTracker) Shutdown(ctx context.Context) error {
	t.mu.Lock()
	t.draining = true
	for c := range t.conns {
		c.drain()
	}
	if len(t.conns) == 0 {
		t.mu.Unlock()
		return nil
	}
	empty := t.empty.wait()
	t.mu.Unlock()

	select {
	case <-empty:
		return nil
	case <-ctx.Done():
	}
	t.mu.Lock()
	t.forced = true
	n := 0
	for c := range t.conns {
		if c.Conn != nil && !c.closed {
			n++ // tunnels the drain closed are not counted: their owners are just slow to notice
			c.closed = true
			_ = c.Conn.Close() // the owner's Close (via hijackedConn) untracks it
		}
	}
	t.mu.Unlock()
	if n == 0 {
		return nil
	}
	return fmt.Errorf("closed %d CONNECT connection(s) still open at the shutdown deadline: %w", n, ctx.Err())
}

func (t *HijackTracker) add(c *hijackedConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.conns[c] = struct{}{}
}

// attached records that c has been hijacked as conn. A connection
// hijacked while draining is drained at once, and closed at once after
// shutdown's deadline.
func (t *HijackTracker) attached(c *hijackedConn, conn net.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c.Conn = conn
	switch {
	case t.forced:
		_ = conn.Close()
	case t.draining:
		c.drain()
	default:
		if t.limits.headerTimeout > 0 {
			_ = conn.SetReadDeadline(time.Now().Add(t.limits.headerTimeout))
		}
	}
}

func (t *HijackTracker) remove(c *hijackedConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.conns, c)
	if len(t.conns) == 0 {
		t.empty.fire()
	}
}

// trackingWriter is the ResponseWriter goproxy sees for a CONNECT: its
// Hijack returns a tracked connection.
type trackingWriter struct {
	http.ResponseWriter
	hj   http.Hijacker
	t    *HijackTracker
	info *Info
}

// Hijack hijacks the underlying connection and tracks it. The connection
// is registered before the server marks it hijacked, so a Shutdown that
// stops waiting for it always finds it in the tracker.
func (w *trackingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	tc := &hijackedConn{t: w.t, info: w.info}
	w.t.add(tc)
	c, brw, err := w.hj.Hijack()
	if err != nil {
		w.t.remove(tc)
		return nil, nil, err
	}
	if n := brw.Reader.Buffered(); n > 0 { // sent with the CONNECT
		b, _ := brw.Reader.Peek(n)
		tc.pending = bytes.Clone(b)
	}
	w.t.attached(tc, c)
	w.info.conn.Store(tc)
	if _, ok := c.(halfCloser); ok {
		return &hijackedHalfCloser{tc}, brw, nil
	}
	return tc, brw, nil
}

// hijackedConn is a hijacked client connection; closing it untracks it.
// Its Read and Write push the read deadline back by the tracker's
// idleTimeout, and in an MITM session bound each request head
// ([sessionPhase]).
type hijackedConn struct {
	net.Conn
	t    *HijackTracker
	info *Info
	once sync.Once
	// ended is set by [Info.EndSession]: reads return io.EOF.
	ended atomic.Bool
	// tooLarge is set once a request head went over the limit: reads
	// return [errHeadTooLarge].
	tooLarge atomic.Bool
	// pending is what the client sent with its CONNECT, read first. Only
	// the connection's reader uses it.
	pending []byte

	closed bool // closed by the tracker (drain or deadline); guarded by the tracker's mu

	mu       sync.Mutex // guards the fields below and the read deadline
	drained  bool       // drain set a past read deadline: keep it
	started  bool       // the client has sent its first bytes
	extended time.Time  // when the read deadline was last pushed back

	// An MITM session's state (sessionread.go).
	phase     sessionPhase
	headBytes int             // bytes read in the current phaseHead
	heads     uint64          // requests received
	served    context.Context // the context of the request being served, in phaseBody
	sniffed   bool            // the session's first byte was seen
	tls       bool            // and it began a TLS handshake

	// The request being served, counted as running in life until
	// endServed (sessionread.go).
	counting      atomic.Bool // a request is counted in life
	life          *Lifetime
	cancelServed  context.CancelCauseFunc // ends the request's context
	sessionCtx    context.Context         // the parent of the requests' contexts
	endSessionCtx context.CancelCauseFunc // ends sessionCtx

	// A response head held back for its body's first record (sessionwrite.go).
	wmu     sync.Mutex // guards w and the writes
	w       heldWrite
	holding atomic.Bool // w holds a write
}

// Read reads from the connection; receiving bytes keeps it alive. After
// EndSession, it reports end of file.
func (c *hijackedConn) Read(p []byte) (int, error) {
	if err := c.flushHeld(); err != nil {
		return 0, err
	}
	if c.counting.Load() { // the response may have been written: the request ends
		c.mu.Lock()
		c.endServed(false)
		c.mu.Unlock()
	}
	if c.ended.Load() {
		return 0, io.EOF
	}
	if c.tooLarge.Load() {
		return 0, errHeadTooLarge
	}
	var (
		n   int
		err error
	)
	if len(c.pending) > 0 {
		n = copy(p, c.pending)
		c.pending = c.pending[n:]
	} else {
		n, err = c.Conn.Read(p)
	}
	if err != nil && c.ended.Load() {
		return 0, io.EOF // woken by EndSession's deadline
	}
	if n > 0 {
		if rerr := c.received(p[:n]); rerr != nil {
			return 0, rerr
		}
	}
	return n, err
}

// Write writes to the connection; once the client has sent its first
// bytes, sending bytes keeps it alive too (a download through a tunnel,
// a long response streamed to an MITM client).
func (c *hijackedConn) Write(p []byte) (int, error) {
	n, err := c.write(p) // or held back (sessionwrite.go)
	if n > 0 && c.sending() {
		c.active(false)
	}
	return n, err
}

// active pushes the read deadline back by idleTimeout after bytes went
// through (read tells which way). It moves the deadline at most every
// idleTimeout/16, keeping Read and Write cheap on busy connections.
func (c *hijackedConn) active(read bool) {
	idle := c.t.limits.idleTimeout
	if idle <= 0 {
		return
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if read {
		c.started = true
	}
	if !c.started || c.drained || now.Sub(c.extended) < idle/16 {
		return
	}
	c.extended = now
	_ = c.Conn.SetReadDeadline(now.Add(idle))
}

// Close closes the connection and stops tracking it.
func (c *hijackedConn) Close() error {
	_ = c.flushHeld()
	c.mu.Lock()
	c.endServed(true)
	if c.endSessionCtx != nil {
		c.endSessionCtx(context.Canceled)
	}
	c.mu.Unlock()
	err := c.Conn.Close()
	c.once.Do(func() { c.t.remove(c) })
	if errors.Is(err, net.ErrClosed) {
		return nil // force-closed by shutdown
	}
	return err
}

// drain makes an MITM session stop after its current request, and closes
// any other connection (an opaque tunnel). Called with the tracker's lock
// held.
func (c *hijackedConn) drain() {
	if c.Conn == nil {
		return // not hijacked yet: attached drains it
	}
	if c.info == nil || !c.info.mitm.Load() {
		c.closed = true
		_ = c.Conn.Close() // the owner's Close (via hijackedConn) untracks it
		return
	}
	c.mu.Lock()
	c.drained = true
	_ = c.Conn.SetReadDeadline(aLongTimeAgo)
	c.mu.Unlock()
}

type halfCloser interface {
	CloseRead() error
	CloseWrite() error
}

// hijackedHalfCloser keeps a TCP connection's half-close methods visible,
// so that goproxy's tunnel can close each direction on its own.
type hijackedHalfCloser struct{ *hijackedConn }

// CloseRead shuts down the reading side of the connection.
func (c *hijackedHalfCloser) CloseRead() error { return c.Conn.(halfCloser).CloseRead() }

// CloseWrite shuts down the writing side of the connection.
func (c *hijackedHalfCloser) CloseWrite() error { return c.Conn.(halfCloser).CloseWrite() }
