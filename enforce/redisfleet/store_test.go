package redisfleet

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/redistest"
)

// TestRedisEntryFieldsCovered fails when enforce.Entry or enforce.FetchResult gain a field
// that the stored form (redisEntry, redisResult) does not carry yet.
func TestRedisEntryFieldsCovered(t *testing.T) {
	// Entry: 8 stored fields + Parsed, TDM, TDMErr, License and
	// LicenseErr (rebuilt by Entry.Rebuild). FetchResult: 14 fields.
	if n := reflect.TypeFor[enforce.Entry]().NumField(); n != 13 {
		t.Errorf("enforce.Entry has %d fields, the stored form (codec.go) holds 8 (+Parsed, TDM, TDMErr, License, LicenseErr): update codec.go and this test", n)
	}
	if n := reflect.TypeFor[enforce.FetchResult]().NumField(); n != 14 {
		t.Errorf("enforce.FetchResult has %d fields, the stored form holds 14: update codec.go and this test", n)
	}
}

func TestRedisStoreRoundTrip(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	a := newTestRedis(t, srv, clock, nil).store
	b := newTestRedis(t, srv, clock, nil).store // another replica: empty L1
	ctx := context.Background()

	good := enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200, Body: []byte(redisTestRobots),
		MaxAge: 90*time.Minute + 7*time.Nanosecond, HasMaxAge: true, FinalURL: "http://a.test/robots.txt"}
	entries := []*enforce.Entry{
		{Key: robotsKey("http://a.test"), Result: good, FetchedAt: redisT0, Expires: redisT0.Add(24 * time.Hour)},
		{Key: robotsKey("http://b.test"), Result: enforce.FetchResult{Status: enforce.StatusUnavailable, HTTPStatus: 404, FinalURL: "http://b.test/robots.txt"},
			FetchedAt: redisT0, Expires: redisT0.Add(time.Hour)},
		{Key: robotsKey("http://c.test"), Result: enforce.FetchResult{Status: enforce.StatusUnreachable, HTTPStatus: 503, Err: "HTTP 503", ErrKind: enforce.FetchStatus, Truncated: true},
			FetchedAt: redisT0.Add(time.Hour), Expires: redisT0.Add(2 * time.Hour), Good: &good, GoodAt: redisT0,
			Failures: 3, UnreachableSince: redisT0.Add(30 * time.Minute)},
	}
	for _, e := range entries {
		e.Rebuild(0)
		a.Set(ctx, e.Key, e, time.Hour)
	}
	for _, want := range entries {
		got, ok := b.Get(ctx, want.Key)
		if !ok {
			t.Fatalf("%s: not found through another replica", want.Key)
		}
		if got == want {
			t.Fatalf("%s: got the same pointer, not a decoded copy", want.Key)
		}
		g, w := *got, *want
		if !g.FetchedAt.Equal(w.FetchedAt) || !g.Expires.Equal(w.Expires) || !g.GoodAt.Equal(w.GoodAt) ||
			!g.UnreachableSince.Equal(w.UnreachableSince) {
			t.Errorf("%s: times differ: got %+v, want %+v", want.Key, g, w)
		}
		g.FetchedAt, g.Expires, g.GoodAt, g.UnreachableSince = w.FetchedAt, w.Expires, w.GoodAt, w.UnreachableSince
		g.Parsed, w.Parsed = nil, nil
		if len(g.Result.Body) == 0 && len(w.Result.Body) == 0 {
			g.Result.Body, w.Result.Body = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: round trip differs:\n got %+v\nwant %+v", want.Key, g, w)
		}
		if (got.Parsed == nil) != (want.Parsed == nil) {
			t.Fatalf("%s: Parsed nil = %v, want %v", want.Key, got.Parsed == nil, want.Parsed == nil)
		}
		if got.Parsed == nil {
			continue
		}
		for _, c := range []struct{ agent, path string }{
			{"", "/"}, {"", "/private"}, {"", "/private/ok"}, {"foobot", "/"}, {"otherbot", "/private/x"},
		} {
			if g, w := got.Parsed.MatchPath(c.agent, c.path), want.Parsed.MatchPath(c.agent, c.path); g != w {
				t.Errorf("%s: decision for %q %s: got %+v, want %+v", want.Key, c.agent, c.path, g, w)
			}
		}
		if g, w := got.Parsed.Group("").CrawlDelay, want.Parsed.Group("").CrawlDelay; g != w || g != 2*time.Second {
			t.Errorf("%s: crawl-delay %v, want %v (2s)", want.Key, g, w)
		}
	}

	// The stored form is the body, not a compiled form.
	raw, err := redisClient(t, srv).Get(ctx, testKeys.robots("http://a.test")).Result()
	if err != nil {
		t.Fatal(err)
	}
	e, err := decodeRedisEntry([]byte(raw), robotsKey("http://a.test"), 0)
	if err != nil || string(e.Result.Body) != redisTestRobots {
		t.Fatalf("stored form: %v, body %q", err, e.Result.Body)
	}

	// Delete reaches Redis and the other replica.
	b.Delete(ctx, robotsKey("http://a.test"))
	if _, ok := a.Get(ctx, robotsKey("http://a.test")); ok {
		// a's L1 copy is dropped by b's published purge: wait for it.
		redisWaitFor(t, "purge to reach the other replica's L1", func() bool {
			_, ok := a.Get(ctx, robotsKey("http://a.test"))
			return !ok
		})
	}

	// An undecodable value is a miss, not a panic or an error.
	if err := redisClient(t, srv).Set(ctx, testKeys.robots("http://junk.test"), "{not json", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Get(ctx, robotsKey("http://junk.test")); ok {
		t.Fatal("junk value decoded")
	}
}

