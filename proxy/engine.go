package proxy

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/elazarl/goproxy"
	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
)

// The goproxy engine: every adapter between goproxy and robotsgate's
// steps, which see net/http types and the request state only. goproxy
// calls enter, requestHook and responseHook (registered by hook), the
// round trippers installed per request, and goproxyLogger; the CONNECT
// handler is connect.go's. A request inside an MITM session is counted
// as running for Shutdown by track, which enter calls first.
//
// The goproxy behaviours robotsgate relies on (checked again at every
// upgrade of github.com/elazarl/goproxy):
//   - Request hooks run in registration order and the first non-nil
//     response ends them; response hooks also run for robotsgate's own
//     answers, and get resp == nil with ctx.Error set when forwarding
//     failed (otherwise goproxy answers 500 itself: upstreamFailureStep
//     answers first).
//   - ctx.UserData lives from the first request hook to the last
//     response hook; inside an MITM session each request's ctx starts
//     with the CONNECT's UserData (the [session]).
//   - ctx.RoundTripper, when set by a request hook, forwards the request;
//     a response body set in the round trip is forwarded as is, one
//     replaced in a response hook loses Content-Length and is chunked.
//   - The MITM loop writes a response's head and body in two writes (the
//     head through a flushing writer: holdHeadStep, sessionwrite.go) and
//     chunks a body of unknown length; it sets no deadline on a
//     connection after hijacking it (the session's limits are robotsgate's).
//   - NewProxyHttpServer reads HTTPS_PROXY into ConnectDial and sets
//     Tr.Proxy from the environment (newGoproxy resets both).
//   - ctx.Resp with RejectConnect answers a CONNECT with that response.
//   - The warning format strings of [goproxyWarnings], matched exactly in
//     goproxyLogger; TestGoproxyWarningsExist reads the pinned goproxy
//     module's source and fails when one no longer exists there.

// goproxyServer is goproxy's proxy, which a Server wraps.
type goproxyServer = goproxy.ProxyHttpServer

// hook registers the request steps' and response steps' adapters with p.
// enter counts the request for Shutdown and creates its state: it is not
// a step, every step needs what it does.
func (s *Server) hook(p *goproxy.ProxyHttpServer) {
	p.OnRequest().DoFunc(s.enter)
	p.OnRequest().DoFunc(s.requestHook)
	p.OnResponse().DoFunc(s.responseHook)
}

// stateOf returns ctx's request state, creating it if [Server.enter] did
// not run (a CONNECT).
func stateOf(ctx *goproxy.ProxyCtx) *requestState {
	if st, ok := ctx.UserData.(*requestState); ok {
		return st
	}
	sess, _ := ctx.UserData.(*session)
	st := newRequestState(ctx.Req, sess, nil)
	ctx.UserData = st
	return st
}

// requestHook runs the request steps in order, each with the request's
// state, and carries out each outcome; the first that answers the
// request ends the walk, and its answer is the response.
func (s *Server) requestHook(r *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	st := stateOf(ctx)
	st.Req = r
	for _, list := range [...][]requestStep{s.steps.request, s.settings(st).request, s.steps.lastRequest} {
		for _, step := range list {
			o := step.onRequest(st.Req, st)
			if o.settles() {
				if answer := s.settle(st.Req, st, o); answer != nil {
					ctx.Req = st.Req
					return st.Req, answer
				}
			}
		}
	}
	ctx.Req = st.Req
	ctx.RoundTripper = s.fwd.tripperFor(ctx.RoundTripper) // (forwardStep, forward.go)
	return st.Req, nil
}

// responseHook runs the response steps in order, each with the request's
// state, and carries out each outcome; a refusal replaces the response.
// The steps of the request's settings see only a response from the
// origin ([fromOrigin]).
func (s *Server) responseHook(resp *http.Response, ctx *goproxy.ProxyCtx) *http.Response {
	st := stateOf(ctx)
	st.Req, st.Err = ctx.Req, ctx.Error
	resp = s.walkResponse(s.steps.response, resp, st, false)
	resp = s.walkResponse(s.settings(st).response, resp, st, true)
	return s.walkResponse(s.steps.lastResponse, resp, st, false)
}

// walkResponse runs the response steps list on resp; with originOnly, it
// stops at the first response that is not the origin's.
func (s *Server) walkResponse(list []responseStep, resp *http.Response, st *requestState, originOnly bool) *http.Response {
	for _, step := range list {
		if originOnly && !fromOrigin(resp, st) {
			return resp
		}
		var o outcome
		resp, o = step.onResponse(resp, st)
		if !o.settles() {
			continue
		}
		if answer := s.settle(st.Req, st, o); answer != nil {
			resp = answer
		}
	}
	return resp
}

// fromOrigin reports whether resp is the origin's answer to the request:
// not robotsgate's own (a refusal, or the answer to a failed forward).
func fromOrigin(resp *http.Response, st *requestState) bool {
	return resp != nil && st.Err == nil && !st.Answered
}

