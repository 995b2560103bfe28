package redisfleet

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/redistest"
)

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
		if d := e.Decide(ctx, o.url(t, path), "", enforce.DecideOptions{}); d.Allowed != allowed || d.RobotsStatus != enforce.StatusOK {
			t.Fatalf("%s: %s: %+v", stage, path, d)
		}
	}
	check("redis up", o, "/private", false)
	if !r.Healthy() || r.Fallbacks() != 0 {
		t.Fatalf("healthy=%v fallbacks=%d before the outage", r.Healthy(), r.Fallbacks())
	}
	if _, ok, err := r.pacer.Reserve(ctx, o.origin(t), time.Second, time.Minute); !ok || err != nil {
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
	if _, ok, err := r.pacer.Reserve(ctx, o.origin(t), time.Second, time.Minute); !ok || err != nil {
		t.Fatalf("reserve during outage: %v %v", ok, err)
	}
	if err := r.pauses.Pause(ctx, o.origin(t), clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r.pauses.PausedUntil(ctx, o.origin(t), clock.Now()); !ok || err != nil {
		t.Fatalf("local pause: %v %v", ok, err)
	}

	srv.Restart() // empty: no persistence
	redisWaitFor(t, "health to report the recovery", r.Healthy)
	// Redis answers again: the entry (lost with the restart) is fetched
	// once more, fleet-wide, and stored in Redis.
	check("redis back", o2, "/two", false)
	redisWaitFor(t, "the entry to reach the restarted Redis", func() bool {
		n, err := c.Exists(ctx, testKeys.robots(o2.origin(t))).Result()
		return err == nil && n == 1
	})
	// The pause recorded during the outage is not forgotten: this
	// replica still honours it, and it reaches Redis (another replica
	// sees it).
	pauseEnd := redisT0.Add(time.Minute)
	if u, ok, err := r.pauses.PausedUntil(ctx, o.origin(t), clock.Now()); !ok || err != nil || !u.Equal(pauseEnd) {
		t.Fatalf("pause from the outage after recovery: %v %v %v, want until %v", u, ok, err, pauseEnd)
	}
	other := newTestRedis(t, srv, clock, nil).pauses
	redisWaitFor(t, "the outage's pause to reach the restarted Redis", func() bool {
		u, ok, err := other.PausedUntil(ctx, o.origin(t), clock.Now())
		return ok && err == nil && u.Equal(pauseEnd)
	})
	if _, ok, err := r.pacer.Reserve(ctx, "http://after.test", time.Second, time.Minute); !ok || err != nil {
		t.Fatalf("reserve after recovery: %v %v", ok, err)
	}
	if n, err := c.Exists(ctx, testKeys.pace("http://after.test")).Result(); err != nil || n != 1 {
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
	if d := e.Decide(ctx, o.url(t, "/private"), "", enforce.DecideOptions{}); d.Allowed {
		t.Fatalf("before: %+v", d)
	}
	if err := redisClient(t, srv).Do(ctx, "CLIENT", "PAUSE", 2000, "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	for i := range redisSlowTrips { // each Decide's lookup runs over its deadline
		if d := e.Decide(ctx, o.url(t, "/private"), "", enforce.DecideOptions{}); d.Allowed || d.RobotsStatus != enforce.StatusOK {
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
		if _, ok, err := r.pacer.Reserve(ctx, origin, time.Second, time.Minute); !ok || err != nil {
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