func TestRedisStoreTTL(t *testing.T) {
	srv := redistest.Start(t)
	s := newTestRedis(t, srv, nil, func(o *Options) { o.L1TTL = -1 }).store
	c := redisClient(t, srv)
	ctx := context.Background()
	e := &enforce.Entry{Key: robotsKey("http://ttl.test"), Result: enforce.FetchResult{Status: enforce.StatusUnavailable, HTTPStatus: 404}}

	s.Set(ctx, e.Key, e, time.Hour)
	ttl, err := c.PTTL(ctx, testKeys.robots(e.Key.String())).Result()
	if err != nil || ttl <= 59*time.Minute || ttl > time.Hour {
		t.Fatalf("PTTL after Set(keep=1h) = %v, %v; want (59m, 1h]", ttl, err)
	}

	s.Set(ctx, e.Key, e, 150*time.Millisecond)
	if _, ok := s.Get(ctx, e.Key); !ok {
		t.Fatal("entry missing right after Set")
	}
	redisWaitFor(t, "the Redis key to expire", func() bool {
		n, err := c.Exists(ctx, testKeys.robots(e.Key.String())).Result()
		return err == nil && n == 0
	})
	if _, ok := s.Get(ctx, e.Key); ok {
		t.Fatal("entry still served after its keep expired in Redis")
	}
}

// BenchmarkRedisDecideCacheHit compares a cache hit in memory with a hit in
// Redis (L1 disabled: one Redis round trip and a re-parse per Decide).
func BenchmarkRedisDecideCacheHit(b *testing.B) {
	o := newRedisOrigin(b, redisTestRobots)
	u := o.url(b, "/private/page")
	run := func(b *testing.B, store enforce.Store) {
		e, err := enforce.New(filledEnforce(enforce.Config{Fetcher: &enforce.HTTPFetcher{MaxRedirects: 5}, Store: store}))
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		e.Decide(ctx, u, "", enforce.DecideOptions{})
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if d := e.Decide(ctx, u, "", enforce.DecideOptions{}); d.Allowed {
				b.Fatal("allowed")
			}
		}
	}
	b.Run("memory", func(b *testing.B) { run(b, newLocalStore()) })
	srv := redistest.Start(b)
	b.Run("redis-no-l1", func(b *testing.B) {
		run(b, newTestRedis(b, srv, nil, func(o *Options) { o.L1TTL = -1 }).store)
	})
	b.Run("redis-l1", func(b *testing.B) {
		run(b, newTestRedis(b, srv, nil, nil).store)
	})
}