// enter is the first request hook: it counts the request as running
// (track) and starts its state. A request inside an MITM session finds
// its CONNECT's [session] in ctx.UserData, and its state keeps it.
func (s *Server) enter(r *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	r = s.track(r, ctx)
	sess, _ := ctx.UserData.(*session)
	ctx.UserData = newRequestState(r, sess, s.live.Load())
	return r, nil
}

// tripperFor is the round tripper that forwards a request whose round
// tripper was next: the MITM session's ([mitmTripper]), or nil for
// goproxy's transport.
func (f *forwardStep) tripperFor(next goproxy.RoundTripper) goproxy.RoundTripper {
	switch next.(type) {
	case nil:
		return &f.plain
	case mitmTripper:
		return &f.mitm
	}
	return &forwardTripper{s: f.s, next: next}
}

// forwardTripper is the round tripper [forwardStep] installs: next (or, when
// next is nil, goproxy's transport) followed by the robot-tag scan and
// the body wrapping.
type forwardTripper struct {
	s    *Server
	next goproxy.RoundTripper // nil: ctx.Proxy.Tr
}

// RoundTrip forwards req and prepares the response for goproxy.
func (t *forwardTripper) RoundTrip(req *http.Request, ctx *goproxy.ProxyCtx) (*http.Response, error) {
	req = priced(forwardable(req), stateOf(ctx)) // (forward.go, payment.go)
	var resp *http.Response
	var err error
	if t.next != nil {
		resp, err = t.next.RoundTrip(req, ctx)
	} else {
		resp, err = t.s.roundTrip(req) // pinned, traced (transport.go)
	}
	if err != nil || resp == nil || ctx.Error != nil {
		return resp, err
	}
	t.s.received(resp, stateOf(ctx)) // robot-tag scan, body wrapping (forward.go)
	return resp, err
}

// mitmTripper is the round tripper of the requests inside an MITM session:
// mitmRoundTrip. A named type (rather than a [goproxy.RoundTripperFunc]) so
// that forward recognizes it.
type mitmTripper struct{ s *Server }

// RoundTrip is s.mitmRoundTrip.
func (t mitmTripper) RoundTrip(req *http.Request, ctx *goproxy.ProxyCtx) (*http.Response, error) {
	return t.s.mitmRoundTrip(req, ctx)
}

// mitmRoundTrip forwards one request from inside an MITM session. When
// forwarding fails it answers 502 (504 on timeouts) saying why, rather
// than leaving goproxy to drop the connection without a response; an
// upstream certificate that fails verification is named as such.
func (s *Server) mitmRoundTrip(req *http.Request, ctx *goproxy.ProxyCtx) (*http.Response, error) {
	resp, err := s.roundTrip(req) // pinned, traced (transport.go)
	if err == nil {
		return resp, nil
	}
	ctx.Error = err
	return s.settle(req, stateOf(ctx), forwardFailed(s.log, req, stateOf(ctx), err)), nil
}

// newGoproxy returns the goproxy server of s: quiet, forwarding with
// s.tr, dialing CONNECT targets directly unless an upstream proxy is
// configured, and passing Accept-Encoding through untouched.
func (s *Server) newGoproxy() *goproxy.ProxyHttpServer {
	p := goproxy.NewProxyHttpServer()
	p.Verbose = false
	p.Logger = goproxyLogger{log: s.log}
	p.Tr = s.tr
	// NewProxyHttpServer reads HTTPS_PROXY into ConnectDial: a sidecar
	// whose environment points at itself would loop. Dial directly unless
	// an upstream proxy is configured on purpose.
	p.ConnectDial = nil
	if s.cfg.UpstreamProxy != nil {
		p.ConnectDial = p.NewConnectDialToProxy(s.cfg.UpstreamProxy.String())
	}
	// Pass the client's Accept-Encoding through untouched, and keep the
	// transport from adding gzip and decoding on its own: bytes reach the
	// client as the origin sent them.
	p.KeepAcceptEncoding = true
	s.tr.DisableCompression = true
	p.NonproxyHandler = s.mux
	return p
}

// goproxyLogger adapts zerolog to goproxy's Logger (a Printf). goproxy
// prefixes its messages with "[session] INFO: " or "[session] WARN: ";
// INFO lines (only produced when Verbose is on) become debug records,
// WARN lines warnings, anything else info. The warnings goproxy words
// confusingly (it calls the origin "client" and a client that hangs up a
// problem) are reworded by [goproxyWarningOf], and a client's disconnect is
// logged at debug.
type goproxyLogger struct {
	log zerolog.Logger
}

// goproxyWarning rewords one of goproxy's warning formats: format is
// goproxy's (as given to ctx.Warnf), msg the message, target and error
// the positions of the CONNECT target and of the error among the
// arguments (-1 when absent), client whether the error is on the
// client's side (a disconnect there is logged at debug).
type goproxyWarning struct {
	format        string
	msg           string
	target, error int
	client        bool
}

