package proxy

import (
	"errors"
	"net/http"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/admin"
	"github.com/robotsgate/robotsgate/proxy/metrics"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// The request pipeline. A proxied request passes the request steps in
// order; the first that refuses it (an outcome audited as
// audit.DecisionBlocked) answers it, and the rest are skipped: the origin
// sees nothing. A forwarded request's response, and robotsgate's own
// answers, then pass every response step in order. Steps never build
// audit records or answers: they return an outcome, which settle
// (refuse.go) carries out. Per-request state is a *requestState in
// ctx.UserData (stateOf).

// requestStep is one step of the request side. A step that replaces the
// request (another context) sets ctx.Req to the new one.
type requestStep interface {
	onRequest(r *http.Request, ctx *goproxy.ProxyCtx, st *requestState) outcome
}

// responseStep is one step of the response side. resp is never nil
// after [upstreamFailure.onResponse], the first step.
type responseStep interface {
	onResponse(resp *http.Response, ctx *goproxy.ProxyCtx, st *requestState) (*http.Response, outcome)
}

// ServeHTTP handles one client request: proxied ones (absolute URL or
// CONNECT) go through the hooks; others (GET /healthz, admin) to the
// server's own routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// install registers the steps, in order, and the CONNECT handler. To add
// a feature, write its step and add it to one of the lists below.
func (s *Server) install() error {
	p := s.proxy
	if err := s.installHTTPS(); err != nil { // CONNECT: port allow-list, MITM / tunnel (connect.go)
		return err
	}
	s.installTransports() // dialers: own addresses refused, pinned addresses only (transport.go)
	inflight := inflight{m: s.metrics}
	ls := s.liveSteps() // read from the request's settings, which a reload replaces (live.go)
	// enter counts the request for Shutdown and creates its state: it is
	// not a step, every step needs what it does.
	p.OnRequest().DoFunc(s.enter)
	for _, step := range []requestStep{
		inflight,                     // in-flight count, ended on the response side
		readmit{},                    // MITM session after a reload: its CONNECT's access revoked → 403, session ended (readmit.go)
		canonicalDest{},              // one spelling of host and port, dialed as decided; unmappable → 400 (canonical.go)
		destination{&s.self, s.pins}, // own address → 403, MITM Host ≠ CONNECT target → 421 (destination.go)
		hopStrip{},                   // hop-by-hop request headers
		ls.decide,                    // site exceptions, robots.txt decision: 403, or let through (robotsstep.go, sites.go)
		ls.tdm,                       // tdmrep.json reserves the URL: 403 tdm-reserved, or audit (tdmrep.go)
		ls.lic,                       // RSL license prohibits a purpose or needs a token: 403 license-*, or audit (license.go)
		ls.pacing,                    // paused origin → 503, crawl-delay wait or 429 (pacing.go)
		ls.whole,                     // enforcing response steps: no Range, Accept-Encoding the scan decodes (whole.go)
		signStep{s: s},               // Web Bot Auth signature, once nothing can refuse the request any more (signstep.go)
		&s.fwd,                       // robot-tag scan and pooled body copy as the response arrives (forward.go); last
	} {
		p.OnRequest().DoFunc(s.requestHook(step))
	}
	// (forwarding happens here, in goproxy, with s.tr)
	for _, step := range []responseStep{
		upstreamFailure{log: s.log}, // resp == nil → 502/504; first
		hopStrip{},                  // hop-by-hop response headers
		ls.pacingResp,               // 503/429 + Retry-After pause the origin, 2xx resumes (pacing.go)
		ls.wholeResp,                // partial or undecodable responses: 403 when enforcing (whole.go)
		ls.tags,                     // X-Robots-Tag / meta robots: annotate, or 403 (robottags.go)
		ls.usage,                    // Content-Usage / noai: X-Robotsgate-Usage, or 403 (usage.go)
		ls.tdmResp,                  // tdm-reservation header / meta: X-Robotsgate-TDM, or 403 (tdmrep.go)
		ls.licResp,                  // X-Robotsgate-License (license.go)
		inflight,                    // decisions, upstream errors, in-flight
		finish{},                    // report-mode headers, streaming
		http10{},                    // HTTP/1.0 clients inside MITM sessions (forward.go); last
	} {
		p.OnResponse().DoFunc(s.responseHook(step))
	}

	if err := s.installAround(p); err != nil {
		return err
	}
	// ---- requests addressed to robotsgate itself ----
	s.mux.HandleFunc("GET /healthz", admin.Healthz)
	s.adminRoutes() // admin API and /metrics, here or on admin_listen (wiring.go)
	return nil
}

// installAround wraps the goproxy pipeline p in what runs around every
// proxied request (outermost last) and makes it the Server's handler.
func (s *Server) installAround(p http.Handler) error {
	h := s.https.hijacks.wrap(p)                  // track hijacked CONNECT connections for Shutdown (conntrack.go)
	h = clientLimitsOf(s.cfg.Client).boundBody(h) // plain-HTTP request bodies, bounded as in CONNECT sessions (sessionread.go)
	s.inner = h
	// proxy auth / client CIDRs, and every setting a reload changes (live.go):
	l, err := s.newLive(s.cfg)
	if err != nil {
		return err
	}
	s.live.Store(l)
	h = http.HandlerFunc(s.serveLive)
	s.handler = s.life.wrap(h) // running handlers, waited for by Shutdown (proxy.go)
	return nil
}

// requestHook adapts step to goproxy: it runs the step with the request's
// state and carries out its outcome.
func (s *Server) requestHook(step requestStep) goproxy.FuncReqHandler {
	return func(r *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
		ctx.Req = r
		st := stateOf(ctx)
		o := step.onRequest(r, ctx, st)
		return ctx.Req, s.settle(ctx.Req, st, o)
	}
}

// responseHook adapts step to goproxy: it runs the step with the
// request's state and carries out its outcome; a refusal replaces the
// response.
func (s *Server) responseHook(step responseStep) goproxy.FuncRespHandler {
	return func(resp *http.Response, ctx *goproxy.ProxyCtx) *http.Response {
		st := stateOf(ctx)
		resp, o := step.onResponse(resp, ctx, st)
		if answer := s.settle(ctx.Req, st, o); answer != nil {
			return answer
		}
		return resp
	}
}

// enter is the first request hook: it counts the request as running
// (track) and starts its state. Requests inside a MITM tunnel inherit the
// CONNECT's UserData; each gets its own state with that as Parent.
func (s *Server) enter(r *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	r = s.track(r, ctx)
	ctx.UserData = &requestState{Start: time.Now(), Client: r.RemoteAddr, Parent: ctx.UserData, Live: s.live.Load(),
		Grant: access.GrantFrom(r.Context())}
	return r, nil
}

// requestState is one request's state, carried from request hooks to
// response hooks in goproxy's ctx.UserData.
type requestState struct {
	Start  time.Time // when robotsgate received the request
	Client string    // client address
	Agent  string    // the agent decided for ("" = only "*")
	// AgentOverride is the agent named by the request's override header
	// (Config.AgentHeader), "" when none; for a CONNECT, the requests
	// inside its MITM session inherit it (agentFor).
	AgentOverride string
	// Overridden says that an override header was honoured (AgentOverride
	// may then be "": only "*" applies).
	Overridden bool
	// OverrideRefused is the value of an override header refused because
	// an agent is configured (agentFor), for the audit record; requests
	// inside an MITM session inherit the CONNECT's.
	OverrideRefused string

	// Identity is the authenticated user's (credentials file), inherited
	// by the requests inside a CONNECT's MITM session; set by identify.
	Identity   access.Identity
	Identified bool
	// Purposes are the declared purposes the request is decided for
	// (declare). PurposesOverride is those of an honoured purposes
	// header (PurposesOverridden), inherited inside an MITM session;
	// PurposesRefused the value of a refused one, for the audit record.
	Purposes           aipref.Set
	PurposesOverride   aipref.Set
	PurposesOverridden bool
	PurposesRefused    string
	// ContentUse is the declared content use the request is decided for
	// (declare): the user's, else the configured one.
	ContentUse aipref.Use

	Decision enforce.Decision // the robots.txt decision, valid when Decided
	Decided  bool
	// RangeRemoved says that [wholeStep] removed the request's Range headers:
	// the audit records of its response say so.
	RangeRemoved bool
	// SignedKeyID is the keyid of the signature [signStep] added, "" when
	// the request was not signed.
	SignedKeyID string
	// Answered is set when a request hook answered the request itself
	// (a refusal); the origin saw nothing.
	Answered bool

	// Permit is the politeness admission of a forwarded request (nil when
	// [pacing.onRequest] did not admit it); it is released when the
	// request ends.
	Permit *politeness.Permit

	// Live is the settings the request is served with: those current
	// when it entered (live.go).
	Live *live
	// Grant is what the access control admitted the request with; a
	// CONNECT's stays with its MITM session ([readmit.onRequest]).
	Grant access.Grant

	// Parent is the UserData the request's ctx started with: for requests
	// inside a MITM tunnel, the CONNECT's state.
	Parent any

	// ConnectTarget is, for an intercepted CONNECT, its canonical
	// "host:port" (lower-case host); requests inside the session must
	// name the same ([destination.onRequest]).
	ConnectTarget string
	// Transparent says that the request came in on the transparent
	// listener, for a refusal made before it had a [redirected] of its
	// own (see [redirectedOf]).
	Transparent bool
	// Redirected is, for a CONNECT made up for a redirected TLS
	// connection, that connection (transparent.go); requests inside its
	// MITM session inherit it.
	Redirected *redirected
	// Conn is, for an intercepted CONNECT, its client connection's
	// tracking info (nil when untracked): HTTP/1.0 answers end the
	// session through it (forward.go).
	Conn *connInfo

	// Body is the body forward's round trip gave the response (nil when
	// the request was not forwarded), the one goproxy's MITM loop checks
	// the final response's body against (forward.go).
	Body *copyBody
}

// stateOf returns ctx's request state, creating it if [Server.enter] did
// not run.
func stateOf(ctx *goproxy.ProxyCtx) *requestState {
	if st, ok := ctx.UserData.(*requestState); ok {
		return st
	}
	st := &requestState{Start: time.Now(), Parent: ctx.UserData}
	if ctx.Req != nil {
		st.Client, st.Grant = ctx.Req.RemoteAddr, access.GrantFrom(ctx.Req.Context())
	}
	ctx.UserData = st
	return st
}

// upstreamFailure is the first response step: it answers a request whose
// forwarding failed with a 502 (504 on timeouts) that names the origin
// and the error ([upstreamOutcome]), instead of goproxy's bare 500.
type upstreamFailure struct{ log zerolog.Logger }

func (u upstreamFailure) onResponse(resp *http.Response, ctx *goproxy.ProxyCtx, st *requestState) (*http.Response, outcome) {
	if resp != nil {
		return resp, outcome{}
	}
	err := ctx.Error
	if err == nil {
		err = errors.New("no response")
	}
	return nil, forwardFailed(u.log, ctx.Req, st, err)
}

// forwardFailed logs, at warn, that forwarding r failed with err, and
// returns the outcome that answers it.
func forwardFailed(log zerolog.Logger, r *http.Request, st *requestState, err error) outcome {
	o := upstreamOutcome(r, st.Agent, err)
	log.Warn().Str("origin", o.d.Origin).Str("url", o.d.URL).Str("error", enforce.RedactURLsIn(err.Error())).
		Int("status", o.status).Msg("forwarding failed")
	return o
}

// finish is the response step that marks forwarded responses that report
// mode let through although they would have been blocked, and makes
// bodies of unknown length stream to the client as they arrive.
type finish struct{}

func (finish) onResponse(resp *http.Response, _ *goproxy.ProxyCtx, st *requestState) (*http.Response, outcome) {
	if resp != nil && resp.ContentLength < 0 && resp.Body != nil && resp.Body != http.NoBody {
		// goproxy flushes after every write only when the response header
		// says chunked; Go's client moves that into resp.TransferEncoding,
		// so without this a slow stream (SSE, long poll) would sit in the
		// server's write buffer. net/http applies (or, for HTTP/1.0
		// clients, drops) the chunked coding itself.
		resp.Header.Set("Transfer-Encoding", "chunked")
	}
	if resp != nil && st.Decided && !st.Decision.Allowed && !st.Answered {
		setReportHeaders(resp.Header, st.Decision)
	}
	return resp, outcome{}
}

// inflight is the step that counts a request in flight, and, on the
// response side, its decision and upstream failure; it ends the in-flight
// count there, which every request's response side reaches. In flight
// thus means "between arrival and response headers": deciding, waiting
// for a crawl-delay slot or for the origin.
type inflight struct{ m *metrics.Metrics }

func (f inflight) onRequest(*http.Request, *goproxy.ProxyCtx, *requestState) outcome {
	f.m.RequestStarted()
	return outcome{}
}

func (f inflight) onResponse(resp *http.Response, ctx *goproxy.ProxyCtx, st *requestState) (*http.Response, outcome) {
	f.m.RequestDone()
	if st.Decided {
		f.m.Decision(st.Decision)
	}
	if ctx.Error != nil {
		f.m.UpstreamError()
	}
	return resp, outcome{}
}
