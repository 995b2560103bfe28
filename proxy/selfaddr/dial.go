package selfaddr

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"golang.org/x/net/idna"
)

// ErrSelfDial is the error (wrapped) of a connection refused because it would reach
// robotsgate itself.
var ErrSelfDial = errors.New("the destination is robotsgate itself (its proxy or admin address)")

// Pin is what the self-address check of one request resolved: the
// destination host and port, and the addresses that were checked. The
// dialer connects to those addresses only, so that the name is resolved
// exactly once per request.
type Pin struct {
	host string // as the transport dials it: ASCII, lower-case, no brackets
	port uint16
	ips  []netip.Addr // with their zones; empty when the name did not resolve
	// pool is the host the outbound transport is given instead of host
	// for a name pinned to one address (PoolHost); "" otherwise.
	pool string
}

type dialPinKey struct{}

// WithPin returns ctx carrying pin for the dialer.
func WithPin(ctx context.Context, pin *Pin) context.Context {
	return context.WithValue(ctx, dialPinKey{}, pin)
}

// PinFrom returns the pin ctx carries, or nil.
func PinFrom(ctx context.Context) *Pin {
	p, _ := ctx.Value(dialPinKey{}).(*Pin)
	return p
}

// Addr returns the one address the pin allows, or the zero Addr when it
// allows none or several.
func (p *Pin) Addr() netip.Addr {
	if p == nil || len(p.ips) != 1 {
		return netip.Addr{}
	}
	return p.ips[0]
}

// Host returns the host name the pin is for, as the transport dials it.
func (p *Pin) Host() string { return p.host }

// Port returns the port the pin is for.
func (p *Pin) Port() uint16 { return p.port }

// PoolHost returns the host under which an HTTP transport must be given
// a request pinned to one address of a name, so that it keeps the
// connections to each address apart (its idle pool is keyed by host and
// port): the name and the address, spelled as a host that no DNS name
// can be ("ip-<hex>.<name>.pin.invalid"; the dialer recognises it only
// through the pin in the context). "" for an IP literal or a pin to no
// or several addresses: the host says where the request goes.
func (p *Pin) PoolHost() string {
	if p == nil {
		return ""
	}
	return p.pool
}

// poolHost returns [Pin.PoolHost] of a pin of host to the one address ip.
func poolHost(host string, ip netip.Addr) string {
	if _, err := netip.ParseAddr(host); err == nil || !ip.IsValid() {
		return ""
	}
	return "ip-" + hex.EncodeToString(ip.Unmap().AsSlice()) + "." + host + ".pin.invalid"
}

// pinHost is host as the transport hands it to the dialer: brackets
// dropped, a non-ASCII name converted to its IDNA ASCII form, lower-case.
func pinHost(host string) string {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			if a, err := idna.Lookup.ToASCII(host); err == nil {
				host = a
			}
			break
		}
	}
	return strings.ToLower(host)
}

// DialFunc is the signature of [http.Transport.DialContext].
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Dialer wraps next so that no connection reaches robotsgate's own
// listeners, whoever asks for it (proxied requests, CONNECT tunnels,
// robots.txt fetches, an upstream proxy address):
//   - a dial under a request whose check pinned its addresses (the proxy's
//     destination step and its CONNECT handler) connects to exactly those
//     addresses;
//   - any other dial to a port robotsgate listens on resolves the host once,
//     refuses if one of its addresses is robotsgate, and connects to the
//     addresses it checked;
//   - a port that is not a valid TCP port (ParsePort: "+80", "80 ") is
//     refused rather than left to the dialer's more lenient parsing.
//
// Other dials (the usual case: another port) go to next unchanged.
func (a *Set) Dialer(next DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, p, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", addr, err)
		}
		port, ok := ParsePort(p)
		if !ok {
			return nil, fmt.Errorf("dial %s: invalid port %q", addr, p)
		}
		var ips []netip.Addr
		if pin := PinFrom(ctx); pin != nil && pin.port == port && (pin.host == pinHost(host) || pin.pool != "" && pin.pool == host) {
			ips = pin.ips // checked by the caller
		} else if a.listens(port) {
			ips = a.resolve(ctx, host)
			if a.isSelf(port, ips) {
				return nil, fmt.Errorf("dial %s: %w", addr, ErrSelfDial)
			}
		} else {
			return next(ctx, network, addr)
		}
		if len(ips) == 0 { // as the resolver says it: a *net.DNSError
			return nil, &net.OpError{Op: "dial", Net: network,
				Err: &net.DNSError{Err: "no address found", Name: host, IsNotFound: true}}
		}
		var first error
		for _, ip := range ips {
			c, err := next(ctx, network, netip.AddrPortFrom(ip, port).String())
			if err == nil {
				return c, nil
			}
			if first == nil {
				first = err
			}
			if ctx.Err() != nil {
				break
			}
		}
		return nil, first
	}
}

// parseIPv4Shorthand parses the IPv4 spellings other than dotted decimal
// that browsers (the WHATWG URL Standard's IPv4 parser) and C resolvers
// (inet_aton) accept: one to four parts separated by dots, each decimal,
// octal (a leading 0) or hexadecimal (0x), the last part filling the
// remaining bytes: "127.1", "0x7f.1", "0177.0.0.1", "2130706433". ok is
// false for anything else (a name to resolve).
func parseIPv4Shorthand(s string) (ip netip.Addr, ok bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, part := range parts {
		n, ok := parseIPv4Number(part)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	last := len(nums) - 1
	var v uint64
	for i, n := range nums[:last] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - i))
	}
	if nums[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	v |= nums[last]
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Number parses one part of [parseIPv4Shorthand]; values above
// 2^32 are not needed and make it fail.
func parseIPv4Number(s string) (uint64, bool) {
	base := uint64(10)
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		base, s = 16, s[2:]
		if s == "" {
			return 0, true // "0x" is 0
		}
	case len(s) >= 2 && s[0] == '0':
		base, s = 8, s[1:]
	}
	if s == "" || len(s) > 40 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		n = n*base + d
		if n > 1<<32 {
			return 0, false
		}
	}
	return n, true
}

// PinTo returns the pin of a request for host:port that must connect to
// ip and nowhere else (a redirected connection's original destination).
func PinTo(host string, port uint16, ip netip.Addr) *Pin {
	h := pinHost(host)
	if !ip.IsValid() {
		return &Pin{host: h, port: port}
	}
	return &Pin{host: h, port: port, ips: []netip.Addr{ip}, pool: poolHost(h, ip)}
}

// Resolve returns the addresses of host as the dialer resolves it: IP
// literals and their shorthands, localhost names, a bounded DNS lookup
// (none when it fails).
func (a *Set) Resolve(ctx context.Context, host string) []netip.Addr {
	return a.resolve(ctx, pinHost(host))
}

// Listens reports whether robotsgate listens on port, on any address.
func (a *Set) Listens(port uint16) bool { return a.listens(port) }

// IsSelf reports whether one of ips, on port, is one of robotsgate's
// listen addresses.
func (a *Set) IsSelf(port uint16, ips ...netip.Addr) bool { return a.isSelf(port, ips) }

// Resolves reports whether host, resolved as the dialer would resolve it
// (IP literals and their shorthands, localhost names, a bounded DNS
// lookup), has ip among its addresses.
func (a *Set) Resolves(ctx context.Context, host string, ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	for _, r := range a.resolve(ctx, pinHost(host)) {
		if r.Unmap().WithZone("") == ip {
			return true
		}
	}
	return false
}
