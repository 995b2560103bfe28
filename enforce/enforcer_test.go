package enforce

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// env is an Enforcer on a fake clock in front of one test origin.
type env struct {
	t     *testing.T
	o     *testOrigin
	clock *enforcetest.Clock
	e     *Enforcer
}

func newEnv(t *testing.T, h http.HandlerFunc, cfg Config) *env {
	t.Helper()
	v := &env{t: t, o: newOrigin(t, h), clock: enforcetest.NewClock(t0)}
	if cfg.Fetcher == nil {
		cfg.Fetcher = &HTTPFetcher{MaxRedirects: testRedirects, Timeout: 5 * time.Second}
	}
	v.e = newTestEnforcer(t, cfg, v.clock)
	return v
}

// decide decides path for agent "" and checks the robots.txt fetch count.
func (v *env) decide(path string, wantFetches int64) Decision {
	v.t.Helper()
	d := v.e.Decide(context.Background(), v.o.url(path), "")
	v.settle()
	if got := v.o.robots.Load(); got != wantFetches {
		v.t.Fatalf("after Decide(%s) at +%v: %d robots.txt fetches, want %d", path, v.clock.Now().Sub(t0), got, wantFetches)
	}
	return d
}

// settle waits until no background re-fetch (stale while revalidate)
// is under way.
func (v *env) settle() {
	v.t.Helper()
	waitFor(v.t, func() bool {
		v.e.mu.Lock()
		defer v.e.mu.Unlock()
		return len(v.e.revalidating) == 0
	})
}

func TestTTLExpiryAndRefetch(t *testing.T) {
	v := newEnv(t, serve(200, testRobots), Config{})
	if d := v.decide("/private", 1); d.Allowed || d.RobotsAge != 0 || !d.RobotsFetchedAt.Equal(t0) {
		t.Fatalf("first: %+v", d)
	}
	v.clock.Advance(23 * time.Hour)
	if d := v.decide("/private", 1); d.Allowed || d.RobotsAge != 23*time.Hour {
		t.Fatalf("at 23h: %+v", d)
	}
	v.o.set(serve(200, "User-agent: *\nDisallow: /other\n"))
	v.clock.Advance(time.Hour) // exactly the TTL: expired
	// The expired copy decides while it is re-fetched in the background.
	if d := v.decide("/private", 2); d.Allowed || d.RobotsAge != 24*time.Hour {
		t.Fatalf("while re-fetching: %+v", d)
	}
	if d := v.decide("/private", 2); !d.Allowed || d.Reason != ReasonAllowed || d.RobotsAge != 0 {
		t.Fatalf("after re-fetch: %+v", d)
	}
	if d := v.decide("/other", 2); d.Allowed || d.Rule != "Disallow: /other" {
		t.Fatalf("new rules: %+v", d)
	}
}

func TestMaxAgeClamping(t *testing.T) {
	tests := []struct {
		header string
		want   time.Duration // the freshness the entry gets
	}{
		{"max-age=3600", time.Hour},
		{"max-age=10", time.Minute},        // clamped up to MinTTL
		{"max-age=0", time.Minute},         // likewise
		{"max-age=999999", 24 * time.Hour}, // clamped down to TTL
		{"no-store", 24 * time.Hour},       // no max-age: TTL
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			v := newEnv(t, serve(200, testRobots, "Cache-Control", tt.header), Config{})
			v.decide("/", 1)
			en, ok := v.e.Cached(context.Background(), v.o.srv.URL)
			if !ok || en.Expires.Sub(en.FetchedAt) != tt.want {
				t.Fatalf("entry %+v, want fresh for %v", en, tt.want)
			}
			v.clock.Advance(tt.want - time.Second)
			v.decide("/", 1)
			v.clock.Advance(time.Second)
			v.decide("/", 2)
		})
	}
	// 4xx results honour max-age as well.
	v := newEnv(t, serve(404, "", "Cache-Control", "max-age=120"), Config{})
	v.decide("/", 1)
	v.clock.Advance(119 * time.Second)
	v.decide("/", 1)
	v.clock.Advance(time.Second)
	v.decide("/", 2)
}

