// Package proxy is robotsgate's HTTP(S) forward proxy: the Server, its
// pipeline of steps and the glue of reloads and the transparent listener,
// on github.com/elazarl/goproxy. For every proxied request its steps ask
// the Enforcer for a decision; a refusal is answered by robotsgate itself
// (the request never leaves, the answer is package answer's), the rest is
// forwarded with bodies streamed, and audit records are written.
//
// A Server's steps are listed in one file, pipeline.go: [Server.install]
// lists those of every request, in order, and [Server.newSteps] those of
// one configuration, which a reload replaces. A step is a type whose name
// ends in Step, with its step methods, plus one registration line in one
// of those lists. A step lives in the file of its name without that
// ending (the pacing step in pacing.go), or, for the small steps that
// frame every request, in the file of the stage they frame (pipeline.go,
// forward.go, destination.go). Steps see net/http types and the request
// state only; every adapter to goproxy is in engine.go. The machinery the
// steps call lives in subpackages, which never import this one.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/audit/volume"
	"github.com/robotsgate/robotsgate/proxy/conns"
	"github.com/robotsgate/robotsgate/proxy/metrics"
	"github.com/robotsgate/robotsgate/proxy/pay"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
	"github.com/robotsgate/robotsgate/proxy/signing"
	"github.com/robotsgate/robotsgate/proxy/status"
	"github.com/robotsgate/robotsgate/proxy/transparent"
	"github.com/robotsgate/robotsgate/proxy/upstream"
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
	// [NewPolicyTransport], which guards it against early responses. New
	// installs under that guard the dialer that refuses robotsgate's own
	// addresses and connects to the address a fetch is for
	// ([Server.installTransports]). nil when the Enforcer fetches
	// otherwise (a test's own Fetcher).
	PolicyTransport *http.Transport
	// Clock is the clock of enforcement decisions (politeness); nil means
	// [enforce.SystemClock].
	Clock enforce.Clock
	// Pacer and Pauses hold the politeness state (crawl-delay slots, paused
	// origins); nil means in-memory, this process only. Give Redis ones to
	// share them across a fleet.
	Pacer  politeness.Pacer
	Pauses politeness.Pauses
	// Metrics receives the Server's metrics; nil means NewMetrics(). Give
	// the Enforcer its hooks (Metrics.EnforceHooks).
	Metrics *metrics.Metrics
	// FetchSigner signs robotsgate's own fetches with the signing.key in
	// force: give the Enforcer's HTTPFetcher FetchSigner.Transport(policy
	// transport). nil: the Server keeps one of its own, unused.
	FetchSigner *signing.Holder
	// Load reads the configuration again, for Reload (SIGHUP, POST
	// /v1/reload); nil means a reload is refused.
	Load func() (config.Config, error)
	// CacheStatus reports the robots.txt cache for the status page; nil
	// shows only the cache setting.
	CacheStatus func() status.Cache
	// Wallet holds the payment budgets (docs/payment.md); nil means a
	// [payment.MemoryWallet], this process only. Give a Redis one to hold
	// fleet budgets.
	Wallet payment.Wallet
	// Volume counts answered requests for the crawl report's volume
	// records (volume.go); nil: none.
	Volume *volume.Aggregator
}

