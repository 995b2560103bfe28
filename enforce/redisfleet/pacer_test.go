package redisfleet

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/redistest"
)

// TestRedisPacerAcrossInstances: reservations from three RedisPacers
// interleave with exact crawl-delay spacing on a shared fake clock.
func TestRedisPacerAcrossInstances(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	var ps []*redisPacer
	for range 3 {
		ps = append(ps, newTestRedis(t, srv, clock, nil).pacer)
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
		at, ok, err := r.pacer.Reserve(ctx, origin, delay, time.Minute)
		if err != nil || !ok || !at.Equal(want) {
			t.Fatalf("%s: slot %v %v %v, want %v", stage, at, ok, err, want)
		}
	}
	reserve("redis up", redisT0)
	srv.Stop()
	redisWaitFor(t, "health to report the outage", func() bool {
		r.pacer.Reserve(ctx, "http://probe.test", 0, time.Minute)
		return !r.Healthy()
	})
	reserve("redis down", redisT0.Add(delay))
	srv.Restart() // empty
	redisWaitFor(t, "health to report the recovery", r.Healthy)
	reserve("redis back", redisT0.Add(2*delay))
	reserve("redis back, next", redisT0.Add(3*delay))
}
