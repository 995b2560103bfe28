package proxy

import (
	"net/http"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/metrics"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
	"github.com/robotsgate/robotsgate/proxy/transparent"
	"github.com/robotsgate/robotsgate/proxy/upstream"
)

// The two outbound transports (package upstream builds them and their
// dialers) with a configuration's settings, and the dialer wrappers a
// Server applies, in one order ([Server.installTransports]).

// NewTransport returns the outbound transport of proxied requests
// ([upstream.NewTransport]) with cfg's settings.
func NewTransport(cfg config.Config) (*http.Transport, error) {
	return upstream.NewTransport(upstreamConfig(cfg))
}

// NewPolicyTransport returns the transport of the policy files robotsgate
// fetches itself ([upstream.NewPolicyTransport]) with cfg's settings.
func NewPolicyTransport(cfg config.Config) (*http.Transport, error) {
	return upstream.NewPolicyTransport(upstreamConfig(cfg))
}

// upstreamConfig returns the settings of cfg the outbound transports are
// built from.
func upstreamConfig(cfg config.Config) upstream.Config {
	u := cfg.Upstream
	return upstream.Config{Proxy: cfg.UpstreamProxy, Roots: cfg.HTTPS.UpstreamRoots,
		MaxIdleConns: u.MaxIdleConns, MaxIdleConnsPerHost: u.MaxIdleConnsPerHost, IdleTimeout: u.IdleTimeout}
}

// EnforceConfig returns the robots policy's settings, every value from
// cfg: robots.txt and tdmrep.json fetched through tr (the policy
// transport), kept in store, reported to metrics and log. serve, check
// -fetch and the tests build their Enforcer from it.
func EnforceConfig(cfg config.Config, tr http.RoundTripper, store enforce.Store, metrics *metrics.Metrics, log zerolog.Logger) enforce.Config {
	r := cfg.Robots
	return enforce.Config{
		Fetcher: &enforce.HTTPFetcher{
			Transport:    tr,
			UserAgent:    r.UserAgent,
			MaxBytes:     r.MaxBytes,
			MaxRedirects: r.MaxRedirects,
			Timeout:      r.FetchTimeout,
		},
		Store:             store,
		Log:               log.With().Str("component", "enforce").Logger(),
		Hooks:             metrics.EnforceHooks(),
		TTL:               r.TTL,
		MinTTL:            r.MinTTL,
		UnreachableWindow: r.UnreachableWindow,
		RetryMin:          r.RetryMin,
		RetryMax:          r.RetryMax,
		MaxBytes:          r.MaxBytes,
		FetchTimeout:      r.FetchTimeout,
	}
}

