// Package proxy is robotsgate's HTTP(S) forward proxy: thin wiring of
// github.com/elazarl/goproxy around package enforce. For every proxied
// request it asks the Enforcer for a verdict, answers refusals itself
// (the request never leaves), forwards the rest with bodies streamed, and
// writes audit records.
//
// A Server is assembled in one place, Server.install, which registers the
// hooks of every concern in order. A feature is a file with its hook
// methods plus one registration line there.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/metrics"
)

// HTTP server timeouts of the proxy listener. There is no write timeout:
// proxied bodies may stream for as long as the origin sends them.
const (
	readHeaderTimeout = 30 * time.Second
	serverIdleTimeout = 120 * time.Second
)

// Deps are the collaborators a Server uses. The caller owns them: it
// closes the Auditor after Shutdown.
type Deps struct {
	Enforcer *enforce.Enforcer // required
	Auditor  *audit.Auditor    // required
	Log      zerolog.Logger    // operator log
	// Transport carries proxied requests; nil means NewTransport(cfg).
	// Give the Enforcer's HTTPFetcher the same one.
	Transport *http.Transport
	// Clock is the clock of enforcement decisions (politeness); nil means
	// enforce.SystemClock.
	Clock enforce.Clock
	// Pacer and Pauses hold the politeness state (crawl-delay slots, paused
	// origins); nil means in-memory, this process only. Give Redis ones to
	// share them across a fleet. [politeness]
	Pacer  enforce.Pacer
	Pauses enforce.Pauses
	// Metrics receives the Server's metrics; nil means NewMetrics(). Give
	// the Enforcer its hooks (Metrics.EnforceHooks). [metrics]
	Metrics *metrics.Metrics
}

// Server is a robotsgate proxy. Create it with New, serve it with Serve
// (and ServeAdmin), stop it with Shutdown.
type Server struct {
	cfg   Config
	proxy *goproxy.ProxyHttpServer
	enf   *enforce.Enforcer
	audit *audit.Auditor
	log   zerolog.Logger
	tr    *http.Transport
	clock enforce.Clock

	// agentHeader is the canonical per-request agent override header, ""
	// when disabled.
	agentHeader string

	// handler is what ServeHTTP runs: the goproxy server wrapped in the
	// middleware installed around it.
	handler http.Handler
	// mux serves requests addressed to robotsgate itself (not proxied):
	// /healthz, and the admin API.
	mux *http.ServeMux

	mu       sync.Mutex
	servers  []*http.Server
	shutdown bool

	metrics *metrics.Metrics // [metrics] (metrics.go)
	admin   http.Handler     // [admin] admin API (admin.go)

	polite *enforce.Politeness // [politeness] crawl-delay pacing, backoff (politeness.go)

	https *httpsState // [https] CONNECT handling, CA, hijacked-connection tracking (connect.go)

	self selfAddrs // [self] robotsgate's own listen addresses, refused as destinations (selfaddr.go)

	copyBufs sync.Pool       // *[]byte buffers that forwarded bodies are copied through (forward.go)
	fwd      forwardTrippers // the round trippers forward installs (forward.go)

	life *lifetime // shutdown contexts and running handlers (lifetime.go)
}

