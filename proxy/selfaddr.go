package proxy

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/robotsgate/robotsgate/enforce"
)

// selfLookupTimeout bounds the DNS lookup of a destination name whose
// port is one robotsgate listens on.
const selfLookupTimeout = 2 * time.Second

// selfAddrs is the set of addresses robotsgate itself listens on (proxy
// and admin listeners), so that proxied requests to them can be refused:
// otherwise a proxy client could reach the loopback-only admin API
// through the proxy. An unspecified listener IP (0.0.0.0, ::) stands for
// every local address on its port. It is safe for concurrent use.
type selfAddrs struct {
	mu    sync.RWMutex
	ports map[string][]netip.Addr // port → listener IPs
}

// add records the listen address hostport ("host:port"). A host that is
// empty or unspecified means every local address; "localhost" means the
// loopback addresses. Addresses that do not parse are ignored.
func (a *selfAddrs) add(hostport string) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || port == "" || port == "0" {
		return
	}
	var ips []netip.Addr
	switch {
	case host == "":
		ips = []netip.Addr{netip.IPv6Unspecified()}
	case strings.EqualFold(host, "localhost"):
		ips = []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}
	default:
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return
		}
		ips = []netip.Addr{ip.Unmap().WithZone("")}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ports == nil {
		a.ports = make(map[string][]netip.Addr)
	}
	a.ports[port] = append(a.ports[port], ips...)
}

// matches reports whether host:port is one of robotsgate's own listen
// addresses. Most destinations cost one map lookup (their port is not
// one robotsgate listens on); only for a matching port is host resolved
// (an IP literal, "localhost", or a DNS lookup bounded by
// selfLookupTimeout) and, for an unspecified listener, compared with the
// local interface addresses.
func (a *selfAddrs) matches(ctx context.Context, host, port string) bool {
	a.mu.RLock()
	listeners := a.ports[port]
	a.mu.RUnlock()
	if len(listeners) == 0 {
		return false
	}
	dests := resolveDest(ctx, host)
	var local []netip.Addr // interface addresses, read when first needed
	for _, d := range dests {
		for _, l := range listeners {
			switch {
			case d.IsUnspecified(): // connecting to 0.0.0.0 or :: reaches this host
				return true
			case l.IsUnspecified():
				if d.IsLoopback() {
					return true
				}
				if local == nil {
					local = interfaceAddrs()
				}
				for _, x := range local {
					if x == d {
						return true
					}
				}
			case l.IsLoopback():
				if d.IsLoopback() {
					return true
				}
			case l == d:
				return true
			}
		}
	}
	return false
}

// resolveDest returns the IP addresses of the destination host: host
// itself when it is an IP literal, the loopback addresses for localhost
// names, or the result of a bounded DNS lookup (none when it fails: the
// forwarding would fail the same way).
func resolveDest(ctx context.Context, host string) []netip.Addr {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip.Unmap().WithZone("")}
	}
	lower := strings.ToLower(host)
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}
	}
	ctx, cancel := context.WithTimeout(ctx, selfLookupTimeout)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for i, ip := range ips {
		ips[i] = ip.Unmap().WithZone("")
	}
	return ips
}

// interfaceAddrs returns the IP addresses of this host's interfaces
// (non-nil, possibly empty).
func interfaceAddrs() []netip.Addr {
	out := []netip.Addr{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return out
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap().WithZone(""))
		}
	}
	return out
}

// destHostPort returns the host and port u is sent to, the port filled
// in from the scheme (443 for https, 80 otherwise) when u has none. The
// host is lower-case, without brackets.
func destHostPort(hostport, scheme string) (host, port string) {
	// Split by hand: net.SplitHostPort allocates an error for the usual
	// host without a port, and this runs for every request.
	host = hostport
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.HasSuffix(hostport, "]") &&
		(strings.HasPrefix(hostport, "[") || strings.IndexByte(hostport[:i], ':') < 0) {
		host, port = hostport[:i], hostport[i+1:]
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	return strings.ToLower(host), port
}

// installSelf records the configured listen addresses (Serve adds the
// real ones of its listeners) and registers checkDestination.
func (s *Server) installSelf() {
	s.self.add(s.cfg.Listen)
	if s.cfg.AdminListen != "" {
		s.self.add(s.cfg.AdminListen)
	}
	s.proxy.OnRequest().DoFunc(s.checkDestination)
}

// checkDestination is the request hook that refuses, whatever the mode:
//   - with 421 Misdirected Request, a request inside an MITM session whose
//     host:port is not the one its CONNECT named (goproxy builds the URL
//     from the inner Host header, which would bypass https.allowed_ports
//     and apply robots.txt and pacing to another origin than the
//     certificate's);
//   - with 403, a request whose destination is robotsgate itself (its
//     proxy or admin listener): the admin API must not be reachable
//     through the proxy.
//
// Both are audited as blocked.
func (s *Server) checkDestination(r *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	st := stateOf(ctx)
	host, port := destHostPort(r.URL.Host, r.URL.Scheme)
	if parent, ok := st.Parent.(*requestState); ok && parent.ConnectTarget != "" {
		target := net.JoinHostPort(host, port)
		hdr := target
		if r.Host != "" {
			hh, hp := destHostPort(r.Host, r.URL.Scheme)
			hdr = net.JoinHostPort(hh, hp)
		}
		if target != parent.ConnectTarget || hdr != parent.ConnectTarget {
			d := enforce.Decision{Reason: enforce.ReasonMisdirected, URL: enforce.RedactedURL(r.URL), Agent: parent.Agent,
				Detail: "the request names " + strconv.Quote(hdr) + " inside a CONNECT to " + strconv.Quote(parent.ConnectTarget) +
					": send requests for another host through their own CONNECT"}
			return r, s.refuseRequest(r, st, http.StatusMisdirectedRequest, d)
		}
	}
	if s.self.matches(r.Context(), host, port) {
		d := enforce.Decision{Reason: enforce.ReasonSelfRequest, URL: enforce.RedactedURL(r.URL),
			Detail: "the destination " + net.JoinHostPort(host, port) + " is robotsgate itself; its admin API is not reachable through the proxy"}
		if o, err := enforce.Origin(r.URL); err == nil {
			d.Origin = o
		}
		return r, s.refuseRequest(r, st, http.StatusForbidden, d)
	}
	return r, nil
}

// refuseRequest audits d as blocked with status and returns robotsgate's
// answer (Refuse); observeMetrics counts the decision.
func (s *Server) refuseRequest(r *http.Request, st *requestState, status int, d enforce.Decision) *http.Response {
	st.Decision, st.Decided, st.Answered = d, true, true
	e := EventFromDecision(r.RemoteAddr, r.Method, d)
	e.Decision, e.Status = DecisionBlocked, status
	s.record(e)
	return Refuse(r, status, d)
}
