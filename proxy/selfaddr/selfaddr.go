// Package selfaddr recognises robotsgate's own listen addresses as a
// destination, in every spelling a client may use (IP literals, IPv4
// shorthands, localhost names, names that resolve to them), and provides
// the dialer that refuses them and dials only the addresses that were
// checked, so that the admin API is never reachable through the proxy.
package selfaddr

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// selfLookupTimeout bounds the DNS lookup of a destination name whose
// port is one robotsgate listens on.
const selfLookupTimeout = 2 * time.Second

// Set is the set of addresses robotsgate itself listens on (proxy
// and admin listeners), so that proxied requests to them can be refused:
// otherwise a proxy client could reach the loopback-only admin API
// through the proxy. An unspecified listener IP (0.0.0.0, ::) stands for
// every local address on its port. Ports are compared as numbers, so
// that "0080" and "80" are the same port, as for the dialer. It is safe
// for concurrent use.
type Set struct {
	mu    sync.RWMutex
	ports map[uint16][]netip.Addr // port → listener IPs

	// Lookup resolves a host name; nil means [net.DefaultResolver]. Tests
	// set it to answer names of their own.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Add records the listen address hostport ("host:port"). A host that is
// empty or unspecified means every local address; "localhost" means the
// loopback addresses. Addresses that do not parse are ignored.
func (a *Set) Add(hostport string) {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return
	}
	port, ok := ParsePort(p)
	if !ok {
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
		a.ports = make(map[uint16][]netip.Addr)
	}
	a.ports[port] = append(a.ports[port], ips...)
}

// listens reports whether robotsgate listens on port (on any address).
func (a *Set) listens(port uint16) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return len(a.ports[port]) > 0
}

// Check decides whether host:port is robotsgate itself. Most
// destinations cost one map lookup: their port is not one robotsgate
// listens on, and pin is nil (the dialer needs no restriction). For a
// listener's port, host is resolved once (resolve) and every address
// is compared; pin holds the addresses that were checked, which the
// dialer must use instead of resolving host again (a name re-pointed at
// robotsgate between the check and the dial would otherwise get
// through). A name that does not resolve gives a pin without addresses:
// the dial fails, as it would have.
func (a *Set) Check(ctx context.Context, host string, port uint16) (pin *Pin, self bool) {
	if !a.listens(port) {
		return nil, false
	}
	host = pinHost(host)
	ips := a.resolve(ctx, host)
	return &Pin{host: host, port: port, ips: ips}, a.isSelf(port, ips)
}

// isSelf reports whether one of dests, on port, is one of robotsgate's
// listen addresses. For an unspecified listener, dests are compared with
// the local interface addresses.
func (a *Set) isSelf(port uint16, dests []netip.Addr) bool {
	a.mu.RLock()
	listeners := a.ports[port]
	a.mu.RUnlock()
	if len(listeners) == 0 {
		return false
	}
	var local []netip.Addr // interface addresses, read when first needed
	for _, d := range dests {
		d = d.Unmap().WithZone("")
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
				if slices.Contains(local, d) {
					return true
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

// resolve returns the IP addresses of the destination host, as the
// dialer will use them (zones kept): host itself when it is an IP literal
// (brackets and a trailing dot ignored) or an IPv4 address in one of the
// shorthand spellings browsers and C resolvers accept ([parseIPv4Shorthand]:
// "127.1", "0x7f.1", "2130706433"), the loopback addresses for localhost
// names, or the result of a bounded DNS lookup (none when it fails: the
// forwarding fails the same way).
func (a *Set) resolve(ctx context.Context, host string) []netip.Addr {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}
	}
	if ip, ok := parseIPv4Shorthand(host); ok {
		return []netip.Addr{ip}
	}
	lower := strings.ToLower(host)
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}
	}
	ctx, cancel := context.WithTimeout(ctx, selfLookupTimeout)
	defer cancel()
	lookup := a.Lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	ips, err := lookup(ctx, host)
	if err != nil {
		return nil
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

// ParsePort parses a TCP port as the destination of a connection: decimal
// digits only (leading zeros allowed, as the dialer allows them; no sign,
// no space), 1 to 65535.
func ParsePort(s string) (uint16, bool) {
	s = strings.TrimLeft(s, "0")
	if s == "" || len(s) > 5 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if n > 65535 {
		return 0, false
	}
	return uint16(n), true
}

// DestHostPort returns the host and port a request for hostport (a URL's
// host, or a Host header) is sent to: the port filled in from the scheme
// (443 for https, 80 otherwise) when hostport has none or an empty one,
// and ok false when the port is not a valid TCP port ([ParsePort]). The
// host is lower-case, without brackets.
func DestHostPort(hostport, scheme string) (host string, port uint16, ok bool) {
	// Split by hand: net.SplitHostPort allocates an error for the usual
	// host without a port, and this runs for every request.
	host = hostport
	p := ""
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.HasSuffix(hostport, "]") &&
		(strings.HasPrefix(hostport, "[") || strings.IndexByte(hostport[:i], ':') < 0) {
		host, p = hostport[:i], hostport[i+1:]
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if p == "" {
		port = 80
		if scheme == "https" {
			port = 443
		}
		return strings.ToLower(host), port, true
	}
	port, ok = ParsePort(p)
	return strings.ToLower(host), port, ok
}

// JoinHostPort is the canonical "host:port" of a destination.
func JoinHostPort(host string, port uint16) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}