// New returns a Server for cfg, which must be valid (Config.Validate).
func New(cfg Config, deps Deps) (*Server, error) {
	if deps.Enforcer == nil {
		return nil, errors.New("proxy: Deps.Enforcer is required")
	}
	if deps.Auditor == nil {
		return nil, errors.New("proxy: Deps.Auditor is required")
	}
	s := &Server{
		cfg:   cfg,
		enf:   deps.Enforcer,
		audit: deps.Auditor,
		log:   deps.Log,
		tr:    deps.Transport,
		clock: deps.Clock,
		mux:   http.NewServeMux(),
		life:  newLifetime(),
	}
	s.fwd.init(s)
	if s.metrics = deps.Metrics; s.metrics == nil { // [metrics]
		s.metrics = NewMetrics()
	}
	if s.clock == nil {
		s.clock = enforce.SystemClock{}
	}
	// [metrics] robotsgate_paused_origins counts the pauses (metrics.go):
	deps.Pauses = countPauses(s.metrics, deps.Pauses)
	pol, err := newPoliteness(cfg, deps.Pacer, deps.Pauses, s.clock, s.log) // [politeness] (politeness.go)
	if err != nil {
		return nil, err
	}
	s.polite = pol
	if s.tr == nil {
		tr, err := NewTransport(cfg)
		if err != nil {
			return nil, err
		}
		s.tr = tr
	}
	if cfg.AgentHeader != "" && cfg.AgentHeader != "-" {
		s.agentHeader = http.CanonicalHeaderKey(cfg.AgentHeader)
	}

	p := goproxy.NewProxyHttpServer()
	p.Verbose = false
	p.Logger = goproxyLogger{log: s.log}
	p.Tr = s.tr
	// NewProxyHttpServer reads HTTPS_PROXY into ConnectDial: a sidecar
	// whose environment points at itself would loop. Dial directly unless
	// an upstream proxy is configured on purpose.
	p.ConnectDial = nil
	if cfg.UpstreamProxy != "" {
		p.ConnectDial = p.NewConnectDialToProxy(cfg.UpstreamProxy)
	}
	// Pass the client's Accept-Encoding through untouched, and keep the
	// transport from adding gzip and decoding on its own: bytes reach the
	// client as the origin sent them.
	p.KeepAcceptEncoding = true
	s.tr.DisableCompression = true
	p.NonproxyHandler = s.mux
	s.proxy = p

	if err := s.install(); err != nil {
		return nil, err
	}
	return s, nil
}

