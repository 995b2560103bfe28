package proxy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
)

// Resolve once and pin. A name may resolve to several addresses, served
// by different parties; robots.txt speaks only for the server that sent
// it. So the forward proxy resolves a request's host itself, picks one
// address, and pins the request to it: the robots.txt (and tdmrep.json)
// that decide it are the ones fetched from that address (enforce keys
// them by origin and address, [enforce.WithAddress]), and the request is
// dialled to that address only, never to another one of the name
// ([selfaddr.Set.Dialer]), on a connection to that address only
// ([Server.roundTrip]). If the address stops answering, the request fails;
// it never falls back to an address whose robots.txt did not decide it.
//
// The address picked for a name is kept for pinLifetime and kept again
// while the name still resolves to it, so that a round-robin answer does
// not make each request fetch robots.txt from another address. On the
// transparent listener the client chose the address (the original
// destination): checkRedirected pins to it (transparent.go).

// pinLifetime is how long the address picked for a name is used before
// the name is resolved again.
const pinLifetime = time.Minute

// maxPins bounds the names kept; past it, the expired ones are dropped,
// then any (they are resolved again when next asked for).
const maxPins = 1 << 16

// addrPins is the address each host name is pinned to in the forward
// proxy. It is safe for concurrent use.
type addrPins struct {
	self *selfaddr.Set
	now  func() time.Time

	mu sync.Mutex
	m  map[string]hostPin
}

// hostPin is the address a name is pinned to, until when; avoid is an
// address a dial to which failed, not picked again while the name has
// another.
type hostPin struct {
	addr, avoid netip.Addr
	until       time.Time
	pin         *selfaddr.Pin // to addr, on the port last asked for
}

func newAddrPins(self *selfaddr.Set) *addrPins {
	return &addrPins{self: self, now: time.Now, m: make(map[string]hostPin)}
}

// pin returns the pin of a request to host:port: to the address the name
// is pinned to, or, when none is, it expired or port is one robotsgate
// listens on, to one address of a fresh resolution (the one pinned
// before if the name still resolves to it, else the first). self reports
// that the destination is robotsgate itself: any address of the name. A name that does not resolve gives a pin to no address: the
// dial fails.
func (p *addrPins) pin(ctx context.Context, host string, port uint16) (pin *selfaddr.Pin, self bool) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ip, err := netip.ParseAddr(host); err == nil {
		// An IP literal names its one address: the dialer connects there,
		// the idle pool and enforce key on it already.
		if !p.self.Listens(port) {
			return nil, false
		}
		return selfaddr.PinTo(host, port, ip), p.self.IsSelf(port, ip)
	}
	now := p.now()
	p.mu.Lock()
	hp, ok := p.m[host]
	p.mu.Unlock()
	// On a port robotsgate listens on, the name is resolved for every
	// request: one re-pointed at robotsgate is refused at once.
	if ok && now.Before(hp.until) && !p.self.Listens(port) {
		if hp.pin != nil && hp.pin.Port() == port { // pins are immutable: shared
			return hp.pin, false
		}
		return selfaddr.PinTo(host, port, hp.addr), false
	}
	ips := p.self.Resolve(ctx, host)
	if len(ips) == 0 {
		return selfaddr.PinTo(host, port, netip.Addr{}), false
	}
	addr := pick(ips, hp)
	pin = selfaddr.PinTo(host, port, addr)
	p.store(host, hostPin{addr: addr, avoid: hp.avoid, until: now.Add(pinLifetime), pin: pin}, now)
	return pin, p.self.IsSelf(port, ips...)
}

// pick returns the address of ips to pin a name to that was pinned as
// prev: prev's address if the name still resolves to it and no dial to
// it failed, else the first address that is not the failed one, else the
// first.
func pick(ips []netip.Addr, prev hostPin) netip.Addr {
	same := func(a, b netip.Addr) bool { return b.IsValid() && a.WithZone("") == b.WithZone("") }
	if prev.addr != prev.avoid {
		for _, ip := range ips {
			if same(ip, prev.addr) {
				return ip
			}
		}
	}
	for _, ip := range ips {
		if !same(ip, prev.avoid) {
			return ip
		}
	}
	return ips[0]
}

// failed records that a dial to addr, the address host is pinned to,
// failed: the next request resolves the name again and picks another of
// its addresses if it has one, whose own robots.txt then decides. The
// request whose dial failed is not sent elsewhere.
func (p *addrPins) failed(host string, addr netip.Addr) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if hp, ok := p.m[host]; ok && hp.addr == addr {
		p.m[host] = hostPin{addr: addr, avoid: addr}
	}
}

// noteFailures returns dial with the failures of pinned dials recorded
// (failed).
func (p *addrPins) noteFailures(dial selfaddr.DialFunc) selfaddr.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil && ctx.Err() == nil && !errors.Is(err, selfaddr.ErrSelfDial) && !errors.Is(err, enforce.ErrDestinationPrivate) {
			host, _, _ := net.SplitHostPort(addr)
			if pin := selfaddr.PinFrom(ctx); pin.Addr().IsValid() && (host == pin.Host() || host == pin.PoolHost()) {
				p.failed(pin.Host(), pin.Addr())
			}
		}
		return c, err
	}
}

// store keeps hp for host, dropping expired names (then any) when the
// map is full.
func (p *addrPins) store(host string, hp hostPin, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.m) >= maxPins {
		for h, v := range p.m {
			if !now.Before(v.until) {
				delete(p.m, h)
			}
		}
		for h := range p.m {
			if len(p.m) < maxPins*7/8 {
				break
			}
			delete(p.m, h)
		}
	}
	p.m[host] = hp
}

// pinned returns the address host is pinned to, fresh or not, or the
// zero Addr.
func (p *addrPins) pinned(host string) netip.Addr {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[host].addr
}

// withPin returns ctx carrying pin for the dialer and its address for
// enforce, whose policy files are then those fetched from it.
func withPin(ctx context.Context, pin *selfaddr.Pin) context.Context {
	ctx = selfaddr.WithPin(ctx, pin)
	if a := pin.Addr(); a.IsValid() {
		ctx = enforce.WithAddress(ctx, a)
	}
	return ctx
}

// pinnedContext returns ctx with the address a proxied request for u
// would be pinned to, for a decision the admin API shows: the same
// policy files decide it, fetched as for that request (public ones
// from public addresses only, egressdial.go).
func (s *Server) pinnedContext(ctx context.Context, u *url.URL) context.Context {
	host, port, ok := selfaddr.DestHostPort(u.Host, u.Scheme)
	if !ok {
		return ctx
	}
	ip := literalIP(host)
	if s.pins != nil {
		if pin, _ := s.pins.pin(ctx, host, port); pin != nil {
			ctx, ip = withPin(ctx, pin), pin.Addr()
		}
	}
	if ip.IsValid() && s.egressPolicy().Check(ip).Public {
		ctx = withPublicOrigin(ctx)
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
	if a := c.s.pins.pinned(host); a.IsValid() {
		out = append(out, a)
	}
	if pin, _ := c.s.pins.pin(ctx, host, port); pin.Addr().IsValid() && !slices.Contains(out, pin.Addr()) {
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
