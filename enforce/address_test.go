package enforce

import (
	"context"
	"net/netip"
	"net/url"
	"sync"
	"testing"
)

// pinFetcher serves a robots.txt and a tdmrep.json that depend on the
// address the fetch is pinned to, and records what it was asked.
type pinFetcher struct {
	mu    sync.Mutex
	calls []string // origin path pin
}

func (f *pinFetcher) Fetch(ctx context.Context, origin string) FetchResult {
	return f.FetchFile(ctx, origin, "/robots.txt", "")
}

func (f *pinFetcher) FetchFile(ctx context.Context, origin, path, _ string) FetchResult {
	pin, ok := FetchPinOf(ctx)
	f.mu.Lock()
	call := origin + " " + path + " -"
	if ok {
		call = origin + " " + path + " " + pin.Host + "@" + pin.Addr.String()
	}
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	body := "User-agent: *\nAllow: /\n"
	if path != "/robots.txt" {
		body = `[{"location": "/private", "tdm-reservation": 1}]`
	}
	if ok && pin.Addr == netip.MustParseAddr("192.0.2.2") {
		body = "User-agent: *\nDisallow: /private\n"
		if path != "/robots.txt" {
			body = `[{"location": "/", "tdm-reservation": 1}]`
		}
	}
	return FetchResult{Status: StatusOK, HTTPStatus: 200, Body: []byte(body)}
}

// TestDecidePerAddress: with an address in the context, robots.txt and
// tdmrep.json are fetched from that address (the fetch is pinned to it
// for the origin's host, and asked for the origin itself) and cached
// for (origin, address): one address's copy never decides for another.
func TestDecidePerAddress(t *testing.T) {
	f := &pinFetcher{}
	e := newTestEnforcer(t, Config{Fetcher: f}, nil)
	u, _ := url.Parse("http://Multi.test/private/x")
	at := func(a string) context.Context {
		return WithAddress(context.Background(), netip.MustParseAddr(a))
	}
	for range 2 {
		if d := e.Decide(at("192.0.2.1"), u, "bot", DecideOptions{}); !d.Allowed || d.Origin != "http://multi.test" {
			t.Fatalf("at 192.0.2.1: %+v", d)
		}
		if d := e.Decide(at("192.0.2.2"), u, "bot", DecideOptions{}); d.Allowed || d.Reason != ReasonDisallowed {
			t.Fatalf("at 192.0.2.2: %+v", d)
		}
	}
	if d := e.Decide(context.Background(), u, "bot", DecideOptions{}); !d.Allowed {
		t.Fatalf("without an address: %+v", d)
	}
	if v := e.TDMRep(at("192.0.2.1"), u, "GET"); !v.Reserved() || v.FileURL != "http://multi.test/.well-known/tdmrep.json" {
		t.Fatalf("tdmrep at 192.0.2.1: %+v", v)
	}
	u2, _ := url.Parse("http://multi.test/public")
	if v := e.TDMRep(at("192.0.2.1"), u2, "GET"); v.Reserved() {
		t.Fatalf("tdmrep /public at 192.0.2.1: %+v", v)
	}
	if v := e.TDMRep(at("192.0.2.2"), u2, "GET"); !v.Reserved() {
		t.Fatalf("tdmrep /public at 192.0.2.2: %+v", v)
	}
	want := []string{
		"http://multi.test /robots.txt multi.test@192.0.2.1",
		"http://multi.test /robots.txt multi.test@192.0.2.2",
		"http://multi.test /robots.txt -",
		"http://multi.test /.well-known/tdmrep.json multi.test@192.0.2.1",
		"http://multi.test /.well-known/tdmrep.json multi.test@192.0.2.2",
	}
	if len(f.calls) != len(want) {
		t.Fatalf("fetches %q, want %q", f.calls, want)
	}
	for i := range want {
		if f.calls[i] != want[i] {
			t.Errorf("fetch %d: %q, want %q", i, f.calls[i], want[i])
		}
	}
	if en, ok := e.Cached(at("192.0.2.2"), "http://multi.test"); !ok || en.Key.Origin() != "http://multi.test" {
		t.Errorf("Cached at 192.0.2.2: %v %v", en, ok)
	}
	e.Purge(at("192.0.2.2"), "http://multi.test")
	if _, ok := e.Cached(at("192.0.2.2"), "http://multi.test"); ok {
		t.Error("purged copy still cached")
	}
	if _, ok := e.Cached(at("192.0.2.1"), "http://multi.test"); !ok {
		t.Error("the other address's copy was purged too")
	}
}

// TestRobotsKey: the key of an address is the origin's own for an IP
// literal origin at that address; the key keeps its origin and address,
// and its fetch is pinned to that address, tdmrep.json keys included.
func TestRobotsKey(t *testing.T) {
	a := netip.MustParseAddr("2001:db8::1")
	for _, c := range []struct {
		origin string
		addr   netip.Addr
		want   string
	}{
		{"http://example.com", netip.Addr{}, "http://example.com"},
		{"http://example.com:8080", netip.MustParseAddr("192.0.2.1"), "http://example.com:8080|192.0.2.1"},
		{"https://example.com", a, "https://example.com|2001:db8::1"},
		{"http://192.0.2.1:8080", netip.MustParseAddr("192.0.2.1"), "http://192.0.2.1:8080"},
		{"http://192.0.2.1:8080", netip.MustParseAddr("::ffff:192.0.2.1"), "http://192.0.2.1:8080"},
		{"http://[2001:db8::1]", a, "http://[2001:db8::1]"},
		{"http://[2001:db8::1]", netip.MustParseAddr("192.0.2.1"), "http://[2001:db8::1]|192.0.2.1"},
	} {
		k := RobotsKey(c.origin, c.addr)
		if k.String() != c.want {
			t.Errorf("RobotsKey(%s, %v) = %q, want %q", c.origin, c.addr, k, c.want)
		}
		for _, key := range []Key{k, TDMKey(c.origin, c.addr)} {
			pin, pinned := FetchPinOf(withFetchPin(context.Background(), key))
			if key.Origin() != c.origin || (c.want != c.origin) != key.Addr().IsValid() ||
				pinned != key.Addr().IsValid() || (pinned && pin.Addr != key.Addr()) {
				t.Errorf("%s: origin %q, address %v, pin %+v %v", key, key.Origin(), key.Addr(), pin, pinned)
			}
		}
	}
}
