package redisfleet

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/internal/redistest"
)

func TestRedisPauses(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	a := newTestRedis(t, srv, clock, nil).pauses
	b := newTestRedis(t, srv, clock, nil).pauses
	ctx := context.Background()
	const origin = "http://paused.test"

	// pausedUntil polls p until it reports want (replicas learn of
	// another's change through a published message: asynchronously).
	pausedUntil := func(p *redisPauses, want time.Time) {
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
	n, err := redisClient(t, srv).Exists(ctx, testKeys.pause(origin)).Result()
	if err != nil || n != 0 {
		t.Fatalf("pause key after Resume: %d %v", n, err)
	}
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
		p, err := politeness.New(filledPoliteness(politeness.Config{Clock: clock, Pauses: newTestRedis(t, srv, clock, nil).pauses,
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
	v, err := redisClient(t, srv).Get(ctx, testKeys.pause(origin)).Result()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := parsePauseRec(v)
	if want := (pauseRec{clock.Now().UnixMilli(), clock.Now().Add(30 * time.Second).UnixMilli(), 1}); err != nil || rec != want {
		t.Fatalf("stored record %q = %+v %v, want %+v", v, rec, err, want)
	}
}
