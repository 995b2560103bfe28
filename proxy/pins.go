package proxy

import (
	"context"
	"net/netip"
	"net/url"
	"slices"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
	"github.com/robotsgate/robotsgate/proxy/upstream"
)

// The admin API's view of resolve-once-and-pin (upstream/pins.go): a
// decision it shows, and the robots.txt copies it shows and purges, are
// those of the address a proxied request would be pinned to.

// pinnedContext returns ctx with the address a proxied request for u
// would be pinned to, for a decision the admin API shows: the same
// policy files decide it, fetched as for that request (public ones
// from public addresses only, egressdial.go).
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
