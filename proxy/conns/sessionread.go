package conns

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
)

// Limits bound what a client may send and how long it may take. The
// proxy listener's [http.Server] and the requests read inside a CONNECT
// session (goproxy's MITM loop, which reads them itself) apply the same
// values ([config.ClientConfig]).
type Limits struct {
	maxHeaderBytes int           // a longer request head is answered 431
	headerTimeout  time.Duration // bound of reading one request head
	idleTimeout    time.Duration // silence allowed between requests, and while one is served
}

func LimitsOf(c config.ClientConfig) Limits {
	return Limits{maxHeaderBytes: c.MaxHeaderBytes, headerTimeout: c.HeaderTimeout, idleTimeout: c.IdleTimeout}
}

// headSlack is what a session may read while it reads a request head
// beyond maxHeaderBytes: the TLS handshake and record overhead, and what
// goproxy's and crypto/tls's buffered readers read ahead. net/http allows
// a few KiB over MaxHeaderBytes too.
const headSlack = 64 << 10

// tlsHandshakeRecord is the first byte of a TLS session (a handshake
// record): a session that starts otherwise is plain HTTP.
const tlsHandshakeRecord = 0x16

// lingerOn431 is how long a plain session that was answered 431 keeps
// reading (and discarding) what the client still sends before it closes,
// so that closing with unread bytes does not reset the connection before
// the client read the answer. net/http lingers as long.
const lingerOn431 = 500 * time.Millisecond

// answer431 is net/http's answer to a request head over MaxHeaderBytes.
const answer431 = "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n" +
	"Connection: close\r\n\r\n431 Request Header Fields Too Large"

// errHeadTooLarge is what reading a session returns once a request head
// went over client.max_header_bytes.
var errHeadTooLarge = errors.New("request head inside a CONNECT session larger than client.max_header_bytes")

// sessionPhase is what an MITM session's connection is reading.
//
// A session starts in [phaseHead]: its TLS handshake (if any) and its first
// request head must arrive within headerTimeout and maxHeaderBytes (plus
// [headSlack]). When the pipeline received the request ([Info.RequestRead]),
// the session is in [phaseBody]: its body is read and its response written,
// bounded by idleTimeout of silence as before. Once the response is written
// ([hijackedConn.endServed]) the session is in [phaseIdle]: the client has
// idleTimeout to begin its next request, whose first byte starts a new
// phaseHead. Bytes sent to the client never extend a head's deadline.
type sessionPhase uint8

const (
	phaseHead sessionPhase = iota
	phaseBody
	phaseIdle
)

// received accounts for the bytes b just read from the client: in a tunnel
// they keep the connection alive; in an MITM session they count against
// the current request head, or keep a request being served alive. It
// returns [errHeadTooLarge] when the head went over its bound.
func (c *hijackedConn) received(b []byte) error {
	if c.info == nil || !c.info.mitm.Load() {
		c.active(true)
		return nil
	}
	lim := c.t.limits
	c.mu.Lock()
	if !c.sniffed {
		c.sniffed, c.tls = true, b[0] == tlsHandshakeRecord
	}
	if c.phase == phaseBody && c.served.Err() != nil {
		c.phase = phaseIdle // written: endServed may not have run yet
	}
	switch c.phase {
	case phaseBody:
		c.mu.Unlock()
		c.active(true)
		return nil
	case phaseIdle: // the first bytes of the next request
		c.phase, c.headBytes = phaseHead, 0
		c.setReadDeadline(time.Now(), lim.headerTimeout)
	}
	c.started = true
	c.headBytes += len(b)
	over := lim.maxHeaderBytes > 0 && c.headBytes > lim.maxHeaderBytes+headSlack
	plain := !c.tls
	c.mu.Unlock()
	if !over {
		return nil
	}
	c.tooLarge.Store(true)
	if plain { // inside TLS only goproxy could write an answer: the session is closed
		c.answer431()
	}
	return errHeadTooLarge
}

// answer431 answers a plain session whose request head is too large as
// net/http does: 431, then a short linger before the connection closes.
func (c *hijackedConn) answer431() {
	_, _ = io.WriteString(c.Conn, answer431)
	if hc, ok := c.Conn.(halfCloser); ok {
		_ = hc.CloseWrite()
	}
	c.mu.Lock()
	c.setReadDeadline(time.Now(), lingerOn431)
	c.mu.Unlock()
	_, _ = io.Copy(io.Discard, c.Conn)
}