// install registers every concern's hooks, in order. To add a feature,
// write its hook methods in their own file and add ONE line at the marked
// place below.
//
// Request hooks run in registration order; the first one that returns a
// response answers the request and the rest are skipped (the request is
// not forwarded). Response hooks all run, in order, also for responses
// robotsgate generated itself, and with resp == nil (ctx.Error set) when
// forwarding failed: upstreamFailed turns that into a 502 first, so later
// response hooks always see a response. Per-request state is a
// *requestState in ctx.UserData (stateOf).
func (s *Server) install() error {
	p := s.proxy

	// ---- request side (in order) ----
	p.OnRequest().DoFunc(s.track) // count running requests for Shutdown (lifetime.go); must stay first
	p.OnRequest().DoFunc(s.begin) // per-request state; must stay second
	// [metrics] in-flight count, ended by observeMetrics (metrics.go):
	p.OnRequest().DoFunc(s.metricsBegin)
	// [access] access control runs as middleware (below) so that it also
	// covers CONNECT and non-proxy requests.
	if err := s.installHTTPS(); err != nil { // [https] CONNECT: port allow-list, MITM / tunnel (connect.go)
		return err
	}
	s.installSelf()                       // [self] own address → 403, MITM Host ≠ CONNECT target → 421 (selfaddr.go)
	p.OnRequest().DoFunc(s.stripHopByHop) // [hop] hop-by-hop request headers (hopheaders.go)
	p.OnRequest().DoFunc(s.decideRobots)  // robots.txt verdict: 403, or let through
	p.OnRequest().DoFunc(s.pace)          // [politeness] paused origin → 503, crawl-delay wait or 429 (politeness.go)
	// [tags] read robot tags as the response arrives, keeping Content-Length,
	// and copy the body through a pooled buffer (forward.go); stays last:
	p.OnRequest().DoFunc(s.forward)
	// (forwarding happens here, in goproxy, with s.tr)

	// ---- response side (in order) ----
	p.OnResponse().DoFunc(s.upstreamFailed)        // resp == nil → 502/504; must stay first
	p.OnResponse().DoFunc(s.stripHopByHopResponse) // [hop] hop-by-hop response headers (hopheaders.go)
	p.OnResponse().DoFunc(s.observeBackoff)        // [politeness] 503/429 + Retry-After pause the origin, 2xx resumes (politeness.go)
	// [tags] X-Robots-Tag / meta robots: annotate, or 403 (robottags.go):
	p.OnResponse().DoFunc(s.robotTags)
	// [metrics] decisions, upstream errors, in-flight (metrics.go):
	p.OnResponse().DoFunc(s.observeMetrics)
	p.OnResponse().DoFunc(s.finish) // report-mode headers, debug log
	// HTTP/1.0 clients inside MITM sessions: no chunking, close when due (http10.go); stays last:
	p.OnResponse().DoFunc(s.http10)

	// ---- around everything (outermost last) ----
	var h http.Handler = p
	h = s.https.hijacks.wrap(h) // [https] track hijacked CONNECT connections for Shutdown (conntrack.go)
	// [access] proxy auth / client CIDRs (auth.go):
	h, err := s.accessControl(h)
	if err != nil {
		return err
	}
	h = s.life.wrap(h) // running handlers, waited for by Shutdown (lifetime.go)
	s.handler = h

	// ---- requests addressed to robotsgate itself ----
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.adminRoutes() // [admin] admin API and /metrics, here or on admin_listen (admin.go)
	return nil
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

	Decision enforce.Decision // the robots verdict, valid when Decided
	Decided  bool
	// Answered is set when a request hook answered the request itself
	// (a refusal); the origin saw nothing.
	Answered bool

	// Permit is the politeness admission of a forwarded request (nil when
	// pace did not admit it); it is released when the request ends.
	Permit *enforce.Permit

	// Parent is the UserData the request's ctx started with: for requests
	// inside a MITM tunnel, the CONNECT's state.
	Parent any

	// ConnectTarget is, for an intercepted CONNECT, its canonical
	// "host:port" (lower-case host); requests inside the session must
	// name the same (checkDestination).
	ConnectTarget string
	// Conn is, for an intercepted CONNECT, its client connection's
	// tracking info (nil when untracked): HTTP/1.0 answers end the
	// session through it (http10.go).
	Conn *connInfo

	// Body is the body forward's round trip gave the response (nil when
	// the request was not forwarded), the one goproxy's MITM loop checks
	// the final response's body against (http10.go).
	Body *copyBody
}

// begin starts the per-request state. Requests inside a MITM tunnel
// inherit the CONNECT's UserData; each gets its own state with that as
// Parent.
func (s *Server) begin(r *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	ctx.UserData = &requestState{Start: time.Now(), Client: r.RemoteAddr, Parent: ctx.UserData}
	return r, nil
}

// stateOf returns ctx's request state, creating it if begin did not run.
func stateOf(ctx *goproxy.ProxyCtx) *requestState {
	if st, ok := ctx.UserData.(*requestState); ok {
		return st
	}
	st := &requestState{Start: time.Now(), Parent: ctx.UserData}
	if ctx.Req != nil {
		st.Client = ctx.Req.RemoteAddr
	}
	ctx.UserData = st
	return st
}

// upstreamFailed answers a request whose forwarding failed with a 502 (504
// on timeouts) that says why, instead of goproxy's bare 500.
func (s *Server) upstreamFailed(resp *http.Response, ctx *goproxy.ProxyCtx) *http.Response {
	if resp != nil {
		return resp
	}
	err := ctx.Error
	if err == nil {
		err = errors.New("no response")
	}
	s.log.Debug().Str("error", enforce.RedactURLsIn(err.Error())).Str("url", enforce.RedactedURL(ctx.Req.URL)).Msg("forwarding failed")
	return upstreamError(ctx.Req, err)
}