func TestUnavailableCachedWithTTL(t *testing.T) {
	v := newEnv(t, serve(404, ""), Config{TTL: 2 * time.Hour})
	for i := 0; i < 5; i++ {
		if d := v.decide("/private", 1); !d.Allowed || d.Reason != ReasonNoRobots {
			t.Fatalf("%+v", d)
		}
	}
	v.clock.Advance(2 * time.Hour)
	v.decide("/private", 2)
}

func TestStaleCopyWhenRefetchFails(t *testing.T) {
	v := newEnv(t, serve(200, testRobots), Config{})
	v.decide("/private", 1)
	v.o.set(serve(503, ""))
	v.clock.Advance(25 * time.Hour)
	// An hour past its expiry the copy no longer decides while it is
	// re-fetched: the request waits for the fetch, which fails, and the
	// copy decides as the last good one.
	if d := v.decide("/private", 2); d.Allowed || d.RobotsStatus != StatusUnreachable || d.RobotsStaleReason != StaleUnreachable || d.RobotsAge != 25*time.Hour {
		t.Fatalf("after the re-fetch: %+v", d)
	}
	d := v.decide("/private", 2)
	if d.Allowed || d.Reason != ReasonDisallowed || !d.RobotsStale || d.RobotsStaleReason != StaleUnreachable || d.Rule != "Disallow: /private" {
		t.Fatalf("stale /private: %+v", d)
	}
	if d.RobotsStatus != StatusUnreachable || d.RobotsHTTPStatus != 503 || !d.RobotsFetchedAt.Equal(t0) || d.RobotsAge != 25*time.Hour {
		t.Errorf("robots fields: %+v", d)
	}
	if d := v.decide("/public", 2); !d.Allowed || d.Reason != ReasonAllowed || !d.RobotsStale {
		t.Fatalf("stale /public: %+v", d)
	}
	// Still failing after the backoff: the copy stays in use.
	v.clock.Advance(time.Minute)
	if d := v.decide("/public", 3); !d.Allowed || !d.RobotsStale {
		t.Fatalf("second failure: %+v", d)
	}
	// The origin recovers.
	v.o.set(serve(200, "User-agent: *\nDisallow: /\n"))
	v.clock.Advance(2 * time.Minute)
	if d := v.decide("/public", 4); !d.Allowed || !d.RobotsStale { // the stale copy, while re-fetching
		t.Fatalf("re-fetching: %+v", d)
	}
	if d := v.decide("/public", 4); d.Allowed || d.RobotsStale || d.RobotsStatus != StatusOK {
		t.Fatalf("recovered: %+v", d)
	}
}

func TestBackoff(t *testing.T) {
	v := newEnv(t, serve(500, ""), Config{RetryMin: time.Minute, RetryMax: 4 * time.Minute})
	v.decide("/", 1)
	for i := 0; i < 20; i++ {
		if d := v.decide("/", 1); d.Allowed || d.Reason != ReasonUnreachable {
			t.Fatalf("%+v", d)
		}
	}
	// Waits: 1m, 2m, 4m, 4m (capped).
	for i, wait := range []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 4 * time.Minute} {
		n := int64(i + 1)
		v.clock.Advance(wait - time.Second)
		v.decide("/", n)
		v.clock.Advance(time.Second)
		v.decide("/", n+1)
		en, _ := v.e.Cached(context.Background(), v.o.srv.URL)
		if en.Failures != i+2 || !en.UnreachableSince.Equal(t0) {
			t.Fatalf("entry after failure %d: failures %d since %v", i+2, en.Failures, en.UnreachableSince)
		}
	}
}

