package upstream

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsgate/robotsgate/proxy/selfaddr"
)

// One connection per new origin. A plain-HTTP robots.txt (or tdmrep.json)
// fetch on a fresh connection whose response ended cleanly leaves that
// connection parked here (firstexchange.go), keyed by the host name and
// the address it is connected to; the first forwarded plain-HTTP request
// to the same name and address, when the transport of proxied requests
// dials for it, takes it instead of dialing. The hand-over goes one way
// only: a parked connection is taken by the dialer of proxied requests
// and never by a policy fetch, and a connection of proxied requests is
// never parked, so no policy file is ever read from a connection that
// carried a byte a client chose.
//
// A parked connection is taken at most once, kept for parkLifetime at
// most, and checked when taken: one on which the origin sent anything
// more, or which it closed, is closed and a fresh connection dialed
// instead, so that the client never sees the difference.

// parkLifetime is how long a parked connection waits for the forwarded
// request it was kept for; the request normally follows its robots.txt
// within milliseconds, and origins close idle connections after a few
// seconds.
const parkLifetime = time.Second

// maxParked bounds the connections parked at once; past it, a clean
// connection is closed rather than parked.
const maxParked = 1024

// handoffKey names what a parked connection is connected to: the host
// name it was asked for (an IP literal for itself), and the address.
type handoffKey struct {
	host string
	addr netip.AddrPort
}

// newHandoffKey returns the key of a connection for host connected to
// addr ("ip:port"); ok is false when addr is not an IP address and port.
func newHandoffKey(host, addr string) (handoffKey, bool) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return handoffKey{}, false
	}
	return keyOf(host, ap), true
}

// handoffKeyOf returns the key of a connection for host connected to
// addr, as [newHandoffKey] does, without formatting a TCP address.
func handoffKeyOf(host string, addr net.Addr) (handoffKey, bool) {
	if ta, ok := addr.(*net.TCPAddr); ok {
		return keyOf(host, ta.AddrPort()), true
	}
	return newHandoffKey(host, addr.String())
}

func keyOf(host string, ap netip.AddrPort) handoffKey {
	return handoffKey{host: host, addr: netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())}
}

// Handoff holds the parked connections. It is safe for concurrent use.
type Handoff struct {
	mu     sync.Mutex
	m      map[handoffKey]*parkedConn
	closed bool
	ttl    atomic.Int64 // how long a connection stays parked (a Duration)

	parked, taken atomic.Int64 // counted for /metrics
}

type parkedConn struct {
	c     net.Conn
	timer *time.Timer
}

// NewHandoff returns an empty lot of parked connections.
func NewHandoff() *Handoff {
	h := &Handoff{m: make(map[handoffKey]*parkedConn)}
	h.ttl.Store(int64(parkLifetime))
	return h
}

// park keeps c, idle after one clean exchange, for the next forwarded
// request to k. A connection parked before under k is closed.
func (h *Handoff) park(k handoffKey, c net.Conn) {
	p := &parkedConn{c: c}
	h.mu.Lock()
	old := h.m[k]
	if h.closed || old == nil && len(h.m) >= maxParked {
		h.mu.Unlock()
		c.Close()
		return
	}
	h.m[k] = p
	p.timer = time.AfterFunc(time.Duration(h.ttl.Load()), func() { h.expire(k, p) })
	h.mu.Unlock()
	h.parked.Add(1)
	if old != nil {
		old.timer.Stop()
		old.c.Close()
	}
}

// expire closes p if it is still parked under k.
func (h *Handoff) expire(k handoffKey, p *parkedConn) {
	h.mu.Lock()
	still := h.m[k] == p
	if still {
		delete(h.m, k)
	}
	h.mu.Unlock()
	if still {
		p.c.Close()
	}
}

// take returns the connection parked under k, removed, if the origin has
// neither sent anything on it nor closed it since; nil otherwise.
func (h *Handoff) take(k handoffKey) net.Conn {
	h.mu.Lock()
	p := h.m[k]
	delete(h.m, k)
	h.mu.Unlock()
	if p == nil {
		return nil
	}
	p.timer.Stop()
	if !Quiet(p.c) {
		p.c.Close()
		return nil
	}
	if tc, ok := rawConn(p.c).(*net.TCPConn); ok {
		// The dialer of proxied requests probes its connections.
		_ = tc.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: DialKeepAlive, Interval: DialKeepAlive})
	}
	h.taken.Add(1)
	return p.c
}

// CloseAll closes every parked connection, and those parked later.
func (h *Handoff) CloseAll() {
	h.mu.Lock()
	m := h.m
	h.m, h.closed = make(map[handoffKey]*parkedConn), true
	h.mu.Unlock()
	for _, p := range m {
		p.timer.Stop()
		p.c.Close()
	}
}

type handoffOKKey struct{}

// withHandoff returns ctx saying that the plain-HTTP forwarded request it
// belongs to may be sent on a parked connection ([Handoff.Dialer]).
// Nothing else is: neither a CONNECT tunnel nor the TCP connection under
// TLS, which share the transport's dialer.
func withHandoff(ctx context.Context) context.Context {
	return context.WithValue(ctx, handoffOKKey{}, true)
}

// Dialer returns next preceded by the take of a parked connection for a
// request marked by [withHandoff]: to the host the request is pinned to,
// or the IP literal it names, at the address dialed.
func (h *Handoff) Dialer(next selfaddr.DialFunc) selfaddr.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if ok, _ := ctx.Value(handoffOKKey{}).(bool); ok && (network == "tcp" || network == "tcp4" || network == "tcp6") {
			host, _, _ := net.SplitHostPort(addr)
			if pin := selfaddr.PinFrom(ctx); pin != nil {
				host = pin.Host()
			}
			if k, ok := newHandoffKey(host, addr); ok {
				if c := h.take(k); c != nil {
					return c, nil
				}
			}
		}
		return next(ctx, network, addr)
	}
}

// rawConn returns the connection under the wrappers of robotsgate's
// dialers (each with a NetConn method).
func rawConn(c net.Conn) net.Conn {
	for range 8 {
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return c
		}
		c = u.NetConn()
	}
	return c
}

// Taken returns how many parked connections were handed to proxied
// requests.
func (h *Handoff) Taken() int64 { return h.taken.Load() }

// SetParkLifetime sets how long a connection parked from now on waits for
// its request ([parkLifetime] unless set).
func (h *Handoff) SetParkLifetime(d time.Duration) { h.ttl.Store(int64(d)) }

// Parked returns the connections parked now.
func (h *Handoff) Parked() []net.Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []net.Conn
	for _, p := range h.m {
		out = append(out, p.c)
	}
	return out
}

// Collectors returns the metrics of h.
func (h *Handoff) Collectors() []prometheus.Collector {
	counter := func(name, help string, v *atomic.Int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(v.Load()) })
	}
	return []prometheus.Collector{
		counter("robotsgate_policy_connections_parked_total", "Connections of plain-HTTP policy fetches kept after a clean response for the next proxied request.", &h.parked),
		counter("robotsgate_policy_connections_handed_total", "Parked policy-fetch connections that carried a proxied request instead of a new connection.", &h.taken),
	}
}
