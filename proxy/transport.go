package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/metrics"
	"github.com/robotsgate/robotsgate/proxy/mitm"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
	"github.com/robotsgate/robotsgate/proxy/transparent"
)

// The two outbound transports and the dialers under them: proxied
// requests ([NewTransport]) and the policy files robotsgate fetches itself
// ([NewPolicyTransport]), which never share a connection. Every
// connection either opens goes to one address that was checked: the
// address a request was pinned to (pins.go), whose own robots.txt decided
// it, or, for a policy fetch, the address its Store key names
// ([enforce.FetchPinOf]). [Server.installTransports] applies the dialer
// wrappers, in one order.

// Outbound transport settings. goproxy's default transport has no
// timeouts and keeps two idle connections per host; these bound every
// phase of a request, and the upstream: section sizes the idle pool.
const (
	dialTimeout           = 10 * time.Second
	dialKeepAlive         = 30 * time.Second
	tlsHandshakeTimeout   = 10 * time.Second
	responseHeaderTimeout = 60 * time.Second
)

// NewTransport returns the outbound [http.Transport] of proxied requests.
// It connects directly, ignoring HTTP(S)_PROXY in the environment (a
// sidecar whose environment points at itself would loop), unless
// cfg.UpstreamProxy names a proxy on purpose. TLS verification uses the
// system roots plus https.upstream_roots.
func NewTransport(cfg config.Config) (*http.Transport, error) {
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: dialKeepAlive}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          cfg.Upstream.MaxIdleConns,
		MaxIdleConnsPerHost:   cfg.Upstream.MaxIdleConnsPerHost,
		IdleConnTimeout:       cfg.Upstream.IdleTimeout,
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		ResponseHeaderTimeout: responseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
	}
	if cfg.UpstreamProxy != nil {
		tr.Proxy = http.ProxyURL(cfg.UpstreamProxy)
	}
	if err := setUpstreamTLS(tr, cfg.HTTPS); err != nil {
		return nil, err
	}
	return tr, nil
}

// errEarlyResponse is the error of a read that returned bytes on a
// policy-file connection before its request was written.
var errEarlyResponse = errors.New("the origin sent data before the request was written: not taken as an answer")

// policyWriteBuffer is the write buffer of a policy-file connection:
// enough for the request head robotsgate writes (longer ones are written
// in several pieces).
const policyWriteBuffer = 1 << 10

// NewPolicyTransport returns the transport of the policy files robotsgate
// fetches itself (robots.txt, tdmrep.json), apart from the transport of
// proxied requests so that no byte a client chose ever travels on a
// connection a policy file is read from. A client that smuggles a second
// request in the body of an allowed one (to an origin that ignores a body
// it did not expect) can only desynchronise a connection of the proxied
// pool; a policy fetch never takes one.
//
// Its connections are not reused among policy fetches: each
// origin's robots.txt is fetched once per cache lifetime, so a kept
// connection would almost never serve a second fetch, while a broad crawl
// (many origins, one fetch each) would fill a pool with idle sockets. One
// connection per fetch also means one request per connection, so a
// response cannot belong to an earlier request: every connection is
// guarded ([writeFirstConn]) so that one delivering bytes before its
// request was written (before its TLS handshake began, for https) fails
// the fetch (robots-unreachable) instead of answering it. HTTP/2 is not
// used, for the same reason. A Server may hand a plain-HTTP fetch's
// connection that ended cleanly, one way, to a proxied request
// (handoff.go).
//
// It shares the rest with [NewTransport]: no proxy from the environment
// unless cfg.UpstreamProxy names one, the timeouts, and the upstream
// roots for TLS. A Server adds its own dialer wrappers under the guard
// ([Server.installTransports]); "robotsgate check -fetch" uses it as it is.
func NewPolicyTransport(cfg config.Config) (*http.Transport, error) {
	// No TCP keep-alive probes: a policy connection carries one request,
	// bounded by the fetch's timeouts.
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: -1}
	tr := &http.Transport{
		Proxy:             nil,
		DialContext:       d.DialContext,
		DisableKeepAlives: true,
		// The fetcher asks for and decodes encodings itself; an empty
		// TLSNextProto keeps HTTP/1.1 (one request per connection).
		DisableCompression:    true,
		TLSNextProto:          map[string]func(string, *tls.Conn) http.RoundTripper{},
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		ResponseHeaderTimeout: responseHeaderTimeout,
		// A policy request is a GET with a few headers: a small write
		// buffer, allocated once per connection, is garbage sooner.
		WriteBufferSize: policyWriteBuffer,
	}
	if cfg.UpstreamProxy != nil {
		tr.Proxy = http.ProxyURL(cfg.UpstreamProxy)
	}
	if err := setUpstreamTLS(tr, cfg.HTTPS); err != nil {
		return nil, err
	}
	guard := func(c net.Conn) net.Conn { return &writeFirstConn{Conn: c} }
	tr.DialContext = guardedDial(tr.DialContext, guard)
	tr.DialTLSContext = dialTLS(tr, []string{"http/1.1"}, guard)
	return tr, nil
}

