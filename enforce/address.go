package enforce

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/robotsgate/robotsgate/robots/tdmrep"
)

// Policy per address. A name may resolve to several addresses, served by
// different parties (a crawler's own server and a victim's), and a
// robots.txt only speaks for the server that sent it. So when the caller
// says which address a request will be sent to ([WithAddress]), the
// policy files that decide it are those fetched from that address: the
// Store key, the single fetch and a fleet's coordination are per
// (origin, address) ([StoreKey]), and the fetch connects to that address
// for the origin's host ([FetchPinOf]), whatever the name resolves to
// then. Without an address (a query of the admin API, `check -fetch`),
// the key is the origin alone and the fetch resolves the name itself.

// keySep separates the origin from the address in a Store key: it never
// appears in an origin (scheme, canonical host, port).
const keySep = "|"

type addressKey struct{}

type fetchPinKey struct{}

// WithAddress returns ctx saying that the request it belongs to will be
// sent to addr and nowhere else: [Enforcer.Decide], [Enforcer.TDMRep] and
// [Enforcer.Cached] then use the policy files fetched from addr.
func WithAddress(ctx context.Context, addr netip.Addr) context.Context {
	return context.WithValue(ctx, addressKey{}, addr.WithZone(""))
}

// addressOf returns the address of [WithAddress], or the zero Addr.
func addressOf(ctx context.Context) netip.Addr {
	a, _ := ctx.Value(addressKey{}).(netip.Addr)
	return a
}

// StoreKey returns the Store key of origin's robots.txt as served at
// addr: origin + "|" + addr, or origin alone when addr is not valid or is
// the origin's own host (an IP literal names its address already).
// [TDMKey] of it is the key of the tdmrep.json served there.
func StoreKey(origin string, addr netip.Addr) string {
	if !addr.IsValid() {
		return origin
	}
	a := addr.Unmap().WithZone("")
	if ip, err := netip.ParseAddr(literalHost(origin)); err == nil && ip.Unmap().WithZone("") == a {
		return origin
	}
	var b strings.Builder
	b.Grow(len(origin) + len(keySep) + 39)
	b.WriteString(origin)
	b.WriteString(keySep)
	b.Write(a.AppendTo(make([]byte, 0, 39)))
	return b.String()
}

// literalHost returns the host of a canonical origin when it may be an
// IP literal (brackets dropped), "" otherwise; it allocates nothing.
func literalHost(origin string) string {
	i := strings.Index(origin, "://")
	if i < 0 {
		return ""
	}
	h := origin[i+3:]
	if strings.HasPrefix(h, "[") {
		if j := strings.IndexByte(h, ']'); j > 0 {
			return h[1:j]
		}
		return ""
	}
	if j := strings.LastIndexByte(h, ':'); j >= 0 {
		h = h[:j]
	}
	if h == "" || h[len(h)-1] < '0' || h[len(h)-1] > '9' {
		return "" // a name: its last label is not a number
	}
	return h
}

// KeyOrigin returns the origin a Store key is for (a [TDMKey] stays one).
func KeyOrigin(key string) string {
	origin, _ := splitKey(key)
	return origin
}

// splitKey returns the origin (with the tdmrep.json path of a TDMKey) and
// the address of a Store key; the address is not valid for a key of the
// origin alone.
func splitKey(key string) (string, netip.Addr) {
	i := strings.LastIndex(key, keySep)
	if i < 0 {
		return key, netip.Addr{}
	}
	rest, suffix := key[i+len(keySep):], ""
	if isTDMKey(rest) {
		rest, suffix = strings.TrimSuffix(rest, tdmrep.WellKnownPath), tdmrep.WellKnownPath
	}
	a, err := netip.ParseAddr(rest)
	if err != nil {
		return key, netip.Addr{}
	}
	return key[:i] + suffix, a
}

// originHost returns the host of origin, without brackets.
func originHost(origin string) (string, bool) {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return "", false
	}
	return u.Hostname(), true
}

// FetchPin is what a policy fetch for an address-keyed entry must
// connect to: Addr, for every connection to Host (any port, so that a
// redirect from http to https of the same host stays on it).
type FetchPin struct {
	Host string // lower-case, without brackets
	Addr netip.Addr
}

// FetchPinOf returns the pin of the policy fetch ctx belongs to. A
// Fetcher's dialer must connect to pin.Addr for pin.Host, and never to
// another address of the name: it is the address whose answer decides.
func FetchPinOf(ctx context.Context) (FetchPin, bool) {
	p, ok := ctx.Value(fetchPinKey{}).(FetchPin)
	return p, ok
}

// withFetchPin returns ctx pinning the fetches of key's policy file to
// its address, and the origin to fetch from.
func withFetchPin(ctx context.Context, key string) (context.Context, string) {
	origin, addr := splitKey(key)
	if !addr.IsValid() {
		return ctx, origin
	}
	host, ok := originHost(strings.TrimSuffix(origin, tdmrep.WellKnownPath))
	if !ok {
		return ctx, origin
	}
	return context.WithValue(ctx, fetchPinKey{}, FetchPin{Host: strings.ToLower(host), Addr: addr}), origin
}

// SameHost reports whether the dial address hostport is for pin's host.
func (p FetchPin) SameHost(hostport string) bool {
	h, _, err := net.SplitHostPort(hostport)
	return err == nil && strings.EqualFold(strings.TrimSuffix(h, "."), p.Host)
}