// goproxyWarnings are the warning formats of goproxy that [goproxyLogger]
// rewords: the one list of them (TestGoproxyWarningsExist checks each
// against the pinned goproxy module's source).
func goproxyWarnings() [10]goproxyWarning {
	return [...]goproxyWarning{
		{"Cannot handshake client %v %v", "TLS handshake with the client failed (does it trust robotsgate's CA?)", 0, 1, true},
		{"Cannot read request from mitm'd client %v %v", "cannot read a request from the client in an HTTPS session", 0, 1, true},
		{"Cannot write response header from mitm'd client: %v", "cannot write the response to the client", -1, 0, true},
		{"Cannot flush response header from mitm'd client: %v", "cannot write the response to the client", -1, 0, true},
		{"Cannot write response from mitm'd client: %v", "cannot write the response to the client", -1, 0, true},
		{"Error copying to client: %s", "cannot write to the client", -1, 0, true},
		{"Error responding to client: %s", "cannot write to the client", -1, 0, true},
		{"Error closing client connection: %s", "cannot close the client connection", -1, 0, true},
		{"Cannot read response from mitm'd server %v", "cannot read the response from the origin", -1, 0, false},
		{"Error dialing to %s: %s", "cannot connect to the origin", 0, 1, false},
	}
}

// goproxyWarningOf maps goproxy's warning format to what it means.
func goproxyWarningOf(format string) (goproxyWarning, bool) {
	for _, w := range goproxyWarnings() {
		if w.format == format {
			return w, true
		}
	}
	return goproxyWarning{}, false
}

// Printf implements [goproxy.Logger].
func (l goproxyLogger) Printf(format string, v ...any) {
	if w, ok := goproxyWarningOf(strings.TrimSuffix(strings.TrimPrefix(format, "[%03d] WARN: "), "\n")); ok &&
		strings.HasPrefix(format, "[%03d] WARN: ") && len(v) > 1 {
		l.warning(w, v[0], v[1:])
		return
	}
	// goproxy's warnings quote request URLs and errors holding them.
	msg := enforce.RedactURLsIn(strings.TrimSpace(fmt.Sprintf(format, v...)))
	session := ""
	if strings.HasPrefix(msg, "[") {
		if i := strings.Index(msg, "] "); i > 0 {
			session, msg = msg[1:i], msg[i+2:]
		}
	}
	level := zerolog.InfoLevel
	switch {
	case strings.HasPrefix(msg, "INFO: "):
		level, msg = zerolog.DebugLevel, msg[len("INFO: "):]
	case strings.HasPrefix(msg, "WARN: "):
		level, msg = zerolog.WarnLevel, msg[len("WARN: "):]
	}
	ev := l.log.WithLevel(level).Str("component", "goproxy")
	if session != "" {
		ev = ev.Str("session", session)
	}
	ev.Msg(msg)
}

// warning logs goproxy's warning w of session with its arguments args.
func (l goproxyLogger) warning(w goproxyWarning, session any, args []any) {
	arg := func(i int) string {
		if i < 0 || i >= len(args) {
			return ""
		}
		return enforce.RedactURLsIn(fmt.Sprint(args[i]))
	}
	errText := arg(w.error)
	level := zerolog.WarnLevel
	if w.client && clientGone(errText) {
		level = zerolog.DebugLevel
	}
	ev := l.log.WithLevel(level).Str("component", "goproxy").Str("session", fmt.Sprintf("%03d", session))
	if t := arg(w.target); t != "" {
		ev = ev.Str("target", t)
	}
	ev.Str("error", errText).Msg(w.msg)
}

// clientGone reports whether the error text errText says that the peer
// closed or reset the connection, or that it was closed under way.
func clientGone(errText string) bool {
	for _, s := range []string{"EOF", "broken pipe", "connection reset", "use of closed network connection", "context canceled"} {
		if strings.Contains(errText, s) {
			return true
		}
	}
	return false
}

// The requests inside MITM sessions counted as running for Shutdown
// (the count and the contexts Shutdown ends: [conns.Lifetime]).

// track counts a request as running; enter runs it first. A request inside an MITM session
// does not pass through [conns.Lifetime.Wrap], and its context (rooted in
// [context.Background]) ends with neither the client's connection nor
// Shutdown: track counts it as running until goproxy ends that context
// (after the response was written), and makes the context end at
// Shutdown's deadline too. Plain-HTTP requests need neither: Wrap counts
// them, and net/http cancels their context when Shutdown closes their
// connection.
//
// On a tracked connection the session's connection does this
// ([conns.Info.RequestRead]), with no goroutine and no registration with
// goproxy's context or the hard one per request. Elsewhere (an untracked
// connection) the request's context is a child of goproxy's, and a watch
// per request does the rest ([conns.Lifetime.TrackAlone]).
func (s *Server) track(r *http.Request, ctx *goproxy.ProxyCtx) *http.Request {
	sess, inMITM := ctx.UserData.(*session) // the CONNECT's (enter creates the request's state next)
	if !inMITM {
		return r
	}
	rctx, ok := sess.Conn.RequestRead(r.Context(), s.life) // the head's limits no longer apply
	if !ok {
		var cancel context.CancelCauseFunc
		rctx, cancel = context.WithCancelCause(r.Context())
		s.life.TrackAlone(rctx, cancel)
	}
	r = r.WithContext(rctx)
	ctx.Req = r
	return r
}
