package upstream

import (
	"context"
	"errors"
	"net"
	"net/netip"
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
// ([RoundTrip]). If the address stops answering, the request fails;
// it never falls back to an address whose robots.txt did not decide it.
//
// The address picked for a name is kept for PinLifetime and kept again
// while the name still resolves to it, so that a round-robin answer does
// not make each request fetch robots.txt from another address. On the
// transparent listener the client chose the address (the original
// destination): checkRedirected pins to it (transparent.go).

// PinLifetime is how long the address picked for a name is used before
// the name is resolved again.
const PinLifetime = time.Minute

// maxPins bounds the names kept; past it, the expired ones are dropped,
// then any (they are resolved again when next asked for).
const maxPins = 1 << 16

// AddrPins is the address each host name is pinned to in the forward
// proxy. It is safe for concurrent use.
type AddrPins struct {
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

// NewAddrPins returns the pins of a forward proxy that listens on self.
func NewAddrPins(self *selfaddr.Set) *AddrPins {
	return &AddrPins{self: self, now: time.Now, m: make(map[string]hostPin)}
}

// SetClock makes p read the time from now ([time.Now] unless set); call it
// before p is used.
func (p *AddrPins) SetClock(now func() time.Time) { p.now = now }

// Pin returns the pin of a request to host:port: to the address the name
// is pinned to, or, when none is, it expired or port is one robotsgate
// listens on, to one address of a fresh resolution (the one pinned
// before if the name still resolves to it, else the first). self reports
// that the destination is robotsgate itself: any address of the name. A name that does not resolve gives a pin to no address: the
// dial fails.
func (p *AddrPins) Pin(ctx context.Context, host string, port uint16) (pin *selfaddr.Pin, self bool) {
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
	p.store(host, hostPin{addr: addr, avoid: hp.avoid, until: now.Add(PinLifetime), pin: pin}, now)
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
func (p *AddrPins) failed(host string, addr netip.Addr) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if hp, ok := p.m[host]; ok && hp.addr == addr {
		p.m[host] = hostPin{addr: addr, avoid: addr}
	}
}

// NoteFailures returns dial with the failures of pinned dials recorded
// (failed).
func (p *AddrPins) NoteFailures(dial selfaddr.DialFunc) selfaddr.DialFunc {
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
func (p *AddrPins) store(host string, hp hostPin, now time.Time) {
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

// Pinned returns the address host is pinned to, fresh or not, or the
// zero Addr.
func (p *AddrPins) Pinned(host string) netip.Addr {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[host].addr
}

// WithPin returns ctx carrying pin for the dialer and its address for
// enforce, whose policy files are then those fetched from it.
func WithPin(ctx context.Context, pin *selfaddr.Pin) context.Context {
	ctx = selfaddr.WithPin(ctx, pin)
	if a := pin.Addr(); a.IsValid() {
		ctx = enforce.WithAddress(ctx, a)
	}
	return ctx
}