func TestUnreachableWindow(t *testing.T) {
	const window = 5 * time.Hour
	cfg := Config{UnreachableWindow: window, RetryMin: time.Hour, RetryMax: time.Hour}

	t.Run("no copy", func(t *testing.T) {
		v := newEnv(t, serve(503, ""), cfg)
		for i := 0; i <= 5; i++ {
			if d := v.decide("/private", int64(i+1)); d.Allowed || d.Reason != ReasonUnreachable {
				t.Fatalf("at +%dh: %+v", i, d)
			}
			v.clock.Advance(time.Hour)
		}
		// 6h unreachable, past the window: treated as unavailable.
		d := v.decide("/private", 7)
		if !d.Allowed || d.Reason != ReasonNoRobots || !strings.Contains(d.Detail, "longer than") {
			t.Fatalf("past the window: %+v", d)
		}
		// Also between fetches, once the window has passed.
		v.o.set(serve(200, testRobots))
		v.clock.Advance(time.Hour)
		if d := v.decide("/private", 8); d.Allowed || d.Reason != ReasonDisallowed {
			t.Fatalf("recovered: %+v", d)
		}
	})

	t.Run("stale copy", func(t *testing.T) {
		v := newEnv(t, serve(200, testRobots), cfg)
		v.decide("/", 1)
		v.o.set(serve(503, ""))
		v.clock.Advance(24 * time.Hour)
		v.decide("/private", 2) // re-fetched in the background
		for i := 0; i <= 5; i++ {
			if d := v.decide("/private", int64(i+2)); d.Allowed || !d.RobotsStale {
				t.Fatalf("at +%dh: %+v", i, d)
			}
			if d := v.decide("/public", int64(i+2)); !d.Allowed || !d.RobotsStale {
				t.Fatalf("at +%dh: %+v", i, d)
			}
			v.clock.Advance(time.Hour)
		}
		if d := v.decide("/private", 8); !d.Allowed || d.Reason != ReasonNoRobots || d.RobotsStale {
			t.Fatalf("past the window: %+v", d)
		}
		en, _ := v.e.Cached(context.Background(), v.o.srv.URL)
		if en.Good != nil || en.Parsed != nil {
			t.Errorf("old copy kept past the window: %+v", en)
		}
	})

	t.Run("decided between fetches", func(t *testing.T) {
		// RetryMax beyond the window: the verdict changes at the window's
		// end although no fetch happens then.
		v := newEnv(t, serve(503, ""), Config{UnreachableWindow: window, RetryMin: 10 * time.Hour, RetryMax: 10 * time.Hour})
		v.decide("/", 1)
		v.clock.Advance(window)
		if d := v.decide("/", 1); d.Allowed {
			t.Fatalf("at the window: %+v", d)
		}
		v.clock.Advance(time.Second)
		if d := v.decide("/", 1); !d.Allowed || d.Reason != ReasonNoRobots {
			t.Fatalf("past the window: %+v", d)
		}
	})
}

func TestConcurrentFirstRequestsFetchOnce(t *testing.T) {
	release := make(chan struct{})
	var misses atomic.Int64
	v := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		serve(200, testRobots)(w, r)
	}, Config{Hooks: Hooks{CacheLookup: func(_ string, hit bool) {
		if !hit {
			misses.Add(1)
		}
	}}})
	const n = 64
	var wg sync.WaitGroup
	decisions := make([]Decision, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			path := "/public"
			if i%2 == 0 {
				path = "/private/x"
			}
			decisions[i] = v.e.Decide(context.Background(), v.o.url(path), "")
		}(i)
	}
	// Release the fetch only once every caller has missed the cache, so
	// that none can pass by finding the entry the fetch stored.
	waitFor(t, func() bool { return misses.Load() == n && v.o.robots.Load() >= 1 })
	close(release)
	wg.Wait()
	if got := v.o.robots.Load(); got != 1 {
		t.Fatalf("%d robots.txt fetches for %d concurrent first requests, want 1", got, n)
	}
	for i, d := range decisions {
		if d.Allowed != (i%2 == 1) {
			t.Errorf("decision %d: %+v", i, d)
		}
	}
}