// sending reports whether bytes written to the client may extend the read
// deadline: in a tunnel always, in an MITM session only while a request
// is served (a response streamed to the client).
func (c *hijackedConn) sending() bool {
	if c.info == nil || !c.info.mitm.Load() {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.phase == phaseBody
}

// setReadDeadline sets the connection's read deadline to d from now (no
// deadline when d is zero) unless a drain or EndSession set a past one,
// which stays. Called with c.mu held.
func (c *hijackedConn) setReadDeadline(now time.Time, d time.Duration) {
	if c.drained {
		return
	}
	var t time.Time
	if d > 0 {
		t = now.Add(d)
	}
	_ = c.Conn.SetReadDeadline(t)
}

// RequestRead tells the session's connection that the pipeline received
// a request, which is served until served (goproxy's context of the
// request) ends: its body and response are bounded by idleTimeout of
// silence, no longer by the head's deadline and size. It returns the
// context of the request: it ends when served does (just after), and at
// Shutdown's deadline (life's hard context ends) with its cause. Until
// the request ends it counts as running in life. It reports false,
// having done nothing, when the connection is not tracked.
//
// The end of served is noticed where the session goes on after the
// response was written, in the goroutine that wrote it: its next read
// from the connection, its next request (read ahead), or Close
// ([hijackedConn.endServed]). The contexts of a session's requests are
// children of one context of the session, a child of life's hard
// context: one registration with the hard context per session, not one
// per request, and none with goproxy's context.
func (ci *Info) RequestRead(served context.Context, life *Lifetime) (context.Context, bool) {
	if ci == nil {
		return nil, false
	}
	c := ci.conn.Load()
	if c == nil {
		return nil, false
	}
	c.nextResponse() // a pipelined request, read ahead: the last response goes first
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endServed(false) // the last request's, unless a read already ended it
	if c.sessionCtx == nil {
		c.sessionCtx, c.endSessionCtx = context.WithCancelCause(life.hard)
	}
	life.Enter()
	var ctx context.Context
	ctx, c.cancelServed = context.WithCancelCause(c.sessionCtx)
	c.life = life
	c.counting.Store(true)
	c.heads++
	c.phase, c.served = phaseBody, served
	c.extended = time.Now()
	c.setReadDeadline(c.extended, c.t.limits.idleTimeout)
	return ctx, true
}

// endServed ends the request RequestRead counted once its response was
// written (served ended), or at once with force: its context ends, it no
// longer counts as running, and the client has idleTimeout to begin the
// next request unless its first bytes were already read. Called with c.mu
// held.
func (c *hijackedConn) endServed(force bool) {
	if !c.counting.Load() || (!force && c.served.Err() == nil) {
		return
	}
	c.counting.Store(false)
	c.cancelServed(context.Canceled)
	c.cancelServed = nil
	c.life.Leave()
	if c.phase == phaseBody {
		c.phase = phaseIdle
		c.setReadDeadline(time.Now(), c.t.limits.idleTimeout)
	}
}

// BoundBody returns next with the body of every plain-HTTP request bounded
// by idleTimeout of silence, as the bodies read inside a CONNECT session
// are ([sessionPhase]): each read must receive bytes within it, else the
// read fails and so does the request. net/http's own bound, ReadTimeout,
// counts from the request's start and would also cancel the long
// downloads of requests that sent a body.
func (l Limits) BoundBody(next http.Handler) http.Handler {
	if l.idleTimeout <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.Method == http.MethodConnect {
			next.ServeHTTP(w, r)
			return
		}
		b := &boundedBody{ReadCloser: r.Body, rc: http.NewResponseController(w), idle: l.idleTimeout}
		defer b.release()
		r.Body = b
		next.ServeHTTP(w, r)
	})
}

// boundedBody is a request body whose reads move the connection's read
// deadline idle ahead (at most every idle/16). At the body's end the
// deadline is cleared, so that it bounds nothing but the body: net/http's
// wait for the client closing, which begins there, must not cut a long
// response. A body cut short keeps it: net/http's discarding of the rest
// stays bounded, and it sets its own deadline before the next request.
type boundedBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	idle time.Duration

	eof atomic.Bool // the body ended: later reads report io.EOF again

	mu       sync.Mutex
	done     bool      // the body ended, or the handler returned: the deadline is no longer ours
	extended time.Time // when the deadline was last moved
}

func (b *boundedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if now := time.Now(); !b.done && now.Sub(b.extended) >= b.idle/16 {
		b.extended = now
		_ = b.rc.SetReadDeadline(now.Add(b.idle))
	}
	b.mu.Unlock()
	if b.eof.Load() { // net/http may have closed the body meanwhile
		return 0, io.EOF
	}
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof.Store(true)
		b.mu.Lock()
		if !b.done {
			_ = b.rc.SetReadDeadline(time.Time{})
			b.done = true
		}
		b.mu.Unlock()
	}
	return n, err
}

// release is called when the handler returns: a transport still reading
// the body must not touch the connection any more.
func (b *boundedBody) release() {
	b.mu.Lock()
	b.done = true
	b.mu.Unlock()
}
