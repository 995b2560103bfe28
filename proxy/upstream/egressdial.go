package upstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/egress"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
)

// The egress policy's check of every connection robotsgate opens, by its
// dialer, on the address it connects to (EgressDial), which resolves a
// name itself and dials only the addresses it checked: no resolution
// between the check and the dial can lead elsewhere. Policy fetches for a
// public origin (WithPublicOrigin) connect to public addresses only,
// whatever egress.private says: a site cannot make robotsgate fetch from
// the crawler's own network through a redirect or a License line.

type publicOriginKey struct{}

// WithPublicOrigin returns ctx saying that the request it belongs to
// goes to a public address: the policy files fetched for it connect to
// public addresses only.
func WithPublicOrigin(ctx context.Context) context.Context {
	return context.WithValue(ctx, publicOriginKey{}, true)
}

// publicOrigin reports whether ctx is [WithPublicOrigin]'s.
func publicOrigin(ctx context.Context) bool {
	ok, _ := ctx.Value(publicOriginKey{}).(bool)
	return ok
}

// EgressRefusal returns why ip may not be connected to under pol ("" when
// it may); public says that only a public address may be.
func EgressRefusal(pol *egress.Policy, ip netip.Addr, public bool) string {
	switch v := pol.Check(ip); {
	case !v.Allowed:
		return v.Why
	case public && !v.Public:
		return "private, and the policy file is fetched for a public origin"
	}
	return ""
}

// LiteralIP returns the address host names when it is an IP literal.
func LiteralIP(host string) netip.Addr {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return ip
}

// EgressDial returns dial with the address of every connection checked
// against the egress policy in force (policy returns it) before it is
// dialled: an IP
// literal as it is, a name resolved here (as pins.go resolves it) and
// dialled at those of its addresses that pass, and nowhere when none
// does. fetches says that dial is the policy transport's: a fetch for a
// public origin ([WithPublicOrigin]) connects to public addresses only.
// A refused connection fails with [enforce.ErrDestinationPrivate].
func EgressDial(self *selfaddr.Set, policy func() *egress.Policy, dial selfaddr.DialFunc, fetches bool) selfaddr.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, p, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", addr, err)
		}
		port, ok := selfaddr.ParsePort(p)
		if !ok {
			return nil, fmt.Errorf("dial %s: invalid port %q", addr, p)
		}
		ips := []netip.Addr{LiteralIP(host)}
		if !ips[0].IsValid() {
			if ips = self.Resolve(ctx, host); len(ips) == 0 {
				return nil, &net.OpError{Op: "dial", Net: network,
					Err: &net.DNSError{Err: "no address found", Name: host, IsNotFound: true}}
			}
		}
		pol, public := policy(), fetches && publicOrigin(ctx)
		var first error
		for _, ip := range ips {
			if why := EgressRefusal(pol, ip, public); why != "" {
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