func TestCancelledCallerDoesNotFailOthers(t *testing.T) {
	release := make(chan struct{})
	v := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		serve(200, testRobots)(w, r)
	}, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan Decision, 1)
	go func() { first <- v.e.Decide(ctx, v.o.url("/public"), "") }()
	waitFor(t, func() bool { return v.o.robots.Load() == 1 })
	second := make(chan Decision, 1)
	go func() { second <- v.e.Decide(context.Background(), v.o.url("/private"), "") }()
	cancel()
	d := <-first
	if d.Allowed || d.Reason != ReasonClientGone || !strings.Contains(d.Detail, "canceled") || d.RobotsStatus != "" {
		t.Errorf("cancelled caller: %+v", d)
	}
	close(release)
	d = <-second
	if d.Allowed || d.Reason != ReasonDisallowed || d.Rule != "Disallow: /private" {
		t.Errorf("other caller: %+v", d)
	}
	if d := v.decide("/public", 1); !d.Allowed {
		t.Errorf("after: %+v", d)
	}
}

func TestClientGoneWithExpiredCopyWithoutRules(t *testing.T) {
	// An expired 4xx entry has no good copy to serve: the caller waits
	// for the re-fetch, and a caller that leaves is client-gone, not a
	// robots.txt verdict.
	release := make(chan struct{})
	defer close(release)
	v := newEnv(t, serve(404, ""), Config{})
	v.decide("/", 1)
	v.o.set(func(w http.ResponseWriter, r *http.Request) { <-release })
	v.clock.Advance(48 * time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan Decision, 1)
	go func() { res <- v.e.Decide(ctx, v.o.url("/private"), "") }()
	waitFor(t, func() bool { return v.o.robots.Load() == 2 })
	cancel()
	if d := <-res; d.Allowed || d.Reason != ReasonClientGone || !strings.Contains(d.Detail, "canceled") {
		t.Errorf("%+v", d)
	}
}

func TestPurge(t *testing.T) {
	v := newEnv(t, serve(200, testRobots), Config{})
	v.decide("/", 1)
	v.decide("/", 1)
	v.e.Purge(context.Background(), v.o.srv.URL)
	if _, ok := v.e.Cached(context.Background(), v.o.srv.URL); ok {
		t.Fatal("entry cached after Purge")
	}
	v.decide("/", 2)
	if _, ok := v.e.Cached(context.Background(), v.o.srv.URL); !ok {
		t.Fatal("entry not cached after Decide")
	}
}