// finish is the last response hook: it marks forwarded responses that
// report mode let through although they would have been blocked, and
// makes bodies of unknown length stream to the client as they arrive.
func (s *Server) finish(resp *http.Response, ctx *goproxy.ProxyCtx) *http.Response {
	st := stateOf(ctx)
	if resp != nil && resp.ContentLength < 0 && resp.Body != nil && resp.Body != http.NoBody {
		// goproxy flushes after every write only when the response header
		// says chunked; Go's client moves that into resp.TransferEncoding,
		// so without this a slow stream (SSE, long poll) would sit in the
		// server's write buffer. net/http applies (or, for HTTP/1.0
		// clients, drops) the chunked coding itself.
		resp.Header.Set("Transfer-Encoding", "chunked")
	}
	if resp != nil && st.Decided && !st.Decision.Allowed && !st.Answered {
		resp.Header.Set(HeaderDecision, "report-only; "+string(st.Decision.Reason))
		if rh := ruleHeader(st.Decision); rh != "" {
			resp.Header.Set(HeaderRule, rh)
		}
	}
	return resp
}

// healthz answers GET /healthz.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	io.WriteString(w, "ok\n")
}

// record writes an audit record, filling in Mode; a failure is logged
// (and counted by the Auditor), never silent.
func (s *Server) record(e audit.Event) {
	if e.Mode == "" {
		e.Mode = s.cfg.Mode
	}
	if err := s.audit.Record(e); err != nil {
		s.log.Error().Err(err).Str("url", e.URL).Str("decision", e.Decision).Msg("audit record not written")
	}
}

// ServeHTTP handles one client request: proxied ones (absolute URL or
// CONNECT) go through the hooks; others (GET /healthz, admin) to the
// server's own routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// AdminHandler returns the handler of requests addressed to robotsgate
// itself, for serving on a separate admin address.
func (s *Server) AdminHandler() http.Handler { return s.admin }

// Serve accepts proxy connections on ln until Shutdown. It returns nil
// after Shutdown.
func (s *Server) Serve(ln net.Listener) error { return s.serve(ln, s) }

// ServeAdmin serves AdminHandler on ln (admin_listen) until Shutdown.
func (s *Server) ServeAdmin(ln net.Listener) error { return s.serve(ln, s.admin) }

func (s *Server) serve(ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       serverIdleTimeout,
		ErrorLog:          log.New(httpErrorLogWriter{log: s.log}, "", 0),
	}
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.servers = append(s.servers, srv)
	s.mu.Unlock()
	s.self.add(ln.Addr().String()) // [self] the real address (port 0 resolved)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("proxy: serve %s: %w", ln.Addr(), err)
	}
	return nil
}

// Shutdown stops the Server and returns once no request handler runs, so
// that the caller can close the Auditor without losing a record.
//
// In order: requests waiting for a crawl-delay slot are answered 503
// (audited, reason shutting-down); listeners close; in-flight requests
// and MITM sessions finish their current request, until ctx is done;
// opaque CONNECT tunnels, which write no audit record after they opened,
// are closed at once. When ctx is done first, every connection left is
// closed, the upstream requests of the handlers still running are
// cancelled, and Shutdown waits a short bounded grace (5 s) for those
// handlers to write their audit records; it then returns an error saying
// what was cut. It does not close the Auditor: the caller does, after
// Shutdown returns.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutdown = true
	servers := s.servers
	s.mu.Unlock()
	s.life.stopWaits(errShuttingDown)

	var wg sync.WaitGroup
	errs := make([]error, len(servers))
	for i, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Shutdown(ctx); err != nil {
				srv.Close()
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	errs = append(errs, s.https.hijacks.shutdown(ctx)) // [https] MITM sessions and tunnels (conntrack.go)
	if ctx.Err() != nil {
		s.life.stopHard(errShuttingDown)
	}
	gctx, cancel := context.WithTimeout(context.Background(), s.life.grace)
	if n := s.life.wait(gctx); n > 0 {
		errs = append(errs, fmt.Errorf("%d request handler(s) still running %v after the connections were closed: their audit records may be lost", n, s.life.grace))
	}
	cancel()
	s.tr.CloseIdleConnections()
	return errors.Join(errs...)
}