// setUpstreamTLS makes tr verify upstream certificates against the system
// roots plus cfg.UpstreamRoots. With no extra roots it leaves tr on the
// system roots. Both transports get it, so both trust the same roots.
func setUpstreamTLS(tr *http.Transport, cfg config.HTTPSConfig) error {
	if len(cfg.UpstreamRoots) == 0 {
		return nil
	}
	roots, err := mitm.UpstreamRootCAs(cfg.UpstreamRoots)
	if err != nil {
		return err
	}
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = &tls.Config{}
	}
	tr.TLSClientConfig.RootCAs = roots
	return nil
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
//     the idle pool (idleconns.go); the egress policy's check of the
//     address dialled ([Server.egressDial], without an upstream proxy); the dialer that refuses robotsgate's
//     own addresses and connects only to the addresses a request was
//     pinned to ([selfaddr.Set.Dialer]); the record of outbound
//     connections that recognises a redirect loop (with a transparent
//     listener); TLS to the pinned name over all of it ([dialTLS]);
//   - policy fetches: the transport's guarded dialer ([NewPolicyTransport]);
//     the egress check, stricter for a public origin's fetches; the same self-refusing, pinned dialer; the loop record; outermost,
//     the pin of an address-keyed fetch ([pinPolicyFetch]).
//
// Without an upstream proxy, innermost on proxied requests, the take of
// a connection a plain-HTTP policy fetch left clean ([handoff.dialer]),
// and the policy transport's "http" fetches exchanged by [firstExchange].
//
// Outermost on both, a failed dial to a pinned address is recorded so
// that the name's next request picks another address ([addrPins.failed]).
func (s *Server) installTransports() {
	s.self.Add(s.cfg.Listen)
	if s.cfg.AdminListen != "" {
		s.self.Add(s.cfg.AdminListen)
	}
	if s.cfg.Transparent.Listen != "" {
		s.self.Add(s.cfg.Transparent.Listen)
		s.outbound = &transparent.Outbound{}
	}
	s.conns = &connTracker{firstIdle: s.cfg.Upstream.FirstIdleTimeout}
	for _, c := range s.conns.collectors() {
		if err := s.metrics.Registry().Register(c); err != nil {
			s.log.Warn().Err(err).Msg("upstream connection metrics not exported")
		}
	}
	if s.cfg.UpstreamProxy == nil {
		s.pins = newAddrPins(&s.self) // (pins.go)
	}
	dial := orDefault(s.tr.DialContext, dialKeepAlive)
	handOff := s.pins != nil && s.ptr != nil && s.ptr.Proxy == nil && canHandOff
	if handOff {
		s.handoff = newHandoff()
		dial = s.handoff.dialer(dial) // (handoff.go)
	}
	dial = s.conns.wrap(dial)
	if s.pins != nil { // with an upstream proxy, every dial is to it
		dial = s.egressDial(dial, false) // (egressdial.go)
	}
	dial = s.self.Dialer(dial)
	dial = s.recordOutbound(dial)
	s.tr.DialContext = s.noteFailures(dial)
	if s.pins != nil {
		s.tr.DialTLSContext = dialTLS(s.tr, nil, nil)
	}
	if s.ptr != nil {
		pdial := orDefault(s.ptr.DialContext, -1)
		if s.pins != nil {
			pdial = s.egressDial(pdial, true)
		}
		pdial = s.self.Dialer(pdial)
		pdial = s.recordOutbound(pdial)
		s.ptr.DialContext = pinPolicyFetch(&s.self, s.noteFailures(pdial))
	}
	if handOff {
		s.exchangeFirst()
	}
}

// exchangeFirst makes the policy transport exchange its plain-HTTP
// fetches itself, so that a connection whose response ended cleanly is
// handed to the transport of proxied requests (firstexchange.go).
func (s *Server) exchangeFirst() {
	defer func() {
		if recover() != nil { // "http" registered already: a transport shared by two Servers
			s.log.Warn().Msg("policy transport shared: its connections are not handed to proxied requests")
		}
	}()
	s.ptr.RegisterProtocol("http", &firstExchange{dial: s.ptr.DialContext, lot: s.handoff})
	for _, c := range s.handoff.collectors() {
		if err := s.metrics.Registry().Register(c); err != nil {
			s.log.Warn().Err(err).Msg("handed-off connection metrics not exported")
		}
	}
}

// noteFailures returns dial with the failed dials to a pinned address
// recorded, so that the name's next request picks another address (pins.go).
func (s *Server) noteFailures(dial selfaddr.DialFunc) selfaddr.DialFunc {
	if s.pins == nil {
		return dial
	}
	return s.pins.noteFailures(dial)
}