// installTransports records the configured listen addresses
// ([Server.Serve] adds the real ones of its listeners) and applies the
// dialer wrappers, from the network outwards:
//
//   - proxied requests: the transport's dialer; the connection counter of
//     the idle pool ([upstream.ConnTracker]); the egress policy's check of the
//     address dialled ([upstream.EgressDial], without an upstream proxy); the dialer that refuses robotsgate's
//     own addresses and connects only to the addresses a request was
//     pinned to ([selfaddr.Set.Dialer]); the record of outbound
//     connections that recognises a redirect loop (with a transparent
//     listener); TLS to the pinned name over all of it ([upstream.DialTLS]);
//   - policy fetches: the transport's guarded dialer ([upstream.NewPolicyTransport]);
//     the egress check, stricter for a public origin's fetches; the same self-refusing, pinned dialer; the loop record; outermost,
//     the pin of an address-keyed fetch ([upstream.PinPolicyFetch]).
//
// Without an upstream proxy, innermost on proxied requests, the take of
// a connection a plain-HTTP policy fetch left clean ([upstream.Handoff.Dialer]),
// and the policy transport's "http" fetches exchanged by [upstream.NewFirstExchange].
//
// Outermost on both, a failed dial to a pinned address is recorded so
// that the name's next request picks another address ([upstream.AddrPins.NoteFailures]).
func (s *Server) installTransports() {
	s.self.Add(s.cfg.Listen)
	if s.cfg.AdminListen != "" {
		s.self.Add(s.cfg.AdminListen)
	}
	if s.cfg.Transparent.Listen != "" {
		s.self.Add(s.cfg.Transparent.Listen)
		s.outbound = &transparent.Outbound{}
	}
	s.conns = upstream.NewConnTracker(s.cfg.Upstream.FirstIdleTimeout)
	for _, c := range s.conns.Collectors() {
		if err := s.metrics.Registry().Register(c); err != nil {
			s.log.Warn().Err(err).Msg("upstream connection metrics not exported")
		}
	}
	if s.cfg.UpstreamProxy == nil {
		s.pins = upstream.NewAddrPins(&s.self) // (upstream/pins.go)
	}
	dial := upstream.OrDefault(s.tr.DialContext, upstream.DialKeepAlive)
	handOff := s.pins != nil && s.ptr != nil && s.ptr.Proxy == nil && upstream.CanHandOff
	if handOff {
		s.handoff = upstream.NewHandoff()
		dial = s.handoff.Dialer(dial) // (upstream/handoff.go)
	}
	dial = s.conns.Wrap(dial)
	if s.pins != nil { // with an upstream proxy, every dial is to it
		dial = upstream.EgressDial(&s.self, s.egressPolicy, dial, false) // (upstream/egressdial.go)
	}
	dial = s.self.Dialer(dial)
	dial = s.recordOutbound(dial)
	s.tr.DialContext = s.noteFailures(dial)
	if s.pins != nil {
		s.tr.DialTLSContext = upstream.DialTLS(s.tr, nil, nil)
	}
	if s.ptr != nil {
		pdial := upstream.OrDefault(s.ptr.DialContext, -1)
		if s.pins != nil {
			pdial = upstream.EgressDial(&s.self, s.egressPolicy, pdial, true)
		}
		pdial = s.self.Dialer(pdial)
		pdial = s.recordOutbound(pdial)
		s.ptr.DialContext = upstream.PinPolicyFetch(&s.self, s.noteFailures(pdial))
	}
	if handOff {
		s.exchangeFirst()
	}
}

// exchangeFirst makes the policy transport exchange its plain-HTTP
// fetches itself, so that a connection whose response ended cleanly is
// handed to the transport of proxied requests (upstream/firstexchange.go).
func (s *Server) exchangeFirst() {
	defer func() {
		if recover() != nil { // "http" registered already: a transport shared by two Servers
			s.log.Warn().Msg("policy transport shared: its connections are not handed to proxied requests")
		}
	}()
	s.ptr.RegisterProtocol("http", upstream.NewFirstExchange(s.ptr.DialContext, s.handoff))
	for _, c := range s.handoff.Collectors() {
		if err := s.metrics.Registry().Register(c); err != nil {
			s.log.Warn().Err(err).Msg("handed-off connection metrics not exported")
		}
	}
}

// noteFailures returns dial with the failed dials to a pinned address
// recorded, so that the name's next request picks another address (upstream/pins.go).
func (s *Server) noteFailures(dial selfaddr.DialFunc) selfaddr.DialFunc {
	if s.pins == nil {
		return dial
	}
	return s.pins.NoteFailures(dial)
}

// recordOutbound returns dial with its connections recorded in
// s.outbound, or dial itself without a transparent listener.
func (s *Server) recordOutbound(dial selfaddr.DialFunc) selfaddr.DialFunc {
	if s.outbound == nil {
		return dial
	}
	return selfaddr.DialFunc(s.outbound.Dialer(transparent.DialFunc(dial)))
}

// roundTrip forwards req with the transport of proxied requests
// ([upstream.RoundTrip]): plain HTTP may take the connection of its
// robots.txt (upstream/handoff.go).
func (s *Server) roundTrip(req *http.Request) (*http.Response, error) {
	return upstream.RoundTrip(s.tr, req, s.handoff != nil && req.URL.Scheme == "http")
}
