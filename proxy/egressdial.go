package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/egress"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
)

// The egress policy applied (package proxy/egress classifies): the
// destination of a request is checked where it is pinned (the
// destination step, CONNECT, the transparent listener), so that a
// refusal is a 403 destination-private before anything is fetched; and
// every connection robotsgate opens is checked again by its dialer on
// the address it connects to (egressDial), which resolves a name itself
// and dials only the addresses it checked: no resolution between the
// check and the dial can lead elsewhere. Policy fetches for a public
// origin (withPublicOrigin) connect to public addresses only, whatever
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

type publicOriginKey struct{}

// withPublicOrigin returns ctx saying that the request it belongs to
// goes to a public address: the policy files fetched for it connect to
// public addresses only.
func withPublicOrigin(ctx context.Context) context.Context {
	return context.WithValue(ctx, publicOriginKey{}, true)
}

// publicOrigin reports whether ctx is [withPublicOrigin]'s.
func publicOrigin(ctx context.Context) bool {
	ok, _ := ctx.Value(publicOriginKey{}).(bool)
	return ok
}

// egressRefusal returns why ip may not be connected to under pol ("" when
// it may); public says that only a public address may be.
func egressRefusal(pol *egress.Policy, ip netip.Addr, public bool) string {
	switch v := pol.Check(ip); {
	case !v.Allowed:
		return v.Why
	case public && !v.Public:
		return "private, and the policy file is fetched for a public origin"
	}
	return ""
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
			ctx = withPublicOrigin(ctx)
		}
		return ctx, nil
	}
	what := host + " is"
	if literalIP(host) != ip {
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
		ip = literalIP(hostname)
	}
	ctx, refused := checkDestination(r.Context(), egressOf(st), u, hostname, ip)
	if refused != nil {
		return r, refused
	}
	if pin != nil && st.Redirected == nil {
		ctx = withPin(ctx, pin)
	}
	if ctx == r.Context() {
		return r, nil
	}
	return r.WithContext(ctx), nil
}

// literalIP returns the address host names when it is an IP literal.
func literalIP(host string) netip.Addr {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return ip
}

// egressDial returns dial with the address of every connection checked
// against the egress policy in force before it is dialled: an IP
// literal as it is, a name resolved here (as pins.go resolves it) and
// dialled at those of its addresses that pass, and nowhere when none
// does. fetches says that dial is the policy transport's: a fetch for a
// public origin ([withPublicOrigin]) connects to public addresses only.
// A refused connection fails with [enforce.ErrDestinationPrivate].
func (s *Server) egressDial(dial selfaddr.DialFunc, fetches bool) selfaddr.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, p, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", addr, err)
		}
		port, ok := selfaddr.ParsePort(p)
		if !ok {
			return nil, fmt.Errorf("dial %s: invalid port %q", addr, p)
		}
		ips := []netip.Addr{literalIP(host)}
		if !ips[0].IsValid() {
			if ips = s.self.Resolve(ctx, host); len(ips) == 0 {
				return nil, &net.OpError{Op: "dial", Net: network,
					Err: &net.DNSError{Err: "no address found", Name: host, IsNotFound: true}}
			}
		}
		pol, public := s.egressPolicy(), fetches && publicOrigin(ctx)
		var first error
		for _, ip := range ips {
			if why := egressRefusal(pol, ip, public); why != "" {
				if first == nil {
					first = fmt.Errorf("dial %s: %s is %s: %w", addr, ip, why, enforce.ErrDestinationPrivate)
				}
				continue
			}
			c, err := dial(ctx, network, netip.AddrPortFrom(ip, port).String())
			if err == nil {
				return c, nil
			}
			if first == nil || errors.Is(first, enforce.ErrDestinationPrivate) {
				first = err
			}
			if ctx.Err() != nil {
				break
			}
		}
		return nil, first
	}
}
