package redisfleet

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/internal/redistest"
)

var redisT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const redisTestRobots = "User-agent: *\nDisallow: /private\nAllow: /private/ok\nCrawl-delay: 2\n\nUser-agent: foobot\nDisallow: /\n"

// newTestRedis returns a Redis on srv with test-friendly intervals; extra
// options are applied by mod.
func newTestRedis(t testing.TB, srv *redistest.Server, clock enforce.Clock, mod func(*Options)) *Redis {
	t.Helper()
	SetRedisClientLog(zerolog.Nop()) // go-redis's own dial-failure lines
	o := Options{
		Clock:         clock,
		Log:           zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel),
		RetryInterval: 20 * time.Millisecond,
		Timeout:       time.Second, // generous: the race detector on 2 shared cores is slow
		MaxBytes:      testMaxBytes,
		Local:         newLocalStore(),
	}
	if mod != nil {
		mod(&o)
	}
	r, err := New(context.Background(), srv.URL(0), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// redisClient returns a plain client on srv, to look at keys.
func redisClient(t testing.TB, srv *redistest.Server) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// redisOrigin is an httptest origin counting its robots.txt fetches; gate,
// when set, is waited for before each robots.txt answer.
type redisOrigin struct {
	srv    *httptest.Server
	robots atomic.Int64
	body   atomic.Pointer[string]
	onHit  atomic.Pointer[func()]
}

func newRedisOrigin(t testing.TB, body string) *redisOrigin {
	t.Helper()
	o := &redisOrigin{}
	o.body.Store(&body)
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		o.robots.Add(1)
		if f := o.onHit.Load(); f != nil {
			(*f)()
		}
		fmt.Fprint(w, *o.body.Load())
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *redisOrigin) url(t testing.TB, path string) *url.URL {
	t.Helper()
	u, err := url.Parse(o.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (o *redisOrigin) origin(t testing.TB) string {
	t.Helper()
	s, err := enforce.Origin(o.url(t, "/"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newRedisEnforcer(t testing.TB, r *Redis, clock enforce.Clock) *enforce.Enforcer {
	t.Helper()
	e, err := enforce.New(filledEnforce(enforce.Config{
		Fetcher:      &enforce.HTTPFetcher{MaxRedirects: 5, Timeout: 5 * time.Second},
		Store:        r.Store(),
		Clock:        clock,
		FetchTimeout: 10 * time.Second,
		Log:          zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel),
	}))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// waitFor polls cond until it holds, failing the test after 10s.
func redisWaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRedisEntryFieldsCovered fails when enforce.Entry or enforce.FetchResult gain a field
// that the stored form (redisEntry, redisResult) does not carry yet.
func TestRedisEntryFieldsCovered(t *testing.T) {
	// Entry: 8 stored fields + Parsed. FetchResult: 9 fields.
	if n := reflect.TypeFor[enforce.Entry]().NumField(); n != 9 {
		t.Errorf("enforce.Entry has %d fields, redisEntry stores 8 (+Parsed): update redis_store.go and this test", n)
	}
	if n := reflect.TypeFor[enforce.FetchResult]().NumField(); n != 9 {
		t.Errorf("enforce.FetchResult has %d fields, redisResult stores 9: update store.go and this test", n)
	}
}

func TestRedisStoreRoundTrip(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	a := newTestRedis(t, srv, clock, nil).Store()
	b := newTestRedis(t, srv, clock, nil).Store() // another replica: empty L1
	ctx := context.Background()

	good := enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200, Body: []byte(redisTestRobots),
		MaxAge: 90*time.Minute + 7*time.Nanosecond, HasMaxAge: true, FinalURL: "http://a.test/robots.txt"}
	entries := []*enforce.Entry{
		{Origin: "http://a.test", Result: good, FetchedAt: redisT0, Expires: redisT0.Add(24 * time.Hour)},
		{Origin: "http://b.test", Result: enforce.FetchResult{Status: enforce.StatusUnavailable, HTTPStatus: 404, FinalURL: "http://b.test/robots.txt"},
			FetchedAt: redisT0, Expires: redisT0.Add(time.Hour)},
		{Origin: "http://c.test", Result: enforce.FetchResult{Status: enforce.StatusUnreachable, HTTPStatus: 503, Err: "HTTP 503", ErrKind: enforce.FetchStatus, Truncated: true},
			FetchedAt: redisT0.Add(time.Hour), Expires: redisT0.Add(2 * time.Hour), Good: &good, GoodAt: redisT0,
			Failures: 3, UnreachableSince: redisT0.Add(30 * time.Minute)},
	}
	for _, e := range entries {
		e.Rebuild(0)
		a.Set(ctx, e.Origin, e, time.Hour)
	}
	for _, want := range entries {
		got, ok := b.Get(ctx, want.Origin)
		if !ok {
			t.Fatalf("%s: not found through another replica", want.Origin)
		}
		if got == want {
			t.Fatalf("%s: got the same pointer, not a decoded copy", want.Origin)
		}
		g, w := *got, *want
		if !g.FetchedAt.Equal(w.FetchedAt) || !g.Expires.Equal(w.Expires) || !g.GoodAt.Equal(w.GoodAt) ||
			!g.UnreachableSince.Equal(w.UnreachableSince) {
			t.Errorf("%s: times differ: got %+v, want %+v", want.Origin, g, w)
		}
		g.FetchedAt, g.Expires, g.GoodAt, g.UnreachableSince = w.FetchedAt, w.Expires, w.GoodAt, w.UnreachableSince
		g.Parsed, w.Parsed = nil, nil
		if len(g.Result.Body) == 0 && len(w.Result.Body) == 0 {
			g.Result.Body, w.Result.Body = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: round trip differs:\n got %+v\nwant %+v", want.Origin, g, w)
		}
		if (got.Parsed == nil) != (want.Parsed == nil) {
			t.Fatalf("%s: Parsed nil = %v, want %v", want.Origin, got.Parsed == nil, want.Parsed == nil)
		}
		if got.Parsed == nil {
			continue
		}
		for _, c := range []struct{ agent, path string }{
			{"", "/"}, {"", "/private"}, {"", "/private/ok"}, {"foobot", "/"}, {"otherbot", "/private/x"},
		} {
			if g, w := got.Parsed.DecidePath(c.agent, c.path), want.Parsed.DecidePath(c.agent, c.path); g != w {
				t.Errorf("%s: decision for %q %s: got %+v, want %+v", want.Origin, c.agent, c.path, g, w)
			}
		}
		if g, w := got.Parsed.Group("").CrawlDelay, want.Parsed.Group("").CrawlDelay; g != w || g != 2*time.Second {
			t.Errorf("%s: crawl-delay %v, want %v (2s)", want.Origin, g, w)
		}
	}

	// The stored form is the body, not a compiled form.
	raw, err := redisClient(t, srv).Get(ctx, defaultPrefix+"robots:http://a.test").Result()
	if err != nil {
		t.Fatal(err)
	}
	e, err := decodeRedisEntry([]byte(raw), 0)
	if err != nil || string(e.Result.Body) != redisTestRobots {
		t.Fatalf("stored form: %v, body %q", err, e.Result.Body)
	}

	// Delete reaches Redis and the other replica.
	b.Delete(ctx, "http://a.test")
	if _, ok := a.Get(ctx, "http://a.test"); ok {
		// a's L1 copy is dropped by b's published purge: wait for it.
		redisWaitFor(t, "purge to reach the other replica's L1", func() bool {
			_, ok := a.Get(ctx, "http://a.test")
			return !ok
		})
	}

	// An undecodable value is a miss, not a panic or an error.
	if err := redisClient(t, srv).Set(ctx, defaultPrefix+"robots:http://junk.test", "{not json", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Get(ctx, "http://junk.test"); ok {
		t.Fatal("junk value decoded")
	}
}

func TestRedisStoreTTL(t *testing.T) {
	srv := redistest.Start(t)
	s := newTestRedis(t, srv, nil, func(o *Options) { o.L1TTL = -1 }).Store()
	c := redisClient(t, srv)
	ctx := context.Background()
	e := &enforce.Entry{Origin: "http://ttl.test", Result: enforce.FetchResult{Status: enforce.StatusUnavailable, HTTPStatus: 404}}

	s.Set(ctx, e.Origin, e, time.Hour)
	ttl, err := c.PTTL(ctx, defaultPrefix+"robots:"+e.Origin).Result()
	if err != nil || ttl <= 59*time.Minute || ttl > time.Hour {
		t.Fatalf("PTTL after Set(keep=1h) = %v, %v; want (59m, 1h]", ttl, err)
	}

	s.Set(ctx, e.Origin, e, 150*time.Millisecond)
	if _, ok := s.Get(ctx, e.Origin); !ok {
		t.Fatal("entry missing right after Set")
	}
	redisWaitFor(t, "the Redis key to expire", func() bool {
		n, err := c.Exists(ctx, defaultPrefix+"robots:"+e.Origin).Result()
		return err == nil && n == 0
	})
	if _, ok := s.Get(ctx, e.Origin); ok {
		t.Fatal("entry still served after its keep expired in Redis")
	}
}

// TestRedisFleetSingleFetch: three replicas sharing one Redis, 64
// concurrent first requests spread over them, exactly one robots.txt
// fetch at the origin.
func TestRedisFleetSingleFetch(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	o := newRedisOrigin(t, redisTestRobots)
	c := redisClient(t, srv)
	lockKey := defaultPrefix + "lock:" + o.origin(t)

	// Hold the first fetch until its lock is visible in Redis and every
	// request has been started, so that the others really contend.
	release := make(chan struct{})
	var releaseOnce sync.Once
	open := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(open) // a failing test must not leave handlers blocked
	hit := func() { <-release }
	o.onHit.Store(&hit)

	var es []*enforce.Enforcer
	for range 3 {
		es = append(es, newRedisEnforcer(t, newTestRedis(t, srv, clock, nil), clock))
	}
	const n = 64
	var wg sync.WaitGroup
	var started sync.WaitGroup
	started.Add(n)
	results := make([]enforce.Decision, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started.Done()
			path := "/private"
			if i%2 == 1 {
				path = "/public"
			}
			results[i] = es[i%len(es)].Decide(context.Background(), o.url(t, path), "")
		}()
	}
	started.Wait()
	redisWaitFor(t, "the fetch lock", func() bool {
		n, err := c.Exists(context.Background(), lockKey).Result()
		return err == nil && n == 1
	})
	open()
	wg.Wait()

	if got := o.robots.Load(); got != 1 {
		t.Fatalf("%d robots.txt fetches for %d requests over 3 replicas, want 1", got, n)
	}
	for i, d := range results {
		if wantAllowed := i%2 == 1; d.Allowed != wantAllowed || d.RobotsStatus != enforce.StatusOK {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	if n, _ := c.Exists(context.Background(), lockKey).Result(); n != 0 {
		t.Fatal("lock not released")
	}
}

// TestRedisCrashedLockHolder: a lock whose holder died (never released,
// never extended) blocks the origin only until it expires; then one
// waiter takes it and fetches, once.
func TestRedisCrashedLockHolder(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	o := newRedisOrigin(t, redisTestRobots)
	c := redisClient(t, srv)
	ctx := context.Background()
	lockKey := defaultPrefix + "lock:" + o.origin(t)
	const lockTTL = 300 * time.Millisecond
	if err := c.Set(ctx, lockKey, "crashed-holder", lockTTL).Err(); err != nil {
		t.Fatal(err)
	}
	var lockAtFetch atomic.Pointer[string]
	hit := func() {
		v, _ := c.Get(context.Background(), lockKey).Result()
		lockAtFetch.Store(&v)
	}
	o.onHit.Store(&hit)

	mod := func(o *Options) { o.LockTTL = lockTTL }
	es := []*enforce.Enforcer{
		newRedisEnforcer(t, newTestRedis(t, srv, clock, mod), clock),
		newRedisEnforcer(t, newTestRedis(t, srv, clock, mod), clock),
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if d := es[i%2].Decide(ctx, o.url(t, "/private"), ""); d.Allowed || d.RobotsStatus != enforce.StatusOK {
				t.Errorf("decision: %+v", d)
			}
		}()
	}
	wg.Wait()
	if got := o.robots.Load(); got != 1 {
		t.Fatalf("%d robots.txt fetches, want 1", got)
	}
	if v := lockAtFetch.Load(); v == nil || *v == "crashed-holder" || *v == "" {
		t.Fatalf("fetched while the lock was %v, want a waiter's own token", v)
	}
	// Bounded: far below the enforce.Enforcer's 10s fetch timeout.
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("waiters took %v", took)
	}
}

// TestRedisPacerAcrossInstances: reservations from three RedisPacers
// interleave with exact crawl-delay spacing on a shared fake clock.
func TestRedisPacerAcrossInstances(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	var ps []*Pacer
	for range 3 {
		ps = append(ps, newTestRedis(t, srv, clock, nil).Pacer())
	}
	ctx := context.Background()
	const origin = "http://paced.test"
	const delay, maxWait = 1500 * time.Millisecond, 5 * time.Second

	for i := range 4 { // slots 0, 1.5, 3, 4.5 s
		at, ok, err := ps[i%3].Reserve(ctx, origin, delay, maxWait)
		if want := redisT0.Add(time.Duration(i) * delay); err != nil || !ok || !at.Equal(want) {
			t.Fatalf("reservation %d from pacer %d: %v %v %v, want %v", i, i%3, at, ok, err, want)
		}
	}
	// The next slot (6 s) is beyond maxWait: refused, nothing reserved.
	for i := range 3 {
		at, ok, err := ps[i].Reserve(ctx, origin, delay, maxWait)
		if want := redisT0.Add(4 * delay); err != nil || ok || !at.Equal(want) {
			t.Fatalf("over-limit reservation from pacer %d: %v %v %v, want refusal at %v", i, at, ok, err, want)
		}
	}
	clock.Advance(2 * time.Second)
	at, ok, err := ps[2].Reserve(ctx, origin, delay, maxWait)
	if want := redisT0.Add(4 * delay); err != nil || !ok || !at.Equal(want) {
		t.Fatalf("after 2s: %v %v %v, want %v", at, ok, err, want)
	}
	// Once the queue has drained, a request goes at once.
	clock.Advance(time.Minute)
	at, ok, err = ps[0].Reserve(ctx, origin, delay, maxWait)
	if err != nil || !ok || !at.Equal(clock.Now()) {
		t.Fatalf("idle origin: %v %v %v, want now", at, ok, err)
	}
	// Other origins are independent.
	at, ok, err = ps[1].Reserve(ctx, "http://other.test", delay, maxWait)
	if err != nil || !ok || !at.Equal(clock.Now()) {
		t.Fatalf("other origin: %v %v %v, want now", at, ok, err)
	}

	// Concurrent reservations from all pacers get distinct slots, delay apart.
	const n = 30
	var mu sync.Mutex
	var slots []time.Time
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at, ok, err := ps[i%3].Reserve(ctx, "http://burst.test", time.Second, time.Hour)
			if err != nil || !ok {
				t.Errorf("burst reservation: %v %v", ok, err)
				return
			}
			mu.Lock()
			slots = append(slots, at)
			mu.Unlock()
		}()
	}
	wg.Wait()
	seen := map[time.Duration]bool{}
	for _, s := range slots {
		seen[s.Sub(clock.Now())] = true
	}
	for i := range n {
		if !seen[time.Duration(i)*time.Second] {
			t.Fatalf("burst slots %v: missing +%ds", seen, i)
		}
	}
}

func TestRedisPauses(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	a := newTestRedis(t, srv, clock, nil).Pauses()
	b := newTestRedis(t, srv, clock, nil).Pauses()
	ctx := context.Background()
	const origin = "http://paused.test"

	// pausedUntil polls p until it reports want (replicas learn of
	// another's change through a published message: asynchronously).
	pausedUntil := func(p *Pauses, want time.Time) {
		t.Helper()
		redisWaitFor(t, fmt.Sprintf("pause until %v", want), func() bool {
			got, ok, err := p.PausedUntil(ctx, origin, clock.Now())
			return err == nil && ok == !want.IsZero() && got.Equal(want)
		})
	}

	if _, ok, err := b.PausedUntil(ctx, origin, clock.Now()); ok || err != nil { // also caches "not paused" in b
		t.Fatalf("paused before any pause: %v %v", ok, err)
	}
	until := redisT0.Add(time.Minute)
	if err := a.Pause(ctx, origin, until); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := a.PausedUntil(ctx, origin, clock.Now()); !ok || err != nil || !got.Equal(until) {
		t.Fatalf("own replica: %v %v %v, want paused until %v", got, ok, err, until)
	}
	pausedUntil(b, until)
	// Never shortened, extended.
	_ = b.Pause(ctx, origin, redisT0.Add(30*time.Second))
	if got, _, _ := b.PausedUntil(ctx, origin, clock.Now()); !got.Equal(until) {
		t.Fatalf("shorter pause shortened it: %v", got)
	}
	later := redisT0.Add(2 * time.Minute)
	_ = b.Pause(ctx, origin, later)
	pausedUntil(a, later)
	// Over once the clock passes its end.
	if _, ok, _ := a.PausedUntil(ctx, origin, later); ok {
		t.Fatal("still paused at its end")
	}
	// Resume on one replica ends it for all.
	if err := a.Resume(ctx, origin); err != nil {
		t.Fatal(err)
	}
	pausedUntil(b, time.Time{})
	n, err := redisClient(t, srv).Exists(ctx, defaultPrefix+"pause:"+origin).Result()
	if err != nil || n != 0 {
		t.Fatalf("pause key after Resume: %d %v", n, err)
	}
}

// TestRedisOutageFallbackAndRecovery kills redis-server under running
// enforcement: decisions, pacing and pauses keep working locally, health
// reports the outage, and the restarted server is used again.
func TestRedisOutageFallbackAndRecovery(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	r := newTestRedis(t, srv, clock, func(o *Options) { o.L1TTL = -1; o.Timeout = 200 * time.Millisecond })
	e := newRedisEnforcer(t, r, clock)
	o := newRedisOrigin(t, redisTestRobots)
	o2 := newRedisOrigin(t, "User-agent: *\nDisallow: /two\n")
	c := redisClient(t, srv)
	ctx := context.Background()

	check := func(stage string, o *redisOrigin, path string, allowed bool) {
		t.Helper()
		if d := e.Decide(ctx, o.url(t, path), ""); d.Allowed != allowed || d.RobotsStatus != enforce.StatusOK {
			t.Fatalf("%s: %s: %+v", stage, path, d)
		}
	}
	check("redis up", o, "/private", false)
	if !r.Healthy() || r.Fallbacks() != 0 {
		t.Fatalf("healthy=%v fallbacks=%d before the outage", r.Healthy(), r.Fallbacks())
	}
	if _, ok, err := r.Pacer().Reserve(ctx, o.origin(t), time.Second, time.Minute); !ok || err != nil {
		t.Fatalf("reserve: %v %v", ok, err)
	}

	srv.Stop()
	// Every call keeps answering, from the local copy, whatever the
	// breaker's state; the first failure flips health.
	for i := range 20 {
		check(fmt.Sprintf("redis down, call %d", i), o, "/private", false)
		check(fmt.Sprintf("redis down, call %d", i), o, "/public", true)
	}
	redisWaitFor(t, "health to report the outage", func() bool { return !r.Healthy() })
	if r.Fallbacks() == 0 {
		t.Fatal("no fallbacks counted during the outage")
	}
	if got := o.robots.Load(); got != 1 {
		t.Fatalf("%d fetches of a cached origin during the outage, want 1", got)
	}
	// A new origin is fetched locally.
	check("redis down, new origin", o2, "/two", false)
	if got := o2.robots.Load(); got != 1 {
		t.Fatalf("%d fetches of the new origin, want 1", got)
	}
	// Pacing and pauses work locally.
	if _, ok, err := r.Pacer().Reserve(ctx, o.origin(t), time.Second, time.Minute); !ok || err != nil {
		t.Fatalf("reserve during outage: %v %v", ok, err)
	}
	if err := r.Pauses().Pause(ctx, o.origin(t), clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r.Pauses().PausedUntil(ctx, o.origin(t), clock.Now()); !ok || err != nil {
		t.Fatalf("local pause: %v %v", ok, err)
	}

	srv.Restart() // empty: no persistence
	redisWaitFor(t, "health to report the recovery", r.Healthy)
	// Redis answers again: the entry (lost with the restart) is fetched
	// once more, fleet-wide, and stored in Redis.
	check("redis back", o2, "/two", false)
	redisWaitFor(t, "the entry to reach the restarted Redis", func() bool {
		n, err := c.Exists(ctx, defaultPrefix+"robots:"+o2.origin(t)).Result()
		return err == nil && n == 1
	})
	// The pause recorded during the outage is not forgotten: this
	// replica still honours it, and it reaches Redis (another replica
	// sees it).
	pauseEnd := redisT0.Add(time.Minute)
	if u, ok, err := r.Pauses().PausedUntil(ctx, o.origin(t), clock.Now()); !ok || err != nil || !u.Equal(pauseEnd) {
		t.Fatalf("pause from the outage after recovery: %v %v %v, want until %v", u, ok, err, pauseEnd)
	}
	other := newTestRedis(t, srv, clock, nil).Pauses()
	redisWaitFor(t, "the outage's pause to reach the restarted Redis", func() bool {
		u, ok, err := other.PausedUntil(ctx, o.origin(t), clock.Now())
		return ok && err == nil && u.Equal(pauseEnd)
	})
	if _, ok, err := r.Pacer().Reserve(ctx, "http://after.test", time.Second, time.Minute); !ok || err != nil {
		t.Fatalf("reserve after recovery: %v %v", ok, err)
	}
	if n, err := c.Exists(ctx, defaultPrefix+"pace:http://after.test").Result(); err != nil || n != 1 {
		t.Fatalf("pacing not back in Redis: %d %v", n, err)
	}
}

// TestRedisSlowFallsBack: a Redis that stops answering (CLIENT PAUSE)
// makes calls run over their deadline; they are answered locally and
// Redis is used again when it answers.
func TestRedisSlowFallsBack(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	r := newTestRedis(t, srv, clock, func(o *Options) { o.L1TTL = -1; o.Timeout = 100 * time.Millisecond })
	e := newRedisEnforcer(t, r, clock)
	o := newRedisOrigin(t, redisTestRobots)
	ctx := context.Background()
	if d := e.Decide(ctx, o.url(t, "/private"), ""); d.Allowed {
		t.Fatalf("before: %+v", d)
	}
	if err := redisClient(t, srv).Do(ctx, "CLIENT", "PAUSE", 2000, "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	for i := range redisSlowTrips { // each Decide's lookup runs over its deadline
		if d := e.Decide(ctx, o.url(t, "/private"), ""); d.Allowed || d.RobotsStatus != enforce.StatusOK {
			t.Fatalf("slow redis, call %d: %+v", i, d)
		}
	}
	if r.Healthy() || r.Fallbacks() == 0 {
		t.Fatalf("slow redis: healthy=%v fallbacks=%d, want an outage with fallbacks", r.Healthy(), r.Fallbacks())
	}
	if got := o.robots.Load(); got != 1 {
		t.Fatalf("%d fetches, want 1 (the local copy answers)", got)
	}
	redisWaitFor(t, "redis to be used again after the pause", r.Healthy)
}

func TestRedisOnceFailsFastWhenDown(t *testing.T) {
	srv := redistest.Start(t)
	r := newTestRedis(t, srv, nil, func(o *Options) { o.RetryInterval = time.Hour })
	srv.Stop()
	ctx := context.Background()
	r.Store().Set(ctx, "http://x.test", &enforce.Entry{Origin: "http://x.test", Result: enforce.FetchResult{Status: enforce.StatusUnavailable}}, time.Hour)
	redisWaitFor(t, "health to report the outage", func() bool { return !r.Healthy() })
	calls := 0
	_, err := r.Store().Once(ctx, "http://x.test", func(context.Context, enforce.Store) *enforce.Entry { calls++; return nil })
	if err == nil || calls != 0 {
		t.Fatalf("Once while down: err %v, fetch ran %d times", err, calls)
	}
	// The local copy answers.
	if e, ok := r.Store().Get(ctx, "http://x.test"); !ok || e.Result.Status != enforce.StatusUnavailable {
		t.Fatalf("local fallback: %v %v", e, ok)
	}
}

func TestValidateRedisURL(t *testing.T) {
	for _, u := range []string{"redis://127.0.0.1:6379/0", "rediss://cache.internal:6380/2", "redis://:pw@127.0.0.1"} {
		if err := ValidateRedisURL(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"memory", "http://127.0.0.1:6379", "redis://", "redis://127.0.0.1/notadb", "unix:///tmp/r.sock", "redis://[::1"} {
		if err := ValidateRedisURL(u); err == nil {
			t.Errorf("%s: accepted", u)
		}
	}
	if err := ValidateRedisURL("redis://:s3cret@127.0.0.1/x"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error for a URL with a password: %v", err)
	}
	for in, want := range map[string]string{
		"memory":                           "memory",
		"redis://127.0.0.1:6379/0":         "redis://127.0.0.1:6379/0",
		"rediss://u:s3cret@cache:6380/1":   "rediss://u:xxxxx@cache:6380/1",
		"redis://:s3cret@127.0.0.1:6379/0": "redis://:xxxxx@127.0.0.1:6379/0",
	} {
		if got := RedactCacheURL(in); got != want {
			t.Errorf("RedactCacheURL(%q) = %q, want %q", in, got, want)
		}
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
		e.Decide(ctx, u, "")
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if d := e.Decide(ctx, u, ""); d.Allowed {
				b.Fatal("allowed")
			}
		}
	}
	b.Run("memory", func(b *testing.B) { run(b, newLocalStore()) })
	srv := redistest.Start(b)
	b.Run("redis-no-l1", func(b *testing.B) {
		run(b, newTestRedis(b, srv, nil, func(o *Options) { o.L1TTL = -1 }).Store())
	})
	b.Run("redis-l1", func(b *testing.B) {
		run(b, newTestRedis(b, srv, nil, nil).Store())
	})
}

// TestRedisOneSlowCallKeepsRedis: a single call over its deadline is
// answered locally but does not mark Redis down (which would switch the
// fleet to per-replica pacing); a success resets the count.
func TestRedisOneSlowCallKeepsRedis(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	r := newTestRedis(t, srv, clock, func(o *Options) { o.L1TTL = -1; o.Timeout = 100 * time.Millisecond })
	c := redisClient(t, srv)
	ctx := context.Background()
	const origin = "http://slow.test"
	for round := range 2 {
		// A pause longer than the timeout: the reservation times out.
		if err := c.Do(ctx, "CLIENT", "PAUSE", 400, "ALL").Err(); err != nil {
			t.Fatal(err)
		}
		before := r.Fallbacks()
		if _, ok, err := r.Pacer().Reserve(ctx, origin, time.Second, time.Minute); !ok || err != nil {
			t.Fatalf("round %d: slow reserve: %v %v", round, ok, err)
		}
		if r.Fallbacks() != before+1 {
			t.Fatalf("round %d: the slow call was not answered locally (fallbacks %d -> %d)", round, before, r.Fallbacks())
		}
		if !r.Healthy() {
			t.Fatalf("round %d: one slow call marked redis down", round)
		}
		// Redis answers again (the pause ends): success resets the count.
		redisWaitFor(t, "redis to answer", func() bool {
			return c.Do(ctx, "CLIENT", "UNPAUSE").Err() == nil
		})
		if !r.call(ctx, "ping", func(ctx context.Context) error { return r.client.Ping(ctx).Err() }) {
			t.Fatalf("round %d: redis call failed after the pause", round)
		}
	}
	if !r.Healthy() {
		t.Fatal("two slow calls separated by a success marked redis down")
	}
}

// TestRedisPacerSpacingAcrossOutage: the spacing holds when Redis goes
// away (the local pacer continues from the last Redis slot) and when it
// comes back empty (Redis continues from the last local slot).
func TestRedisPacerSpacingAcrossOutage(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	r := newTestRedis(t, srv, clock, nil)
	ctx := context.Background()
	const origin = "http://outage-paced.test"
	const delay = time.Second
	reserve := func(stage string, want time.Time) {
		t.Helper()
		at, ok, err := r.Pacer().Reserve(ctx, origin, delay, time.Minute)
		if err != nil || !ok || !at.Equal(want) {
			t.Fatalf("%s: slot %v %v %v, want %v", stage, at, ok, err, want)
		}
	}
	reserve("redis up", redisT0)
	srv.Stop()
	redisWaitFor(t, "health to report the outage", func() bool {
		r.Pacer().Reserve(ctx, "http://probe.test", 0, time.Minute)
		return !r.Healthy()
	})
	reserve("redis down", redisT0.Add(delay))
	srv.Restart() // empty
	redisWaitFor(t, "health to report the recovery", r.Healthy)
	reserve("redis back", redisT0.Add(2*delay))
	reserve("redis back, next", redisT0.Add(3*delay))
}

// TestRedisPauseStreakFleetWide: the backoff streak is the fleet's, an
// old 2xx seen by one replica does not end a newer pause set by another,
// and a 2xx sent after the pause ends it whichever replica sees it.
func TestRedisPauseStreakFleetWide(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	ctx := context.Background()
	const origin = "http://streak.test"
	var pols []*politeness.Politeness
	for range 3 {
		p, err := politeness.New(filledPoliteness(politeness.Config{Clock: clock, Pauses: newTestRedis(t, srv, clock, nil).Pauses(),
			BackoffStart: 30 * time.Second, BackoffMax: time.Hour}))
		if err != nil {
			t.Fatal(err)
		}
		pols = append(pols, p)
	}
	a, b, c := pols[0], pols[1], pols[2]
	pausedFor := func(p *politeness.Politeness, want time.Duration) {
		t.Helper()
		redisWaitFor(t, fmt.Sprintf("a pause of %v", want), func() bool {
			_, ref, _ := p.Admit(ctx, origin, 0)
			if want == 0 {
				return ref == nil
			}
			return ref != nil && ref.Reason == politeness.ReasonPaused && ref.RetryAfter == want
		})
	}

	if u, ok := a.Observe(ctx, origin, 503, "", clock.Now()); !ok || !u.Equal(clock.Now().Add(30*time.Second)) {
		t.Fatalf("first 503 on a: %v %v, want 30s", u, ok)
	}
	pausedFor(c, 30*time.Second)
	clock.Advance(30 * time.Second)
	// The second 503 of the streak, seen by another replica: 60s.
	bSince := clock.Now()
	if u, ok := b.Observe(ctx, origin, 503, "", clock.Now()); !ok || !u.Equal(clock.Now().Add(time.Minute)) {
		t.Fatalf("second 503 on b: %v %v, want 60s (fleet-wide streak)", u, ok)
	}
	pausedFor(c, time.Minute)
	// a's answer to a request sent before b's pause began ends nothing.
	clock.Advance(time.Second)
	a.Observe(ctx, origin, 200, "", bSince.Add(-10*time.Second))
	pausedFor(c, time.Minute-time.Second)
	// A 2xx sent after the pause began ends it, even on a replica that
	// never saw a 503.
	c.Observe(ctx, origin, 200, "", clock.Now())
	pausedFor(a, 0)
	pausedFor(b, 0)
	// The streak ended with it: the next 503 pauses for 30s again.
	if u, ok := a.Observe(ctx, origin, 429, "", clock.Now()); !ok || !u.Equal(clock.Now().Add(30*time.Second)) {
		t.Fatalf("503 after the 2xx: %v %v, want 30s", u, ok)
	}
	// The stored record carries since|until|streak.
	v, err := redisClient(t, srv).Get(ctx, defaultPrefix+"pause:"+origin).Result()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := parsePauseRec(v)
	if want := (pauseRec{clock.Now().UnixMilli(), clock.Now().Add(30 * time.Second).UnixMilli(), 1}); err != nil || rec != want {
		t.Fatalf("stored record %q = %+v %v, want %+v", v, rec, err, want)
	}
}

// TestRedisSetKeepsBetterEntry: Set never replaces a later entry, nor a
// good robots.txt with a failure that does not carry it as its good copy.
func TestRedisSetKeepsBetterEntry(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	a := newTestRedis(t, srv, clock, nil).Store()
	b := newTestRedis(t, srv, clock, nil).Store()
	c := redisClient(t, srv)
	ctx := context.Background()
	const origin = "http://cas.test"
	stored := func() *enforce.Entry {
		t.Helper()
		raw, err := c.Get(ctx, defaultPrefix+"robots:"+origin).Result()
		if err != nil {
			t.Fatal(err)
		}
		e, err := decodeRedisEntry([]byte(raw), 0)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	good := enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200, Body: []byte(redisTestRobots)}
	ok := &enforce.Entry{Origin: origin, Result: good, FetchedAt: redisT0.Add(time.Second), Expires: redisT0.Add(time.Hour)}
	a.Set(ctx, origin, ok, 2*time.Hour)

	// A failure fetched later, without the good copy (a replica that did
	// not see it): Redis keeps the good entry, and b reads it next.
	fail := &enforce.Entry{Origin: origin, Result: enforce.FetchResult{Status: enforce.StatusUnreachable, Err: "timeout"},
		FetchedAt: redisT0.Add(2 * time.Second), Expires: redisT0.Add(time.Minute), Failures: 1,
		UnreachableSince: redisT0.Add(2 * time.Second)}
	b.Set(ctx, origin, fail, 2*time.Hour)
	if e := stored(); e.Result.Status != enforce.StatusOK {
		t.Fatalf("a failure without the good copy replaced it: %+v", e.Result)
	}
	if e, found := b.Get(ctx, origin); !found || e.Result.Status != enforce.StatusOK {
		t.Fatalf("b after its rejected Set: %+v %v, want redis's good entry", e, found)
	}
	// An older entry never replaces a newer one.
	old := &enforce.Entry{Origin: origin, Result: enforce.FetchResult{Status: enforce.StatusUnavailable, HTTPStatus: 404},
		FetchedAt: redisT0, Expires: redisT0.Add(time.Hour)}
	b.Set(ctx, origin, old, 2*time.Hour)
	if e := stored(); e.Result.Status != enforce.StatusOK {
		t.Fatalf("an older entry replaced a newer one: %+v", e.Result)
	}
	// A failure that continues the good entry (carries it) is stored.
	cont := *fail
	cont.Good, cont.GoodAt = &good, ok.FetchedAt
	b.Set(ctx, origin, &cont, 2*time.Hour)
	if e := stored(); e.Result.Status != enforce.StatusUnreachable || e.Good == nil {
		t.Fatalf("the continuing failure was not stored: %+v", e)
	}
	// Another failure not building on it (as many failures) is not.
	other := *fail
	other.FetchedAt = redisT0.Add(3 * time.Second)
	a.Set(ctx, origin, &other, 2*time.Hour)
	if e := stored(); e.Good == nil {
		t.Fatal("a failure without the good copy replaced one holding it")
	}
	// A newer good entry always wins.
	ok2 := *ok
	ok2.FetchedAt = redisT0.Add(4 * time.Second)
	a.Set(ctx, origin, &ok2, 2*time.Hour)
	if e := stored(); e.Result.Status != enforce.StatusOK || !e.FetchedAt.Equal(ok2.FetchedAt) {
		t.Fatalf("newer good entry not stored: %+v", e)
	}
}

// TestRedisWaiterFallbackKeepsFleetEntry: a replica that gives up
// waiting for the lock holder fetches on a full budget of its own and
// never overwrites the holder's good entry in Redis with its failure.
func TestRedisWaiterFallbackKeepsFleetEntry(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	ctx := context.Background()
	holder := newTestRedis(t, srv, clock, nil).Store()
	var fetches atomic.Int64
	var originURL string
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		fetches.Add(1)
		// Meanwhile, the lock holder stores its good entry.
		good := &enforce.Entry{Origin: originURL, Result: enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200, Body: []byte(redisTestRobots)},
			FetchedAt: redisT0, Expires: redisT0.Add(time.Hour)}
		good.Rebuild(0)
		holder.Set(context.Background(), originURL, good, 2*time.Hour)
		// This fetch takes longer than the fifth of the fetch timeout
		// that a waiter used to have left (it must not time out).
		time.Sleep(400 * time.Millisecond)
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	t.Cleanup(o.Close)
	originURL = o.URL
	// The holder's lock, held throughout.
	if err := redisClient(t, srv).Set(ctx, defaultPrefix+"lock:"+originURL, "holder", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	r := newTestRedis(t, srv, clock, nil)
	var fetched atomic.Pointer[enforce.FetchResult]
	e, err := enforce.New(filledEnforce(enforce.Config{Fetcher: &enforce.HTTPFetcher{MaxRedirects: 5, Timeout: 5 * time.Second}, Store: r.Store(), Clock: clock,
		FetchTimeout: time.Second, Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.ErrorLevel),
		Hooks: enforce.Hooks{Fetched: func(_ string, r enforce.FetchResult, _ time.Duration) { fetched.Store(&r) }}}))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(originURL + "/public")
	d := e.Decide(ctx, u, "")
	if fetches.Load() != 1 {
		t.Fatalf("%d fetches, want 1 (the waiter's)", fetches.Load())
	}
	if !d.Allowed || d.RobotsStatus != enforce.StatusOK {
		t.Fatalf("waiter's decision: %+v; want the holder's good entry", d)
	}
	raw, err := redisClient(t, srv).Get(ctx, defaultPrefix+"robots:"+originURL).Result()
	if err != nil {
		t.Fatal(err)
	}
	if st, err := decodeRedisEntry([]byte(raw), 0); err != nil || st.Result.Status != enforce.StatusOK {
		t.Fatalf("redis entry after the waiter's fetch: %+v %v; want the holder's good one", st, err)
	}
	// The waiter's own fetch ran to its end (the origin's 503), not into a
	// timeout: it had a budget of its own.
	if f := fetched.Load(); f == nil || f.HTTPStatus != 503 {
		t.Fatalf("waiter's fetch result: %+v; want the origin's HTTP 503", f)
	}
}
