package proxy

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"slices"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/egress"
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

// The admin API's view of resolve-once-and-pin (upstream/pins.go): a
// decision it shows, and the robots.txt copies it shows and purges, are
// those of the address a proxied request would be pinned to.

// pinnedContext returns ctx with the address a proxied request for u
// would be pinned to, for a decision the admin API shows: the same
// policy files decide it, fetched as for that request (public ones
// from public addresses only: the egress checks below).
func (s *Server) pinnedContext(ctx context.Context, u *url.URL) context.Context {
	host, port, ok := selfaddr.DestHostPort(u.Host, u.Scheme)
	if !ok {
		return ctx
	}
	ip := upstream.LiteralIP(host)
	if s.pins != nil {
		if pin, _ := s.pins.Pin(ctx, host, port); pin != nil {
			ctx, ip = upstream.WithPin(ctx, pin), pin.Addr()
		}
	}
	if ip.IsValid() && s.egressPolicy().Check(ip).Public {
		ctx = upstream.WithPublicOrigin(ctx)
	}
	return ctx
}

// adminCache is the robots.txt cache as the admin API shows, fetches and
// purges it: an origin's copy is the one of the address a request to it
// would be pinned to; a purge forgets the copies of every address the
// name resolves to now, of the address it is pinned to, and the one
// fetched without an address. A copy of an address the name no longer
// resolves to (a transparent client's choice) expires on its own.
type adminCache struct{ s *Server }

// addrs returns the addresses of origin's copies that [adminCache] sees,
// the pinned one first; none for an IP literal or with an upstream proxy.
func (c adminCache) addrs(ctx context.Context, origin string) []netip.Addr {
	u, err := url.Parse(origin)
	if err != nil || c.s.pins == nil {
		return nil
	}
	host, port, ok := selfaddr.DestHostPort(u.Host, u.Scheme)
	if _, err := netip.ParseAddr(host); err == nil || !ok {
		return nil
	}
	var out []netip.Addr
	if a := c.s.pins.Pinned(host); a.IsValid() {
		out = append(out, a)
	}
	if pin, _ := c.s.pins.Pin(ctx, host, port); pin.Addr().IsValid() && !slices.Contains(out, pin.Addr()) {
		out = append(out, pin.Addr())
	}
	for _, a := range c.s.self.Resolve(ctx, host) {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

func (c adminCache) Entry(ctx context.Context, origin string) (*enforce.Entry, error) {
	if as := c.addrs(ctx, origin); len(as) > 0 {
		ctx = enforce.WithAddress(ctx, as[0])
	}
	return c.s.enf.Entry(ctx, origin)
}

func (c adminCache) Cached(ctx context.Context, origin string) (*enforce.Entry, bool) {
	for _, a := range c.addrs(ctx, origin) {
		if en, ok := c.s.enf.Cached(enforce.WithAddress(ctx, a), origin); ok {
			return en, true
		}
	}
	return c.s.enf.Cached(ctx, origin)
}

func (c adminCache) Purge(ctx context.Context, origin string) {
	for _, a := range c.addrs(ctx, origin) {
		c.s.enf.Purge(enforce.WithAddress(ctx, a), origin)
	}
	c.s.enf.Purge(ctx, origin)
}

// The egress policy applied (package proxy/egress classifies): the
// destination of a request is checked where it is pinned (the
// destination step, CONNECT, the transparent listener), so that a
// refusal is a 403 destination-private before anything is fetched; and
// every connection robotsgate opens is checked again by its dialer on
// the address it connects to ([upstream.EgressDial]), which resolves a name itself
// and dials only the addresses it checked: no resolution between the
// check and the dial can lead elsewhere. Policy fetches for a public
// origin ([upstream.WithPublicOrigin]) connect to public addresses only, whatever
// egress.private says: a site cannot make robotsgate fetch from the
// crawler's own network through a redirect or a License line.

// newEgressPolicy returns the egress policy of cfg.
func newEgressPolicy(cfg config.Config) *egress.Policy {
	return egress.NewPolicy(cfg.EgressPrivateAllowed(), cfg.Egress.AllowCIDRs, cfg.Egress.DenyCIDRs)
}

// egressPolicy returns the egress policy in force.
func (s *Server) egressPolicy() *egress.Policy {
	if l := s.live.Load(); l != nil {
		return l.egress
	}
	return newEgressPolicy(s.cfg)
}

// checkDestination checks the address ip that a request for u (host
// being u's) is pinned to (invalid: none known yet, the dialer checks
// it): the refusal 403 destination-private when the policy forbids it,
// otherwise ctx, the request's, marked when ip is public. pol nil checks
// nothing.
func checkDestination(ctx context.Context, pol *egress.Policy, u *url.URL, host string, ip netip.Addr) (context.Context, *outcome) {
	if pol == nil || !ip.IsValid() {
		return ctx, nil
	}
	v := pol.Check(ip)
	if v.Allowed {
		if v.Public {
			ctx = upstream.WithPublicOrigin(ctx)
		}
		return ctx, nil
	}
	what := host + " is"
	if upstream.LiteralIP(host) != ip {
		what += " " + ip.String() + ","
	}
	d := enforce.Decision{Reason: enforce.ReasonDestinationPrivate, URL: enforce.RedactedURL(u),
		Detail: "the destination " + what + " " + v.Why + ": robotsgate does not connect to it (egress.private, egress.allow_cidrs, egress.deny_cidrs)"}
	if o, err := enforce.Origin(u); err == nil {
		d.Origin = o
	}
	o := refuse(d)
	return ctx, &o
}

// connectEgress is the egress check of a CONNECT r for u to hostname
// ([checkDestination]): of the address it is pinned to, a redirected
// connection's original destination, or the IP literal it names. It
// returns the refusal, or r with its context marked and pinned: a tunnel
// dials exactly the address checked, decided by its robots.txt (a
// redirected one is pinned to its original destination already).
func connectEgress(r *http.Request, st *requestState, u *url.URL, hostname string, pin *selfaddr.Pin) (*http.Request, *outcome) {
	ip := pin.Addr()
	if rd := st.Redirected; rd != nil {
		ip = rd.dst.Addr()
	}
	if !ip.IsValid() {
		ip = upstream.LiteralIP(hostname)
	}
	ctx, refused := checkDestination(r.Context(), egressOf(st), u, hostname, ip)
	if refused != nil {
		return r, refused
	}
	if pin != nil && st.Redirected == nil {
		ctx = upstream.WithPin(ctx, pin)
	}
	if ctx == r.Context() {
		return r, nil
	}
	return r.WithContext(ctx), nil
}