func TestEntry(t *testing.T) {
	v := newEnv(t, serve(200, testRobots, "Cache-Control", "max-age=600"), Config{})
	ctx := context.Background()
	if _, ok := v.e.Cached(ctx, v.o.srv.URL); ok {
		t.Fatal("cached before any fetch")
	}
	en, err := v.e.Entry(ctx, v.o.srv.URL)
	if err != nil || en.Result.Status != StatusOK || en.Parsed == nil || en.Origin != v.o.srv.URL ||
		!en.Expires.Equal(t0.Add(10*time.Minute)) || en.Result.MaxAge != 10*time.Minute {
		t.Fatalf("Entry = %+v, %v", en, err)
	}
	if en2, _ := v.e.Entry(ctx, v.o.srv.URL); en2 != en || v.o.robots.Load() != 1 {
		t.Fatal("fresh entry fetched again")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	v.clock.Advance(time.Hour)
	v.o.set(blocking(t))
	if _, err := v.e.Entry(cctx, v.o.srv.URL); !errors.Is(err, context.Canceled) {
		t.Errorf("Entry with a cancelled ctx: %v", err)
	}
}

func TestRobotsTxtAlwaysAllowed(t *testing.T) {
	v := newEnv(t, serve(200, "User-agent: *\nDisallow: /\n"), Config{})
	d := v.decide("/robots.txt", 0)
	if !d.Allowed || d.Reason != ReasonRobotsTxt || d.Origin != v.o.srv.URL {
		t.Fatalf("%+v", d)
	}
	v.decide("/x", 1)
	if d := v.decide("/robots.txt", 1); !d.Allowed || d.RobotsStatus != StatusOK {
		t.Fatalf("%+v", d)
	}
}

func TestAgentGroups(t *testing.T) {
	body := "User-agent: *\nDisallow: /private\n\nUser-agent: MyBot\nDisallow: /\nAllow: /open\n"
	v := newEnv(t, serve(200, body), Config{})
	ctx := context.Background()
	d := v.e.Decide(ctx, v.o.url("/public"), "mybot")
	if d.Allowed || d.Group != "mybot" && d.Group != "MyBot" || d.Rule != "Disallow: /" || d.Line != 5 || d.Agent != "mybot" {
		t.Errorf("mybot /public: %+v", d)
	}
	if d := v.e.Decide(ctx, v.o.url("/open?x=1"), "MyBot"); !d.Allowed || d.Rule != "Allow: /open" || d.Line != 6 {
		t.Errorf("MyBot /open: %+v", d)
	}
	if d := v.e.Decide(ctx, v.o.url("/public"), ""); !d.Allowed || d.Group != "*" || d.Rule != "" || d.Line != 0 {
		t.Errorf("* /public: %+v", d)
	}
	if d := v.e.Decide(ctx, v.o.url("/private/a%20b"), "otherbot"); d.Allowed || d.Group != "*" || d.Line != 2 {
		t.Errorf("otherbot /private: %+v", d)
	}
}

func TestQueryMatched(t *testing.T) {
	v := newEnv(t, serve(200, "User-agent: *\nDisallow: /*?session=\nDisallow: /a%2Fb\n"), Config{})
	if d := v.decide("/page?session=1", 1); d.Allowed {
		t.Errorf("query rule not applied: %+v", d)
	}
	if d := v.decide("/page?x=1", 1); !d.Allowed {
		t.Errorf("%+v", d)
	}
	if d := v.decide("/a%2Fb", 1); d.Allowed {
		t.Errorf("percent-encoded path: %+v", d)
	}
}

func TestInvalidURL(t *testing.T) {
	e := newTestEnforcer(t, Config{Fetcher: &HTTPFetcher{MaxRedirects: testRedirects}}, nil)
	d := e.Decide(context.Background(), &url.URL{Path: "/x"}, "bot")
	if d.Allowed || d.Reason != ReasonInvalidURL || d.Detail == "" || d.Agent != "bot" {
		t.Errorf("%+v", d)
	}
}

func TestNewValidates(t *testing.T) {
	bad := []Config{
		{},
		{Fetcher: &HTTPFetcher{MaxRedirects: testRedirects}, TTL: -1},
		{Fetcher: &HTTPFetcher{MaxRedirects: testRedirects}, MinTTL: 2 * time.Hour, TTL: time.Hour},
		{Fetcher: &HTTPFetcher{MaxRedirects: testRedirects}, RetryMin: 2 * time.Hour, RetryMax: time.Hour},
		{Fetcher: &HTTPFetcher{MaxRedirects: testRedirects}, MaxBytes: -1},
	}
	for i, cfg := range bad {
		if _, err := New(filled(cfg)); err == nil {
			t.Errorf("config %d accepted", i)
		}
	}
}

func TestHooks(t *testing.T) {
	var fetched, hits, misses atomic.Int64
	var lastStatus atomic.Value
	v := newEnv(t, serve(200, testRobots), Config{Hooks: Hooks{
		Fetched: func(origin string, r FetchResult, took time.Duration) {
			fetched.Add(1)
			lastStatus.Store(r.Status)
			if took < 0 {
				t.Errorf("took %v", took)
			}
		},
		CacheLookup: func(origin string, hit bool) {
			if hit {
				hits.Add(1)
			} else {
				misses.Add(1)
			}
		},
	}})
	v.decide("/", 1)
	v.decide("/", 1)
	v.decide("/", 1)
	v.decide("/robots.txt", 1) // no lookup needed
	if fetched.Load() != 1 || hits.Load() != 2 || misses.Load() != 1 || lastStatus.Load() != StatusOK {
		t.Errorf("fetched %d hits %d misses %d", fetched.Load(), hits.Load(), misses.Load())
	}
}

func TestRebuild(t *testing.T) {
	v := newEnv(t, serve(200, testRobots), Config{})
	v.decide("/", 1)
	v.o.set(serve(500, ""))
	v.clock.Advance(25 * time.Hour)
	v.decide("/", 2)
	en, _ := v.e.Cached(context.Background(), v.o.srv.URL)
	// As a serialising store would: copy without Parsed, then rebuild.
	cp := *en
	cp.Parsed = nil
	cp.Rebuild(0)
	if cp.Parsed == nil || cp.Parsed.DecidePath("", "/private").Allowed {
		t.Fatal("rebuilt entry lost the good copy's rules")
	}
	cp.Good = nil
	cp.Rebuild(0)
	if cp.Parsed != nil {
		t.Fatal("rebuilt failure entry without a good copy has rules")
	}
	ok := Entry{Result: FetchResult{Status: StatusOK, Body: []byte("User-agent: *\nDisallow: /\n")}}
	ok.Rebuild(0)
	if ok.Parsed == nil || ok.Parsed.DecidePath("x", "/a").Allowed {
		t.Fatal("rebuilt OK entry")
	}
}

// coordStore is a MemoryStore that is also a Coordinator.
type coordStore struct {
	*MemoryStore
	calls atomic.Int64
	fail  bool
}

func (s *coordStore) Once(ctx context.Context, origin string, fetch func(context.Context, Store) *Entry) (*Entry, error) {
	s.calls.Add(1)
	if s.fail {
		return nil, errors.New("redis down")
	}
	return fetch(ctx, s), nil
}

func TestCoordinator(t *testing.T) {
	for _, fail := range []bool{false, true} {
		s := &coordStore{MemoryStore: newTestStore(), fail: fail}
		v := newEnv(t, serve(200, testRobots), Config{Store: s})
		if d := v.decide("/private", 1); d.Allowed || d.Reason != ReasonDisallowed {
			t.Fatalf("fail=%v: %+v", fail, d)
		}
		v.decide("/private", 1)
		if s.calls.Load() != 1 {
			t.Errorf("fail=%v: Once called %d times", fail, s.calls.Load())
		}
	}
}

// panicFetcher panics: the Enforcer must turn that into a verdict.
type panicFetcher struct{}

func (panicFetcher) Fetch(context.Context, string) FetchResult { panic("boom") }

func TestFetcherPanic(t *testing.T) {
	e := newTestEnforcer(t, Config{Fetcher: panicFetcher{}}, nil)
	u, _ := url.Parse("http://127.0.0.1:1/x")
	d := e.Decide(context.Background(), u, "")
	if d.Allowed || d.Reason != ReasonUnreachable || !strings.Contains(d.Detail, "boom") {
		t.Errorf("%+v", d)
	}
}

// waitFor polls cond until it holds, failing the test after 10 s. It
// waits for goroutines to reach a state; it asserts nothing about time.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

func BenchmarkDecideCacheHit(b *testing.B) {
	o := newOrigin(b, serve(200, "User-agent: *\nDisallow: /private\nDisallow: /*.pdf$\nAllow: /private/open\n\nUser-agent: otherbot\nDisallow: /\n"))
	e, err := New(filled(Config{Fetcher: &HTTPFetcher{MaxRedirects: testRedirects}}))
	if err != nil {
		b.Fatal(err)
	}
	allowed := o.url("/public/page?id=42")
	denied := o.url("/private/page?id=42")
	ctx := context.Background()
	if d := e.Decide(ctx, denied, "mybot"); d.Allowed {
		b.Fatal(d)
	}
	b.Run("allowed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.Decide(ctx, allowed, "mybot")
		}
	})
	b.Run("disallowed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.Decide(ctx, denied, "mybot")
		}
	})
	if o.robots.Load() != 1 {
		b.Fatalf("%d fetches", o.robots.Load())
	}
}

