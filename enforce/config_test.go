package enforce

import (
	"context"
	"net/http"
	"net/netip"
	"testing"
	"time"
)

// The settings tests run with: robotsgate's defaults (internal/config),
// which enforce itself does not hold.
const (
	testRedirects  = 5
	testMaxEntries = 100000
	testCacheBytes = 512 << 20
)

// filled returns cfg with its zero settings set to robotsgate's defaults,
// as cmd/robotsgate passes them; a field a test sets (also to a bad
// value) is kept.
func filled(cfg Config) Config {
	or := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	or(&cfg.TTL, 24*time.Hour)
	or(&cfg.MinTTL, time.Minute)
	or(&cfg.UnreachableWindow, 30*24*time.Hour)
	or(&cfg.RetryMin, time.Minute)
	or(&cfg.RetryMax, time.Hour)
	or(&cfg.FetchTimeout, 10*time.Second)
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = 500 << 10
	}
	if cfg.Store == nil {
		cfg.Store = newTestStore()
	}
	return cfg
}

// newTestStore returns a MemoryStore with robotsgate's default bounds.
func newTestStore() *MemoryStore { return NewMemoryStore(testMaxEntries, testCacheBytes) }

// robotsKey is the key of origin's robots.txt fetched wherever its name
// resolves.
func robotsKey(origin string) Key { return RobotsKey(origin, netip.Addr{}) }

// TestConfigRequired: enforce holds no defaults; a setting left zero is an
// error, not a silent second default.
func TestConfigRequired(t *testing.T) {
	for name, unset := range map[string]func(*Config){
		"Store":             func(c *Config) { c.Store = nil },
		"TTL":               func(c *Config) { c.TTL = 0 },
		"UnreachableWindow": func(c *Config) { c.UnreachableWindow = 0 },
		"RetryMin":          func(c *Config) { c.RetryMin = 0 },
		"RetryMax":          func(c *Config) { c.RetryMax = 0 },
		"FetchTimeout":      func(c *Config) { c.FetchTimeout = 0 },
		"MaxBytes":          func(c *Config) { c.MaxBytes = 0 },
	} {
		cfg := filled(Config{Fetcher: &HTTPFetcher{}})
		unset(&cfg)
		if _, err := New(cfg); err == nil {
			t.Errorf("New accepted a Config without %s", name)
		}
	}
	cfg := filled(Config{Fetcher: &HTTPFetcher{}})
	cfg.MinTTL = 0 // no floor under max-age: a meaning, not a default
	if _, err := New(cfg); err != nil {
		t.Errorf("MinTTL 0: %v", err)
	}
}

// TestHTTPFetcherZeroRedirectsFollowsNone: MaxRedirects 0 means what
// robots.max_redirects 0 means, follow none.
func TestHTTPFetcherZeroRedirectsFollowsNone(t *testing.T) {
	o := newOrigin(t, redirects(1, http.StatusMovedPermanently))
	r := (&HTTPFetcher{}).Fetch(context.Background(), o.srv.URL)
	if r.Status != StatusUnavailable || o.other.Load() != 0 {
		t.Errorf("status %s after %d redirect hops, want %s after none", r.Status, o.other.Load(), StatusUnavailable)
	}
	r = (&HTTPFetcher{MaxRedirects: 1}).Fetch(context.Background(), o.srv.URL)
	if r.Status != StatusOK {
		t.Errorf("MaxRedirects 1: status %s, want %s", r.Status, StatusOK)
	}
}
