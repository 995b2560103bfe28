package enforce

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/testsupport"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// env is an Enforcer on a fake clock in front of one test origin.
type env struct {
	t     *testing.T
	o     *testOrigin
	clock *enforcetest.Clock
	e     *Enforcer
	// unknownDeny is DecideOptions.UnknownDeny of decideFor.
	unknownDeny bool
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
	d := v.e.Decide(context.Background(), v.o.url(path), "", DecideOptions{})
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
	testsupport.WaitFor(v.t, "the background re-fetches to end", func() bool {
		v.e.mu.Lock()
		defer v.e.mu.Unlock()
		return len(v.e.revalidating) == 0
	})
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
	d := v.e.Decide(ctx, v.o.url("/public"), "mybot", DecideOptions{})
	if d.Allowed || d.Group != "mybot" && d.Group != "MyBot" || d.Rule != "Disallow: /" || d.Line != 5 || d.Agent != "mybot" {
		t.Errorf("mybot /public: %+v", d)
	}
	if d := v.e.Decide(ctx, v.o.url("/open?x=1"), "MyBot", DecideOptions{}); !d.Allowed || d.Rule != "Allow: /open" || d.Line != 6 {
		t.Errorf("MyBot /open: %+v", d)
	}
	if d := v.e.Decide(ctx, v.o.url("/public"), "", DecideOptions{}); !d.Allowed || d.Group != "*" || d.Rule != "" || d.Line != 0 {
		t.Errorf("* /public: %+v", d)
	}
	if d := v.e.Decide(ctx, v.o.url("/private/a%20b"), "otherbot", DecideOptions{}); d.Allowed || d.Group != "*" || d.Line != 2 {
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
	d := e.Decide(context.Background(), &url.URL{Path: "/x"}, "bot", DecideOptions{})
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

func (panicFetcher) Fetch(context.Context, string) FetchResult { panic("boom") }

func BenchmarkDecideCacheHit(b *testing.B) {
	o := newOrigin(b, serve(200, "User-agent: *\nDisallow: /private\nDisallow: /*.pdf$\nAllow: /private/open\n\nUser-agent: otherbot\nDisallow: /\n"))
	e, err := New(filled(Config{Fetcher: &HTTPFetcher{MaxRedirects: testRedirects}}))
	if err != nil {
		b.Fatal(err)
	}
	allowed := o.url("/public/page?id=42")
	denied := o.url("/private/page?id=42")
	ctx := context.Background()
	if d := e.Decide(ctx, denied, "mybot", DecideOptions{}); d.Allowed {
		b.Fatal(d)
	}
	b.Run("allowed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.Decide(ctx, allowed, "mybot", DecideOptions{})
		}
	})
	b.Run("disallowed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.Decide(ctx, denied, "mybot", DecideOptions{})
		}
	})
	if o.robots.Load() != 1 {
		b.Fatalf("%d fetches", o.robots.Load())
	}
}

func TestDecisionURLHasNoPassword(t *testing.T) {
	v := newEnv(t, serve(200, testRobots), Config{})
	ctx := context.Background()
	u := v.o.url("/private?x=1")
	u.User = url.UserPassword("alice", "s3cret")
	d := v.e.Decide(ctx, u, "", DecideOptions{})
	if d.URL != v.o.srv.URL+"/private?x=1" || d.Allowed {
		t.Errorf("URL %q: %+v", d.URL, d)
	}
	bad := &url.URL{Scheme: "http", User: url.UserPassword("alice", "s3cret"), Path: "/x"}
	if d := v.e.Decide(ctx, bad, "", DecideOptions{}); d.Reason != ReasonInvalidURL || strings.Contains(d.URL+d.Detail, "alice") {
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
	if d := v.e.Decide(ctx, v.o.url("/private"), "", DecideOptions{Quiet: true}); d.Allowed || d.Reason != ReasonDisallowed {
		t.Fatalf("%+v", d)
	}
	v.e.Decide(ctx, v.o.url("/x"), "", DecideOptions{Quiet: true})
	if _, err := v.e.Entry(ctx, v.o.srv.URL); err != nil {
		t.Fatal(err)
	}
	if lookups.Load() != 0 || fetches.Load() != 1 {
		t.Errorf("quiet: %d lookups, %d fetches; want 0 and 1 (the fetch is real traffic)", lookups.Load(), fetches.Load())
	}
	v.e.Decide(ctx, v.o.url("/x"), "", DecideOptions{})
	if lookups.Load() != 1 {
		t.Errorf("Decide: %d lookups", lookups.Load())
	}
}
