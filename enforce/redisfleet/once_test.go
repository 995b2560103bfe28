package redisfleet

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/redistest"
)

// TestRedisFleetSingleFetch: three replicas sharing one Redis, 64
// concurrent first requests spread over them, exactly one robots.txt
// fetch at the origin.
func TestRedisFleetSingleFetch(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	o := newRedisOrigin(t, redisTestRobots)
	c := redisClient(t, srv)
	lockKey := testKeys.lock(o.origin(t))

	// Hold the first fetch until its lock is visible in Redis and every
	// request has been started, so that the others really contend.
	release := make(chan struct{})
	var releaseOnce sync.Once
	open := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(open) // a failing test must not leave handlers blocked
	hit := func() { <-release }
	o.onHit.Store(&hit)

	const n = 64
	wait := decideOnReplicas(t, srv, clock, n, func(e *enforce.Enforcer, path string) enforce.Decision {
		return e.Decide(context.Background(), o.url(t, path), "", enforce.DecideOptions{})
	})
	redisWaitFor(t, "the fetch lock", func() bool {
		n, err := c.Exists(context.Background(), lockKey).Result()
		return err == nil && n == 1
	})
	open()
	results := wait()

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
	lockKey := testKeys.lock(o.origin(t))
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
			if d := es[i%2].Decide(ctx, o.url(t, "/private"), "", enforce.DecideOptions{}); d.Allowed || d.RobotsStatus != enforce.StatusOK {
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

func TestRedisOnceFailsFastWhenDown(t *testing.T) {
	srv := redistest.Start(t)
	r := newTestRedis(t, srv, nil, func(o *Options) { o.RetryInterval = time.Hour })
	srv.Stop()
	ctx := context.Background()
	r.store.Set(ctx, robotsKey("http://x.test"), &enforce.Entry{Key: robotsKey("http://x.test"), Result: enforce.FetchResult{Status: enforce.StatusUnavailable}}, time.Hour)
	redisWaitFor(t, "health to report the outage", func() bool { return !r.Healthy() })
	calls := 0
	_, err := r.store.Once(ctx, robotsKey("http://x.test"), func(context.Context, enforce.Store) *enforce.Entry { calls++; return nil })
	if err == nil || calls != 0 {
		t.Fatalf("Once while down: err %v, fetch ran %d times", err, calls)
	}
	// The local copy answers.
	if e, ok := r.store.Get(ctx, robotsKey("http://x.test")); !ok || e.Result.Status != enforce.StatusUnavailable {
		t.Fatalf("local fallback: %v %v", e, ok)
	}
}

// TestRedisWaiterFallbackKeepsFleetEntry: a replica that gives up
// waiting for the lock holder fetches on a full budget of its own and
// never overwrites the holder's good entry in Redis with its failure.
func TestRedisWaiterFallbackKeepsFleetEntry(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	ctx := context.Background()
	holder := newTestRedis(t, srv, clock, nil).store
	var fetches atomic.Int64
	var originURL string
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		fetches.Add(1)
		// Meanwhile, the lock holder stores its good entry.
		good := &enforce.Entry{Key: robotsKey(originURL), Result: enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200, Body: []byte(redisTestRobots)},
			FetchedAt: redisT0, Expires: redisT0.Add(time.Hour)}
		good.Rebuild(0)
		holder.Set(context.Background(), good.Key, good, 2*time.Hour)
		// This fetch takes longer than the fifth of the fetch timeout
		// that a waiter used to have left (it must not time out).
		time.Sleep(400 * time.Millisecond)
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	t.Cleanup(o.Close)
	originURL = o.URL
	// The holder's lock, held throughout.
	if err := redisClient(t, srv).Set(ctx, testKeys.lock(originURL), "holder", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	r := newTestRedis(t, srv, clock, nil)
	var fetched atomic.Pointer[enforce.FetchResult]
	e, err := enforce.New(filledEnforce(enforce.Config{Fetcher: &enforce.HTTPFetcher{MaxRedirects: 5, Timeout: 5 * time.Second}, Store: r.store, Clock: clock,
		FetchTimeout: time.Second, Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.ErrorLevel),
		Hooks: enforce.Hooks{Fetched: func(_ string, r enforce.FetchResult, _ time.Duration) { fetched.Store(&r) }}}))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(originURL + "/public")
	d := e.Decide(ctx, u, "", enforce.DecideOptions{})
	if fetches.Load() != 1 {
		t.Fatalf("%d fetches, want 1 (the waiter's)", fetches.Load())
	}
	if !d.Allowed || d.RobotsStatus != enforce.StatusOK {
		t.Fatalf("waiter's decision: %+v; want the holder's good entry", d)
	}
	raw, err := redisClient(t, srv).Get(ctx, testKeys.robots(originURL)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if st, err := decodeRedisEntry([]byte(raw), robotsKey(originURL), 0); err != nil || st.Result.Status != enforce.StatusOK {
		t.Fatalf("redis entry after the waiter's fetch: %+v %v; want the holder's good one", st, err)
	}
	// The waiter's own fetch ran to its end (the origin's 503), not into a
	// timeout: it had a budget of its own.
	if f := fetched.Load(); f == nil || f.HTTPStatus != 503 {
		t.Fatalf("waiter's fetch result: %+v; want the origin's HTTP 503", f)
	}
}
