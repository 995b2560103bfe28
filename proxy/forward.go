package proxy

import (
	"context"
	"io"
	"net/http"
	"sync"

	"golang.org/x/net/http/httpguts"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/bodyscan"
	"github.com/robotsgate/robotsgate/proxy/upstream"
)

// Forwarding: the step that removes hop-by-hop headers both ways, as
// net/http/httputil.ReverseProxy does (hopHeadersStep), the last request
// step (forwardStep), the pooled copy of a forwarded body (copyBody), and
// the last response steps, which frame the answer's writing
// (holdHeadStep, http10Step).

// copyBufSize is the size of the buffers that forwarded bodies are copied
// through, as [io.Copy]'s.
const copyBufSize = 32 << 10

// forwardStep is the last request step, for requests about to be
// forwarded: onRequest keeps the client's User-Agent as it was sent, and
// the hook adapter then has [forwardStep.tripperFor] (engine.go) wrap
// the request's round tripper so that, as the response arrives
// and before goproxy takes hold of its body, robot tags are scanned
// ([bodyscan.RobotTags], when robot_tags is on) and the body is wrapped in a
// *[copyBody]. A body replaced later, in a response hook, would make goproxy
// drop Content-Length (and chunk MITM responses); replaced here, it is the
// body goproxy forwards as is. Requests answered by an earlier request
// hook never reach it.
//
// The two usual round trippers (goproxy's transport for plain HTTP, and
// [mitmTripper] inside MITM sessions) are wrapped by values built once per
// Server, not by a closure per request.
//
// State: reads and writes nothing; the round tripper it installs writes
// Body ([requestState]).
type forwardStep struct {
	s           *Server
	plain, mitm forwardTripper
}

func (f *forwardStep) init(s *Server) {
	f.s = s
	f.plain = forwardTripper{s: s}
	f.mitm = forwardTripper{s: s, next: mitmTripper{s: s}}
}

func (f *forwardStep) onRequest(r *http.Request, _ *requestState) outcome {
	// The request leaves with the headers the client sent: Go's transport
	// adds "User-Agent: Go-http-client/1.1" unless the header is present,
	// and leaves it out when its value is empty.
	if _, ok := r.Header["User-Agent"]; !ok {
		r.Header["User-Agent"] = []string{""}
	}
	return outcome{}
}

// forwardable is req as it is forwarded. The client's connection (an
// HTTP/1.0 client, Connection: close) is not the origin's: the upstream
// connection is kept, unless the request has a body. An origin that
// ignores a body it did not expect ("CL.0") reads that body as the next
// request, which robotsgate never decided, and answers it on the
// connection: reused, the answer would reach the next client to take it.
// After a body, the connection is closed (Connection: close), never
// pooled.
//
// A chunked request's trailer section is never forwarded
// ([dropTrailer]): the transport sends the fields of req.Trailer after
// the body, where the header's stripping never sees them.
func forwardable(req *http.Request) *http.Request {
	if closeAfter := req.ContentLength != 0; req.Close != closeAfter || req.Trailer != nil {
		out := *req
		out.Close = closeAfter
		dropTrailer(&out)
		req = &out
	}
	return req
}

// received prepares the origin's response resp to the request of st for
// goproxy, before goproxy takes hold of its body: robot tags are scanned
// (when robot_tags or declared purposes need them) and the body wrapped
// in a *[copyBody], kept in st.Body.
func (s *Server) received(resp *http.Response, st *requestState) {
	var scan *tagScan
	var cb *copyBody
	if tags := s.settings(st).cfg.RobotTags; tags.Mode != config.RobotTagsOff || st.Purposes != 0 { // meta noai (usage.go)
		// The scan is kept in the body's wrapper when there will be one:
		// one allocation for both.
		var into *tagScan
		if wrappable(resp) {
			cb = &copyBody{}
			into = &cb.ownScan
		}
		scan = bodyscan.RobotTagsInto(resp, tags, into) // robottags.go
	}
	if b := s.wrapBody(resp, scan, cb); b != nil {
		st.Body = b
	}
}

// copyBody is a forwarded response's body. It implements [io.WriterTo], so
// that goproxy's [io.Copy] to the client writes through the
// [http.ResponseWriter] with a pooled buffer. Without it, io.Copy hands the
// body to the ResponseWriter's ReadFrom, which (for a body of known
// length) flushes the response header in a write of its own and then
// copies the body straight to the connection through a fresh 32 KiB
// buffer per response: one more write syscall and 32 KiB more garbage
// for every request, which under load cost more CPU than all of
// robotsgate's own per-request work. Through WriteTo, the header and a
// small body leave in one write, as from any handler.
//
// It also carries the robot-tag scan of the round trip (nil when robot
// tags are off), so that the response hook need not scan again.
type copyBody struct {
	io.ReadCloser
	scan *tagScan
	bufs *sync.Pool // of *[]byte, copyBufSize long
	// stream is set for a body of unknown length: its first bytes may come
	// much later than the header (an event stream, a long poll), so the
	// header is flushed before the body is first read.
	stream bool
	// ownScan holds the scan when it was made for this wrapper
	// ([forwardTripper.RoundTrip]); scan points to it then.
	ownScan tagScan
}