// orDefault returns dial, or a plain dialer's when it is nil.
func orDefault(dial selfaddr.DialFunc, keepAlive time.Duration) selfaddr.DialFunc {
	if dial == nil {
		return (&net.Dialer{Timeout: dialTimeout, KeepAlive: keepAlive}).DialContext
	}
	return dial
}

// recordOutbound returns dial with its connections recorded in
// s.outbound, or dial itself without a transparent listener.
func (s *Server) recordOutbound(dial selfaddr.DialFunc) selfaddr.DialFunc {
	if s.outbound == nil {
		return dial
	}
	return selfaddr.DialFunc(s.outbound.Dialer(transparent.DialFunc(dial)))
}

// pinPolicyFetch returns dial with the connections of a policy fetch for
// an address-keyed entry ([enforce.FetchPinOf]) pinned to that address for
// its host: the dialer then connects there or nowhere; never to
// robotsgate itself.
func pinPolicyFetch(self *selfaddr.Set, dial selfaddr.DialFunc) selfaddr.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if p, ok := enforce.FetchPinOf(ctx); ok && p.SameHost(addr) {
			host, port, _ := net.SplitHostPort(addr)
			n, ok := selfaddr.ParsePort(port)
			if !ok {
				return nil, fmt.Errorf("dial %s: invalid port %q", addr, port)
			}
			if self.IsSelf(n, p.Addr) {
				return nil, fmt.Errorf("dial %s: %w", addr, selfaddr.ErrSelfDial)
			}
			ctx = selfaddr.WithPin(ctx, selfaddr.PinTo(host, n, p.Addr))
		}
		return dial(ctx, network, addr)
	}
}

// guardedDial returns dial with each connection wrapped by wrap.
func guardedDial(dial selfaddr.DialFunc, wrap func(net.Conn) net.Conn) selfaddr.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return wrap(c), nil
	}
}

// dialTLS returns the TLS dialer of tr: tr.DialContext as it is when it
// dials (so the wrappers installed later apply), then a TLS handshake
// with tr's TLS settings, the server name being the name the request is
// pinned to ([selfaddr.Pin.PoolHost] is not a name) or else the host
// dialed. protos are the ALPN protocols (nil: tr's own, HTTP/2 included);
// wrap, when not nil, wraps the TLS connection.
func dialTLS(tr *http.Transport, protos []string, wrap func(net.Conn) net.Conn) selfaddr.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", addr, err)
		}
		if pin := selfaddr.PinFrom(ctx); pin != nil && pin.PoolHost() != "" && pin.PoolHost() == host {
			host = pin.Host()
		}
		raw, err := tr.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cfg := tr.TLSClientConfig.Clone()
		if cfg == nil {
			cfg = &tls.Config{}
		}
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		if protos != nil {
			cfg.NextProtos = protos
		} else if len(cfg.NextProtos) == 0 {
			cfg.NextProtos = []string{"http/1.1"}
		}
		hctx, cancel := context.WithTimeout(ctx, tlsHandshakeTimeout)
		defer cancel()
		tc := tls.Client(raw, cfg)
		if err := tc.HandshakeContext(hctx); err != nil {
			raw.Close()
			return nil, err
		}
		if wrap != nil {
			return wrap(tc), nil
		}
		return tc, nil
	}
}

// writeFirstConn is a connection that carries one request: a read that
// returns bytes before anything was written fails with [errEarlyResponse]
// and closes the connection.
type writeFirstConn struct {
	net.Conn
	wrote atomic.Bool
}

// NetConn returns the connection guarded.
func (c *writeFirstConn) NetConn() net.Conn { return c.Conn }

func (c *writeFirstConn) Write(p []byte) (int, error) {
	c.wrote.Store(true) // before the bytes can reach the peer
	return c.Conn.Write(p)
}

func (c *writeFirstConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.wrote.Load() {
		c.Conn.Close()
		return 0, errEarlyResponse
	}
	return n, err
}

// roundTrip forwards req with the transport of proxied requests: traced
// for the idle pool (idleconns.go), and given to the transport under its
// pin's [selfaddr.Pin.PoolHost] when it has one, so that it never leaves
// on a connection to another address of its name; the response names
// req.
func (s *Server) roundTrip(req *http.Request) (*http.Response, error) {
	out := req
	if pool := selfaddr.PinFrom(req.Context()).PoolHost(); pool != "" {
		u := *req.URL
		u.Host = pool
		if _, port, err := net.SplitHostPort(req.URL.Host); err == nil {
			u.Host = net.JoinHostPort(pool, port)
		}
		out = req.WithContext(req.Context())
		out.URL = &u
		if out.Host == "" {
			out.Host = req.URL.Host
		}
	}
	// Plain HTTP may take the connection of its robots.txt (handoff.go).
	handoff := s.handoff != nil && req.URL.Scheme == "http"
	resp, err := s.tr.RoundTrip(traced(out.Context(), out, handoff))
	if resp != nil {
		resp.Request = req
	}
	return resp, err
}
