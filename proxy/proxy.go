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
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/metrics"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
)

// Deps are the collaborators a Server uses. The caller owns them: it
// closes the Auditor after Shutdown.
type Deps struct {
	Enforcer *enforce.Enforcer // required
	Auditor  *audit.Auditor    // required
	Log      zerolog.Logger    // operator log
	// Transport carries proxied requests; nil means NewTransport(cfg).
	// Never give it to the Enforcer's HTTPFetcher: clients choose the
	// bytes sent on its connections.
	Transport *http.Transport
	// PolicyTransport carries the policy files robotsgate fetches itself
	// (robots.txt): give the Enforcer's HTTPFetcher this one, from
	// NewPolicyTransport. New installs on it the dialer that refuses
	// robotsgate's own addresses and the guard against early responses.
	// nil when the Enforcer fetches otherwise (a test's own Fetcher).
	PolicyTransport *http.Transport
	// Clock is the clock of enforcement decisions (politeness); nil means
	// enforce.SystemClock.
	Clock enforce.Clock
	// Pacer and Pauses hold the politeness state (crawl-delay slots, paused
	// origins); nil means in-memory, this process only. Give Redis ones to
	// share them across a fleet.
	Pacer  politeness.Pacer
	Pauses politeness.Pauses
	// Metrics receives the Server's metrics; nil means NewMetrics(). Give
	// the Enforcer its hooks (Metrics.EnforceHooks).
	Metrics *metrics.Metrics
}

// Server is a robotsgate proxy. Create it with New, serve it with Serve
// (and ServeAdmin), stop it with Shutdown.
type Server struct {
	cfg   config.Config
	proxy *goproxy.ProxyHttpServer
	enf   *enforce.Enforcer
	audit *audit.Auditor
	log   zerolog.Logger
	tr    *http.Transport
	ptr   *http.Transport // the policy transport, nil when none was given
	clock enforce.Clock

	agents *agents // the robots agent of each request (decide.go)

	// handler is what ServeHTTP runs: the goproxy server wrapped in the
	// middleware installed around it.
	handler http.Handler
	// mux serves requests addressed to robotsgate itself (not proxied):
	// /healthz, and the admin API.
	mux *http.ServeMux

	mu       sync.Mutex
	servers  []*http.Server
	shutdown bool

	metrics *metrics.Metrics // counted by the inflight step (pipeline.go)
	admin   http.Handler     // the admin API (wiring.go)

	polite *politeness.Politeness // crawl-delay pacing, backoff (decide.go)

	https *httpsState // CONNECT handling, CA, hijacked-connection tracking (connect.go)

	self selfaddr.Set // robotsgate's own listen addresses, refused as destinations (proxy/selfaddr)

	copyBufs sync.Pool       // *[]byte buffers that forwarded bodies are copied through (forward.go)
	fwd      forwardTrippers // the round trippers forward installs (forward.go)

	life *lifetime // shutdown contexts and running handlers (proxy.go)
}

// New returns a Server for cfg, which must be valid (Config.Validate).
func New(cfg config.Config, deps Deps) (*Server, error) {
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
		ptr:   deps.PolicyTransport,
		clock: deps.Clock,
		mux:   http.NewServeMux(),
		life:  newLifetime(),
	}
	s.fwd.init(s)
	if s.metrics = deps.Metrics; s.metrics == nil {
		s.metrics = NewMetrics()
	}
	if s.clock == nil {
		s.clock = enforce.SystemClock{}
	}
	// robotsgate_paused_origins counts the pauses (pipeline.go):
	deps.Pauses = countPauses(s.metrics, deps.Pauses)
	pol, err := newPoliteness(cfg, deps.Pacer, deps.Pauses, s.clock, s.log) // (decide.go)
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
	if s.ptr == s.tr {
		return nil, errors.New("proxy: Deps.PolicyTransport must not be the transport of proxied requests")
	}
	s.agents = newAgents(cfg.Agent, cfg.AgentHeader, cfg.AllowAgentOverride).withPurposes(cfg.Purposes, cfg.Usage.PurposeHeader)
	s.agents.contentUse = cfg.ContentUse
	s.proxy = s.newGoproxy()

	if err := s.install(); err != nil {
		return nil, err
	}
	return s, nil
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

// ServeHTTP handles one client request: proxied ones (absolute URL or
// CONNECT) go through the hooks; others (GET /healthz, admin) to the
// server's own routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// Serve accepts proxy connections on ln until Shutdown. It returns nil
// after Shutdown.
func (s *Server) Serve(ln net.Listener) error { return s.serve(ln, s) }

// ServeAdmin serves the admin API (and /metrics, /healthz) on ln (admin_listen) until Shutdown.
func (s *Server) ServeAdmin(ln net.Listener) error { return s.serve(ln, s.admin) }