// wrappable reports whether [Server.wrapBody] wraps resp's body: not
// when resp has no body, or a body that must keep its own type: the
// [io.ReadWriter] of a 101 Switching Protocols response (WebSocket),
// which goproxy looks for.
func wrappable(resp *http.Response) bool {
	b := resp.Body
	if b == nil || b == http.NoBody || resp.StatusCode == http.StatusSwitchingProtocols {
		return false
	}
	_, w := b.(io.Writer)
	return !w
}

// wrapBody replaces resp.Body by a *[copyBody] holding scan and returns it
// (cb, when not nil, filled in; else a new one); it returns nil and leaves
// resp alone when its body is not [wrappable].
func (s *Server) wrapBody(resp *http.Response, scan *tagScan, cb *copyBody) *copyBody {
	if !wrappable(resp) {
		return nil
	}
	if cb == nil {
		cb = new(copyBody)
	}
	cb.ReadCloser, cb.scan, cb.bufs = resp.Body, scan, &s.copyBufs
	cb.stream = resp.ContentLength < 0
	resp.Body = cb
	return cb
}

// TagScan is the robot-tag scan of b's first bytes ([bodyscan.Of]).
func (b *copyBody) TagScan() *tagScan { return b.scan }

// WriteTo copies the body to w until EOF or an error. When a read ends
// without reaching the end of the body, what was read is flushed to the
// client at once (when w is an [http.Flusher]) rather than left in the
// server's write buffer: a body arriving slowly reaches the client as it
// arrives, as it did when copied straight to the connection. The last
// piece (which the transport returns together with io.EOF for a body of
// known length) is not flushed: the server sends it with the header, or
// when the handler returns. A body of unknown length has the header
// flushed before its first read, so that the client is not left without
// the header while the origin withholds the body (through goproxy's
// flushing writer, which is no [http.Flusher], by an empty write).
func (b *copyBody) WriteTo(w io.Writer) (int64, error) {
	bufp, _ := b.bufs.Get().(*[]byte)
	if bufp == nil {
		buf := make([]byte, copyBufSize)
		bufp = &buf
	}
	defer b.bufs.Put(bufp)
	buf := *bufp
	flusher, _ := w.(http.Flusher)
	if b.stream {
		if flusher != nil {
			flusher.Flush()
		} else if _, err := w.Write(nil); err != nil { // goproxy's flushing writer flushes after any write
			return 0, err
		}
	}
	var n int64
	for {
		nr, rerr := b.ReadCloser.Read(buf)
		if nr > 0 {
			nw, werr := w.Write(buf[:nr])
			n += int64(nw)
			if werr != nil {
				return n, werr
			}
			if nw != nr {
				return n, io.ErrShortWrite
			}
			if rerr == nil && flusher != nil {
				flusher.Flush()
			}
		}
		if rerr != nil {
			if rerr == io.EOF { // as io.Copy: only the bare io.EOF ends a body normally
				return n, nil
			}
			return n, rerr
		}
	}
}

// holdHeadStep is a response step, before the last (the held write
// itself: [conns.Info.HoldNext]): when the response it lets goproxy
// write inside an MITM session has a body, it has the session's
// connection hold the head back for the body's first record.
//
// State: reads the via (Session); writes nothing ([requestState]).
type holdHeadStep struct{}

func (holdHeadStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	if st.Session == nil || st.Session.Conn == nil || !bodyFollows(st.Req, resp) {
		return resp, outcome{}
	}
	st.Session.Conn.HoldNext()
	return resp, outcome{}
}

// bodyFollows reports whether [http.Response.Write] of resp, the answer
// to r, writes a body of known, non-zero length after the head. A body of
// unknown length (chunked, or read to the connection's end) may be a
// stream whose first bytes come much later, so its head is not held: the
// client sees the head as soon as the origin sends it. A body that turns
// out shorter than announced leaves the held head to the session's next
// read.
func bodyFollows(r *http.Request, resp *http.Response) bool {
	switch {
	case resp == nil || r == nil || resp.Body == nil || resp.Body == http.NoBody || resp.ContentLength <= 0:
		return false
	case r.Method == http.MethodHead || (resp.Request != nil && resp.Request.Method == http.MethodHead):
		return false
	case resp.StatusCode < 200 || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified:
		return false
	}
	return true
}

// closeDelimited is the placeholder Content-Length header value http10Step
// sets on a response of unknown length to an HTTP/1.0 client inside an
// MITM session. goproxy's MITM loop chunks every response whose length
// is unknown unless a Content-Length header is present; [http.Response]'s
// Write never sends that header from the map (it writes the length
// from ContentLength, here none), and ends the body by closing.
const closeDelimited = "close-delimited"

