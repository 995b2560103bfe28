package upstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/robotsgate/robotsgate/proxy/selfaddr"
)

// The policy fetch whose connection may be handed off (handoff.go). The
// policy transport's own round trip cannot say whether a response ended
// cleanly: net/http keeps the connection's read buffer. So a plain-HTTP
// GET is exchanged here instead, on a connection of the policy
// transport's dialer (the same guarded, pinned, self-refusing dialer),
// with net/http's own response parser on a buffer this code owns, and the
// connection is parked only when:
//
//   - the response is HTTP/1.1 or later and does not ask to close
//     (Connection: close, or a body delimited by the end of the
//     connection);
//   - its body was read to its end, as its framing (Content-Length or
//     chunked) delimits it, before the fetch's deadline;
//   - nothing follows it: nothing left in the buffer, nothing waiting on
//     the socket (Quiet).
//
// Anything else closes the connection, as before. HTTPS fetches and
// fetches through an upstream proxy take the transport's usual path
// ([http.ErrSkipAltProtocol]).

// maxPolicyHeaderBytes bounds a policy response's header, as the default of
// [http.Transport.MaxResponseHeaderBytes] bounds the transport's.
const maxPolicyHeaderBytes = 10 << 20

// max1xx is how many informational responses are skipped, as net/http
// does.
const max1xx = 5

// errHeaderTimeout is the error of a response header that did not arrive
// within [responseHeaderTimeout].
var errHeaderTimeout = fmt.Errorf("timeout awaiting response headers: %w", os.ErrDeadlineExceeded)

// firstExchange is the policy transport's round tripper for "http" URLs
// ([http.Transport.RegisterProtocol]).
type firstExchange struct {
	dial selfaddr.DialFunc // the policy transport's
	lot  *Handoff
}

// NewFirstExchange returns the round tripper that exchanges plain-HTTP
// policy fetches on connections of dial, the policy transport's, and
// parks those that ended cleanly in lot.
func NewFirstExchange(dial selfaddr.DialFunc, lot *Handoff) http.RoundTripper {
	return &firstExchange{dial: dial, lot: lot}
}

// RoundTrip exchanges req on a fresh connection, or leaves it to the
// transport ([http.ErrSkipAltProtocol]).
func (x *firstExchange) RoundTrip(req *http.Request) (*http.Response, error) {
	if !CanHandOff || req.Method != http.MethodGet || req.URL.Scheme != "http" || req.Close || req.Body != nil && req.Body != http.NoBody {
		return nil, http.ErrSkipAltProtocol
	}
	ctx := req.Context()
	host := strings.ToLower(req.URL.Hostname())
	port := req.URL.Port()
	if port == "" {
		port = "80"
	}
	conn, err := x.dial(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, err
	}
	if !Quiet(conn) { // bytes before the request: not an answer
		conn.Close()
		return nil, errEarlyResponse
	}
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(aLongTimeAgo) })
	resp, br, err := exchange(conn, req)
	if err != nil {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return nil, err
	}
	k, keyed := handoffKeyOf(host, conn.RemoteAddr())
	resp.Body = &exchangeBody{body: resp.Body, br: br, conn: conn, stop: stop, lot: x.lot, key: k,
		reusable: keyed && resp.ProtoAtLeast(1, 1) && !resp.Close && resp.StatusCode >= 200}
	return resp, nil
}

// exchange writes req on conn and reads its response (the informational
// ones skipped) through a buffer it returns, the header bounded in size
// and time.
func exchange(conn net.Conn, req *http.Request) (*http.Response, *bufio.Reader, error) {
	if err := writeRequest(conn, req); err != nil {
		return nil, nil, err
	}
	lim := &headerLimit{r: conn, n: maxPolicyHeaderBytes}
	br := bufio.NewReader(lim)
	timer := time.AfterFunc(responseHeaderTimeout, func() { conn.SetReadDeadline(aLongTimeAgo) })
	defer timer.Stop()
	for n := 0; ; n++ {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			if !timer.Stop() {
				return nil, nil, errHeaderTimeout
			}
			return nil, nil, err
		}
		if c := resp.StatusCode; c >= 100 && c <= 199 && c != http.StatusSwitchingProtocols {
			if n >= max1xx {
				return nil, nil, errors.New("too many 1xx informational responses")
			}
			continue
		}
		if !timer.Stop() {
			resp.Body.Close()
			return nil, nil, errHeaderTimeout
		}
		lim.n = -1
		return resp, br, nil
	}
}

// policyWriters holds the write buffers of [writeRequest], each used for
// one request's write and flush and then put back.
var policyWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, policyWriteBuffer) }}

// writeRequest writes req on conn through a pooled buffer, flushed.
func writeRequest(conn net.Conn, req *http.Request) error {
	bw := policyWriters.Get().(*bufio.Writer)
	bw.Reset(conn)
	err := req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil) // no reference to conn or unflushed bytes stays in the pool
	policyWriters.Put(bw)
	return err
}

// headerLimit reads from r at most n bytes (n < 0: no limit), then fails.
type headerLimit struct {
	r io.Reader
	n int64
}

func (l *headerLimit) Read(p []byte) (int, error) {
	if l.n < 0 {
		return l.r.Read(p)
	}
	if l.n == 0 {
		return 0, fmt.Errorf("server response headers exceeded %d bytes; aborted", maxPolicyHeaderBytes)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// exchangeBody is the body of a response read by [firstExchange]: at its
// clean end the connection is parked, otherwise closed.
type exchangeBody struct {
	body     io.ReadCloser
	br       *bufio.Reader
	conn     net.Conn
	stop     func() bool // stops the context's abort; false once it ran
	lot      *Handoff
	key      handoffKey
	reusable bool

	mu   sync.Mutex
	done bool
}

func (b *exchangeBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err == io.EOF {
		b.finish(true)
	}
	return n, err
}

// Close closes the connection unless the body was read to its end.
func (b *exchangeBody) Close() error {
	b.finish(false)
	return nil
}

// finish parks the connection if the body ended cleanly (eof) and
// nothing follows it, or closes it; once.
func (b *exchangeBody) finish(eof bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.done = true
	aborted := !b.stop()
	if eof && b.reusable && !aborted && b.br.Buffered() == 0 && Quiet(b.conn) && b.conn.SetDeadline(time.Time{}) == nil {
		b.lot.park(b.key, b.conn)
		return
	}
	b.conn.Close()
}