func (s *Server) serve(ln net.Listener, h http.Handler) error {
	// The client limits (config.ClientConfig), which CONNECT sessions
	// apply too (hijackTracker). There is no write or whole-request read
	// timeout: proxied bodies may stream for as long as the origin sends
	// them, and net/http's ReadTimeout would cancel them.
	srv := &http.Server{
		Handler:           h,
		MaxHeaderBytes:    s.cfg.Client.MaxHeaderBytes,
		ReadHeaderTimeout: s.cfg.Client.HeaderTimeout,
		IdleTimeout:       s.cfg.Client.IdleTimeout,
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
	s.self.Add(ln.Addr().String()) // the real address (port 0 resolved)
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
	errs = append(errs, s.https.hijacks.shutdown(ctx)) // MITM sessions and tunnels (conntrack.go)
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

// ShutdownGrace bounds how long Shutdown waits, after its own
// deadline forced the connections closed, for the request handlers still
// running to write their audit records.
const ShutdownGrace = 5 * time.Second

// errShuttingDown is the cancellation cause of the contexts Shutdown ends.
var errShuttingDown = errors.New("robotsgate is shutting down")

// lifetime is what a Server's request handlers need to know of its
// shutdown: two contexts that Shutdown cancels, and a count of the
// handlers still running so that Shutdown can wait for their audit
// records before the caller closes the audit log.
//
//   - waits ends when Shutdown begins: requests waiting for something
//     that may take long (a crawl-delay slot) stop waiting and are
//     answered 503.
//   - hard ends when Shutdown's deadline has passed: the upstream round
//     trips of requests inside MITM sessions, whose contexts net/http
//     does not cancel, are cut short.
type lifetime struct {
	waits, hard         context.Context
	stopWaits, stopHard context.CancelCauseFunc
	grace               time.Duration // ShutdownGrace unless a test sets it
	mu                  sync.Mutex
	running             int
	idle                zeroSignal // fired when running drops to 0
}

// zeroSignal tells waiters that a count its owner keeps has dropped to
// zero. The owner guards it with the lock that guards the count.
type zeroSignal struct{ ch chan struct{} }

// wait returns a channel closed at the next fire.
func (z *zeroSignal) wait() <-chan struct{} {
	if z.ch == nil {
		z.ch = make(chan struct{})
	}
	return z.ch
}

// fire wakes the waiters, if any; the owner calls it when the count
// drops to zero.
func (z *zeroSignal) fire() {
	if z.ch != nil {
		close(z.ch)
		z.ch = nil
	}
}

func newLifetime() *lifetime {
	l := &lifetime{grace: ShutdownGrace}
	l.waits, l.stopWaits = context.WithCancelCause(context.Background())
	l.hard, l.stopHard = context.WithCancelCause(context.Background())
	return l
}

// enter counts one running handler; the caller calls leave when it ends.
func (l *lifetime) enter() {
	l.mu.Lock()
	l.running++
	l.mu.Unlock()
}

func (l *lifetime) leave() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running--
	if l.running == 0 {
		l.idle.fire()
	}
}

// inFlight returns the number of running handlers.
func (l *lifetime) inFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running
}

// wait waits until no handler runs, or ctx is done; it returns the number
// still running then.
func (l *lifetime) wait(ctx context.Context) int {
	l.mu.Lock()
	if l.running == 0 {
		l.mu.Unlock()
		return 0
	}
	idle := l.idle.wait()
	l.mu.Unlock()
	select {
	case <-idle:
		return 0
	case <-ctx.Done():
		return l.inFlight()
	}
}

// wrap returns h counted as a running handler while it runs.
func (l *lifetime) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.enter()
		defer l.leave()
		h.ServeHTTP(w, r)
	})
}

// track counts a request as running; enter runs it first. A request inside an MITM session
// does not pass through wrap, and its context (rooted in
// context.Background) ends with neither the client's connection nor
// Shutdown: track counts it as running until goproxy ends that context
// (after the response was written), and makes the context end at
// Shutdown's deadline too. Plain-HTTP requests need neither: wrap counts
// them, and net/http cancels their context when Shutdown closes their
// connection.
//
// The request's new context is a child of the hard context itself, not
// of goproxy's: goproxy's MITM request contexts carry no values (they
// come from http.ReadRequest), and one registration with each parent is
// all the request costs (three allocations less than a child of goproxy's
// context that also watches the hard one). The new context ends
// when goproxy's does (just after it, from the AfterFunc that also
// uncounts the request), or at Shutdown's deadline with its cause.
func (s *Server) track(r *http.Request, ctx *goproxy.ProxyCtx) *http.Request {
	connect, inMITM := ctx.UserData.(*requestState) // the CONNECT's state (enter creates the request's next)
	if !inMITM {
		return r
	}
	l := s.life
	l.enter()
	ci := connect.Conn
	var n uint64
	if ci != nil {
		n = ci.requestRead(r.Context()) // the head's limits no longer apply (sessionread.go)
	}
	rctx, cancel := context.WithCancelCause(l.hard)
	context.AfterFunc(r.Context(), func() {
		cancel(context.Canceled)
		if ci != nil {
			ci.responseWritten(n)
		}
		l.leave()
	})
	r = r.WithContext(rctx)
	ctx.Req = r
	return r
}

// untilShutdown returns a context that ends with parent or when Shutdown
// begins, whichever comes first; its cause is errShuttingDown in the
// second case. Call cancel when done.
func (l *lifetime) untilShutdown(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	stop := context.AfterFunc(l.waits, func() { cancel(errShuttingDown) })
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

// shuttingDown reports whether ctx (from untilShutdown) ended because
// Shutdown began.
func shuttingDown(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errShuttingDown)
}