// http10Step is the last response step: it answers an HTTP/1.0 client inside
// an MITM session in HTTP/1.0 terms, which goproxy's MITM loop does not
// (it chunks bodies of unknown length and keeps every connection open).
// net/http does this itself for plain HTTP requests.
//
//   - The body is never chunked: it goes with its Content-Length when the
//     length is known, and otherwise until the connection closes.
//   - The connection stays open only when the client asked for keep-alive
//     and the length is known (the answer then says Connection:
//     keep-alive); otherwise the answer says Connection: close and the
//     session ends once it is written ([conns.Info.EndSession]).
//
// The status line stays HTTP/1.1, as goproxy writes it: RFC 9110 section
// 2.5 has a server answer with the highest minor version it supports.
//
// State: reads the via (Session); writes nothing ([requestState]).
type http10Step struct{}

func (http10Step) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	r := st.Req
	sess := st.Session
	if resp == nil || r == nil || r.ProtoAtLeast(1, 1) || sess == nil {
		return resp, outcome{}
	}
	bodyless := r.Method == http.MethodHead || resp.Body == nil || resp.Body == http.NoBody ||
		(resp.StatusCode >= 100 && resp.StatusCode <= 199) || resp.StatusCode == http.StatusNoContent ||
		resp.StatusCode == http.StatusNotModified
	if !bodyless && st.Body != nil && resp.Body != st.Body {
		// A hook replaced the forwarded response (a robot-tag refusal):
		// goproxy would chunk a body other than the round trip's, so the
		// new one travels inside the round trip's.
		st.Body.ReadCloser, st.Body.scan = resp.Body, nil
		resp.Body = st.Body
	}
	// No chunking for an HTTP/1.0 client: not the origin's (which
	// http.Response.Write would repeat), nor the header finish sets for
	// streaming.
	resp.TransferEncoding = nil
	resp.Header.Del("Transfer-Encoding")
	unknown := !bodyless && resp.ContentLength < 0
	if unknown {
		resp.Header.Set("Content-Length", closeDelimited)
	}
	if !r.Close && !unknown {
		resp.Close = false
		resp.Header.Set("Connection", "keep-alive")
		return resp, outcome{}
	}
	resp.Close = true
	if sess.Conn != nil {
		context.AfterFunc(r.Context(), sess.Conn.EndSession) // once the response is written
	}
	return resp, outcome{}
}

// dropTrailer removes the trailer section of a request about to be
// sent, the one copy of it the transport reads: net/http's server fills
// req.Trailer (the fields a Trailer header declares, and every other
// field of the section with them) as the body ends, and the transport
// writes the fields of the map it was given after the body and declares
// them in a Trailer header of its own. A client's trailer could carry
// what the header's stripping removes (Proxy-Authorization, fields its
// Connection names, X-Robots-* overrides, a second Host), and no request
// robotsgate forwards needs one, so the section is dropped whole rather
// than filtered field by field. The map is replaced, not emptied: the
// server still writes the client's fields into it while the body is read.
func dropTrailer(req *http.Request) {
	req.Trailer = nil
}

// hopHeadersStep is the step that removes hop-by-hop headers, from the request
// and from the response.
//
// State: reads and writes nothing ([requestState]).
type hopHeadersStep struct{}

// onRequest removes hop-by-hop headers before the request is decided and
// forwarded. Like [httputil.ReverseProxy] it keeps "TE: trailers" and a
// WebSocket upgrade (Connection: Upgrade, Upgrade: websocket), which
// goproxy relays; other upgrades (h2c, ...) are dropped, so the origin answers
// plain HTTP/1.1.
func (hopHeadersStep) onRequest(r *http.Request, _ *requestState) outcome {
	h := r.Header
	ws := upstream.IsWebSocketUpgrade(h)
	var upgrade string
	if ws {
		upgrade = h.Get("Upgrade")
	}
	trailers := httpguts.HeaderValuesContainsToken(h["Te"], "trailers")
	upstream.RemoveHopByHop(h)
	if ws {
		h.Set("Connection", "Upgrade")
		h.Set("Upgrade", upgrade)
	}
	if trailers {
		h.Set("Te", "trailers")
	}
	return outcome{}
}

// onResponse removes the origin's
// hop-by-hop headers (Connection, Keep-Alive, Proxy-Authenticate, the
// headers Connection names, ...) before goproxy copies the header to the
// client; a 101 WebSocket handshake keeps Connection and Upgrade, which
// goproxy needs to relay it. Transfer-Encoding is set again later (finish)
// when the body is streamed.
func (hopHeadersStep) onResponse(resp *http.Response, _ *requestState) (*http.Response, outcome) {
	if resp == nil {
		return nil, outcome{}
	}
	h := resp.Header
	if resp.StatusCode == http.StatusSwitchingProtocols && upstream.IsWebSocketUpgrade(h) {
		upgrade := h.Get("Upgrade")
		upstream.RemoveHopByHop(h)
		h.Set("Connection", "Upgrade")
		h.Set("Upgrade", upgrade)
		return resp, outcome{}
	}
	upstream.RemoveHopByHop(h)
	return resp, outcome{}
}