// Server is a robotsgate proxy. Create it with New, serve it with Serve
// (and ServeAdmin), stop it with Shutdown.
type Server struct {
	cfg   config.Config
	proxy *goproxyServer
	enf   *enforce.Enforcer
	audit *audit.Auditor
	vol   volumeStep // the crawl report's counts (volume.go)
	log   zerolog.Logger
	tr    *http.Transport
	conns *upstream.ConnTracker // of tr's connections (upstream/idleconns.go)
	ptr   *http.Transport       // the policy transport, nil when none was given
	pins  *upstream.AddrPins    // the address each name is pinned to; nil with an upstream proxy (upstream/pins.go)
	clock enforce.Clock

	// live holds the settings a reload replaces (reload.go); cfg keeps
	// those of New, which only a restart changes.
	live atomic.Pointer[live]
	// inner is the handler chain inside access control (pipeline.go:
	// [Server.installAround]).
	inner http.Handler
	// pacer, pauses and slots hold the politeness state, kept across
	// reloads.
	pacer  politeness.Pacer
	wallet payment.Wallet // payment budgets (payment.go)
	pauses politeness.Pauses
	slots  *politeness.Slots
	reload reloader // Reload (reload.go)

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

	https *httpsState // CONNECT handling, CA, hijacked-connection tracking (connect.go)

	self selfaddr.Set // robotsgate's own listen addresses, refused as destinations (proxy/selfaddr)
	// outbound records robotsgate's own outbound connections, to recognise
	// a redirect loop; nil without a transparent listener (transparent.go).
	outbound *transparent.Outbound
	// originalDst reads a redirected connection's original destination:
	// [transparent.OriginalDst] (tests inject their own).
	originalDst func(net.Conn) (netip.AddrPort, error)

	copyBufs sync.Pool   // *[]byte buffers that forwarded bodies are copied through (forward.go)
	fwd      forwardStep // the round trippers forward installs (forward.go)
	steps    steps       // the steps of every request, around its settings' (pipeline.go)

	life *conns.Lifetime // shutdown contexts and running handlers (conns/lifetime.go)

	board       *status.Board       // the status page's records and counts (wiring.go)
	cacheStatus func() status.Cache // Deps.CacheStatus
	fetchSig    *signing.Holder     // the Signer of robotsgate's own fetches (sign.go)

	handoff *upstream.Handoff // policy connections parked for proxied requests; nil when none are (upstream/handoff.go)
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
		vol:   volumeStep{deps.Volume},
		log:   deps.Log,
		tr:    deps.Transport,
		ptr:   deps.PolicyTransport,
		clock: deps.Clock,
		mux:   http.NewServeMux(),
		life:  conns.NewLifetime(),
		pacer: deps.Pacer,
		slots: politeness.NewSlots(),

		cacheStatus: deps.CacheStatus,
		originalDst: transparent.OriginalDst,
	}
	s.reload.load = deps.Load
	if s.fetchSig = deps.FetchSigner; s.fetchSig == nil {
		s.fetchSig = new(signing.Holder)
	}
	s.fwd.init(s)
	if s.metrics = deps.Metrics; s.metrics == nil {
		s.metrics = NewMetrics()
	}
	if s.clock == nil {
		s.clock = enforce.SystemClock{}
	}
	s.board = status.New(s.clock.Now)
	// robotsgate_paused_origins counts the pauses (pacing.go):
	s.pauses = countPauses(s.metrics, deps.Pauses)
	if s.pacer == nil { // one for the Server's life: reloads keep the slots
		s.pacer = politeness.NewMemoryPacer(s.clock)
	}
	s.wallet = pay.WalletOr(deps.Wallet, s.clock) // one for the Server's life: reloads keep the budgets (proxy/pay)
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
	s.proxy = s.newGoproxy()

	if err := s.install(); err != nil {
		return nil, err
	}
	s.logHTTPS() // once every setting is accepted: a refused start is one line (connect.go)
	return s, nil
}

// Serve accepts proxy connections on ln until Shutdown. It returns nil
// after Shutdown.
func (s *Server) Serve(ln net.Listener) error { return s.serve(ln, s) }

// ServeAdmin serves the admin API (and /metrics, /healthz) on ln (admin_listen) until Shutdown.
func (s *Server) ServeAdmin(ln net.Listener) error { return s.serve(ln, s.admin) }

// clientServer is an [http.Server] of robotsgate's clients with handler h
// and the client limits ([config.ClientConfig]), which CONNECT sessions
// apply too ([conns.HijackTracker]). There is no write or whole-request read
// timeout: proxied bodies may stream for as long as the origin sends
// them, and net/http's ReadTimeout would cancel them.
func (s *Server) clientServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		MaxHeaderBytes:    s.cfg.Client.MaxHeaderBytes,
		ReadHeaderTimeout: s.cfg.Client.HeaderTimeout,
		IdleTimeout:       s.cfg.Client.IdleTimeout,
		ErrorLog:          log.New(httpErrorLogWriter{log: s.log}, "", 0),
	}
}

// register adds srv, serving ln, to the servers Shutdown stops, and ln's
// address (port 0 resolved) to robotsgate's own; once Shutdown has
// begun, it closes ln instead and returns false.
func (s *Server) register(ln net.Listener, srv *http.Server) bool {
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		ln.Close()
		return false
	}
	s.servers = append(s.servers, srv)
	s.mu.Unlock()
	s.self.Add(ln.Addr().String())
	return true
}

func (s *Server) serve(ln net.Listener, h http.Handler) error {
	srv := s.clientServer(h)
	if !s.register(ln, srv) {
		return nil
	}
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
	s.life.StopWaits()
	s.board.Close() // the status page's event streams never go idle

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
	errs = append(errs, s.https.hijacks.Shutdown(ctx)) // MITM sessions and tunnels (conns/conntrack.go)
	if ctx.Err() != nil {
		s.life.StopHard()
	}
	gctx, cancel := context.WithTimeout(context.Background(), s.life.Grace)
	if n := s.life.Wait(gctx); n > 0 {
		errs = append(errs, fmt.Errorf("%d request handler(s) still running %v after the connections were closed: their audit records may be lost", n, s.life.Grace))
	}
	cancel()
	s.tr.CloseIdleConnections()
	if s.handoff != nil {
		s.handoff.CloseAll()
	}
	return errors.Join(errs...)
}

// NewMetrics returns the metrics of a Server, with the decision counters
// of every reason a Server decides with created at 0.
func NewMetrics() *metrics.Metrics { return metrics.New(answer.KnownReasons()) }