func TestPathSpellings(t *testing.T) {
	v := newEnv(t, serve(200, "User-agent: *\nAllow: /public\nDisallow: /private\n"), Config{})
	v.decide("/", 1)
	ctx := context.Background()
	for _, p := range []string{
		"//private/x",
		"/./private",
		"/public/../private",
		"/public/./../private/x",
		"/%2e%2e/private",
		"/%2E%2E/private",
		"/public/%2e%2e/private",
		"/public/.%2E/private",
		"/public%2F..%2Fprivate",
		"/public%2f..%2fprivate",
		"/public/..;/private",
		"/a/b/../../private",
		"/../../private",
		"/public//..//private",
		"/public/../private?x=1",
	} {
		d := v.e.Decide(ctx, v.o.url(p), "")
		if d.Allowed || d.Reason != ReasonDisallowed || d.Rule != "Disallow: /private" ||
			!strings.Contains(d.Detail, "normalised path /private") {
			t.Errorf("%s: %+v", p, d)
		}
	}
	for _, p := range []string{
		"/public/./x",
		"/public//x",
		"/.well-known/x",
		"/public/a%2Fb",
		"/public?next=/../private",
		"/public?u=//private",
	} {
		if d := v.e.Decide(ctx, v.o.url(p), ""); !d.Allowed || d.Detail != "" {
			t.Errorf("%s: %+v", p, d)
		}
	}
	// The literal spelling still decides first.
	if d := v.e.Decide(ctx, v.o.url("/private/../x"), ""); d.Allowed || d.Detail != "" {
		t.Errorf("/private/../x: %+v", d)
	}
}

