package proxy

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/egress"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
	"github.com/robotsgate/robotsgate/proxy/upstream"
)

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