// TestRedisSetKeepsBetterEntry: Set never replaces a later entry, nor a
// good robots.txt with a failure that does not carry it as its good copy.
func TestRedisSetKeepsBetterEntry(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	a := newTestRedis(t, srv, clock, nil).store
	b := newTestRedis(t, srv, clock, nil).store
	c := redisClient(t, srv)
	ctx := context.Background()
	const origin = "http://cas.test"
	stored := func() *enforce.Entry {
		t.Helper()
		raw, err := c.Get(ctx, testKeys.robots(origin)).Result()
		if err != nil {
			t.Fatal(err)
		}
		e, err := decodeRedisEntry([]byte(raw), robotsKey(origin), 0)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	good := enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200, Body: []byte(redisTestRobots)}
	ok := &enforce.Entry{Key: robotsKey(origin), Result: good, FetchedAt: redisT0.Add(time.Second), Expires: redisT0.Add(time.Hour)}
	a.Set(ctx, robotsKey(origin), ok, 2*time.Hour)

	// A failure fetched later, without the good copy (a replica that did
	// not see it): Redis keeps the good entry, and b reads it next.
	fail := &enforce.Entry{Key: robotsKey(origin), Result: enforce.FetchResult{Status: enforce.StatusUnreachable, Err: "timeout"},
		FetchedAt: redisT0.Add(2 * time.Second), Expires: redisT0.Add(time.Minute), Failures: 1,
		UnreachableSince: redisT0.Add(2 * time.Second)}
	b.Set(ctx, robotsKey(origin), fail, 2*time.Hour)
	if e := stored(); e.Result.Status != enforce.StatusOK {
		t.Fatalf("a failure without the good copy replaced it: %+v", e.Result)
	}
	if e, found := b.Get(ctx, robotsKey(origin)); !found || e.Result.Status != enforce.StatusOK {
		t.Fatalf("b after its rejected Set: %+v %v, want redis's good entry", e, found)
	}
	// An older entry never replaces a newer one.
	old := &enforce.Entry{Key: robotsKey(origin), Result: enforce.FetchResult{Status: enforce.StatusUnavailable, HTTPStatus: 404},
		FetchedAt: redisT0, Expires: redisT0.Add(time.Hour)}
	b.Set(ctx, robotsKey(origin), old, 2*time.Hour)
	if e := stored(); e.Result.Status != enforce.StatusOK {
		t.Fatalf("an older entry replaced a newer one: %+v", e.Result)
	}
	// A failure that continues the good entry (carries it) is stored.
	cont := *fail
	cont.Good, cont.GoodAt = &good, ok.FetchedAt
	b.Set(ctx, robotsKey(origin), &cont, 2*time.Hour)
	if e := stored(); e.Result.Status != enforce.StatusUnreachable || e.Good == nil {
		t.Fatalf("the continuing failure was not stored: %+v", e)
	}
	// Another failure not building on it (as many failures) is not.
	other := *fail
	other.FetchedAt = redisT0.Add(3 * time.Second)
	a.Set(ctx, robotsKey(origin), &other, 2*time.Hour)
	if e := stored(); e.Good == nil {
		t.Fatal("a failure without the good copy replaced one holding it")
	}
	// A newer good entry always wins.
	ok2 := *ok
	ok2.FetchedAt = redisT0.Add(4 * time.Second)
	a.Set(ctx, robotsKey(origin), &ok2, 2*time.Hour)
	if e := stored(); e.Result.Status != enforce.StatusOK || !e.FetchedAt.Equal(ok2.FetchedAt) {
		t.Fatalf("newer good entry not stored: %+v", e)
	}
}