func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{
		"/":                 "/",
		"//":                "/",
		"/a/b/":             "/a/b/",
		"/a/b/..":           "/a/",
		"/a/b/.":            "/a/b/",
		"/a/./b/../c":       "/a/c",
		"/..":               "/",
		"/a%2E%2e/b":        "/a../b",
		"/a/%2e%2E/b?q=/./": "/b?q=/./",
		"/a%2fb":            "/a/b",
		"/a/..;x=1/b;y":     "/b;y",
		"*":                 "*",
	} {
		if got := cleanPath(in); got != want {
			t.Errorf("cleanPath(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]bool{
		"/public/page.html?a=../b": false,
		"/a.b/c":                   false,
		"/a%20b":                   false,
		"/.x":                      true,
		"//x":                      true,
		"/a%2Eb":                   true,
		"/a%2fb":                   true,
		"/a?b//c":                  false,
		"/a;b":                     true,
		"/;x/private":              true,
		"/a\\b":                    true,
		"/a%5cb":                   true,
		"/a%3Bb":                   true,
		"/a%3a":                    true,
		"/a?q=%2F":                 true,
		"/a?b;c\\d":                false,
		"/caf%C3%A9/%7euser":       false,
		"/a%2541%2A%24%20":         false,
	} {
		if got := needsSpellings(in); got != want {
			t.Errorf("needsSpellings(%q) = %v", in, got)
		}
	}
	if n := testing.AllocsPerRun(100, func() { needsSpellings("/public/caf%C3%A9.html?id=42&q=a+b") }); n != 0 {
		t.Errorf("needsSpellings allocates %v times", n)
	}
}

func TestDecisionURLHasNoPassword(t *testing.T) {
	v := newEnv(t, serve(200, testRobots), Config{})
	ctx := context.Background()
	u := v.o.url("/private?x=1")
	u.User = url.UserPassword("alice", "s3cret")
	d := v.e.Decide(ctx, u, "")
	if d.URL != v.o.srv.URL+"/private?x=1" || d.Allowed {
		t.Errorf("URL %q: %+v", d.URL, d)
	}
	bad := &url.URL{Scheme: "http", User: url.UserPassword("alice", "s3cret"), Path: "/x"}
	if d := v.e.Decide(ctx, bad, ""); d.Reason != ReasonInvalidURL || strings.Contains(d.URL+d.Detail, "alice") {
		t.Errorf("invalid URL: %+v", d)
	}
}

func TestDecideQuiet(t *testing.T) {
	var lookups, fetches atomic.Int64
	v := newEnv(t, serve(200, testRobots), Config{Hooks: Hooks{
		CacheLookup: func(string, bool) { lookups.Add(1) },
		Fetched:     func(string, FetchResult, time.Duration) { fetches.Add(1) },
	}})
	ctx := context.Background()
	if d := v.e.DecideQuiet(ctx, v.o.url("/private"), ""); d.Allowed || d.Reason != ReasonDisallowed {
		t.Fatalf("%+v", d)
	}
	v.e.DecideQuiet(ctx, v.o.url("/x"), "")
	if _, err := v.e.Entry(ctx, v.o.srv.URL); err != nil {
		t.Fatal(err)
	}
	if lookups.Load() != 0 || fetches.Load() != 1 {
		t.Errorf("quiet: %d lookups, %d fetches; want 0 and 1 (the fetch is real traffic)", lookups.Load(), fetches.Load())
	}
	v.e.Decide(ctx, v.o.url("/x"), "")
	if lookups.Load() != 1 {
		t.Errorf("Decide: %d lookups", lookups.Load())
	}
}

func TestStaleWhileRevalidate(t *testing.T) {
	release := make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	v := newEnv(t, serve(200, testRobots), Config{TTL: time.Hour, UnreachableWindow: 10 * time.Hour})
	v.decide("/private", 1)
	v.o.set(func(w http.ResponseWriter, r *http.Request) {
		<-release
		serve(200, "User-agent: *\nDisallow: /other\n")(w, r)
	})
	v.clock.Advance(time.Hour)
	// While the re-fetch hangs, every request is decided at once on the
	// expired copy, and only one fetch is made.
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		d := v.e.Decide(ctx, v.o.url("/private"), "")
		if d.Allowed || d.Rule != "Disallow: /private" || d.RobotsAge != time.Hour || d.RobotsStatus != StatusOK {
			t.Fatalf("request %d while re-fetching: %+v", i, d)
		}
	}
	waitFor(t, func() bool { return v.o.robots.Load() == 2 })
	close(release)
	released = true
	v.settle()
	if got := v.o.robots.Load(); got != 2 {
		t.Fatalf("%d fetches, want 2", got)
	}
	if d := v.decide("/private", 2); !d.Allowed || d.RobotsAge != 0 {
		t.Fatalf("after the re-fetch: %+v", d)
	}
	if d := v.decide("/other", 2); d.Allowed {
		t.Fatalf("new rules not in force: %+v", d)
	}

	// Past the unreachable window the expired copy is not used: the
	// caller waits for the fetch.
	v.clock.Advance(12 * time.Hour)
	v.o.set(serve(200, "User-agent: *\nDisallow: /\n"))
	if d := v.decide("/x", 3); d.Allowed || d.Rule != "Disallow: /" {
		t.Fatalf("expired past the window: %+v", d)
	}
}

func TestNoStaleServeWithoutGoodCopy(t *testing.T) {
	// Expired 4xx and unreachable entries without a good copy wait for
	// the fetch, as before: the new result decides.
	for _, code := range []int{404, 503} {
		v := newEnv(t, serve(code, ""), Config{TTL: time.Hour, RetryMin: time.Hour, RetryMax: time.Hour})
		v.decide("/private", 1)
		v.o.set(serve(200, testRobots))
		v.clock.Advance(time.Hour)
		if d := v.decide("/private", 2); d.Allowed || d.Reason != ReasonDisallowed {
			t.Errorf("expired %d entry: %+v", code, d)
		}
	}
}
