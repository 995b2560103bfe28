package enforce

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// Policy per address. A name may resolve to several addresses, served by
// different parties (a crawler's own server and a victim's), and a
// robots.txt only speaks for the server that sent it. So when the caller
// says which address a request will be sent to ([WithAddress]), the
// policy files that decide it are those fetched from that address: the
// Store key, the single fetch and a fleet's coordination are per
// (origin, address) ([RobotsKey]), and the fetch connects to that address
// for the origin's host ([FetchPinOf]), whatever the name resolves to
// then. Without an address (a query of the admin API, `check -fetch`),
// the key is the origin alone and the fetch resolves the name itself.

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

// originHost returns the host of the URL raw, without brackets.
func originHost(raw string) (string, bool) {
	u, err := url.Parse(raw)
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

// withFetchPin returns ctx pinning the fetches of the document key names
// to the key's address, for the host of the document's URL; ctx itself
// when the key names no address.
func withFetchPin(ctx context.Context, key Key) context.Context {
	if !key.Addr().IsValid() {
		return ctx
	}
	host, ok := originHost(key.URL())
	if !ok {
		return ctx
	}
	return context.WithValue(ctx, fetchPinKey{}, FetchPin{Host: strings.ToLower(host), Addr: key.Addr()})
}

// SameHost reports whether the dial address hostport is for pin's host.
func (p FetchPin) SameHost(hostport string) bool {
	h, _, err := net.SplitHostPort(hostport)
	return err == nil && strings.EqualFold(strings.TrimSuffix(h, "."), p.Host)
}
