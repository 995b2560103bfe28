package politeness

import (
	"context"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/testsupport"
)

func TestPauseBackoffDoublingAndCap(t *testing.T) {
	ctx := context.Background()
	clk := enforcetest.NewClock(t0)
	p := newPoliteness(t, Config{Clock: clk, BackoffStart: 30 * time.Second, BackoffMax: 100 * time.Second})
	for i, want := range []time.Duration{30 * time.Second, 60 * time.Second, 100 * time.Second, 100 * time.Second} {
		now := clk.Now()
		status := 503
		if i%2 == 1 {
			status = 429
		}
		until, ok := p.Observe(ctx, origin, status, "", now)
		if !ok || !until.Equal(now.Add(want)) {
			t.Fatalf("failure %d: paused until %v (%v), want %v", i+1, until, ok, now.Add(want))
		}
		pm, ref, _ := p.Admit(ctx, origin, 0)
		if pm != nil || ref == nil || ref.Reason != ReasonOriginPaused || ref.RetryAfter != want {
			t.Fatalf("failure %d: Admit = %+v %+v; want paused, retry after %v", i+1, pm, ref, want)
		}
		clk.Advance(want - time.Second)
		if _, ref, _ := p.Admit(ctx, origin, 0); ref == nil || ref.RetryAfter != time.Second {
			t.Fatalf("failure %d: 1s before the end: %+v", i+1, ref)
		}
		clk.Advance(time.Second)
		pm, ref, _ = p.Admit(ctx, origin, 0)
		if pm == nil || ref != nil {
			t.Fatalf("failure %d: not admitted after the pause: %+v", i+1, ref)
		}
		pm.Release()
	}
}

func TestPauseInFlightAnswersDoNotDouble(t *testing.T) {
	ctx := context.Background()
	clk := enforcetest.NewClock(t0)
	p := newPoliteness(t, Config{Clock: clk, BackoffStart: 30 * time.Second})
	p.Observe(ctx, origin, 503, "", t0)
	clk.Advance(time.Second)
	// A second 503 from a request sent before the pause: the streak does
	// not grow (30s from now, not 60s).
	until, _ := p.Observe(ctx, origin, 503, "", t0)
	if want := t0.Add(31 * time.Second); !until.Equal(want) {
		t.Fatalf("in-flight 503 paused until %v, want %v", until, want)
	}
}

func TestPauseRetryAfter(t *testing.T) {
	tests := []struct {
		name, ra string
		want     time.Duration
	}{
		{"seconds", "120", 120 * time.Second},
		{"date", "Sun, 22 Nov 2026 12:10:00 GMT", 10 * time.Minute},
		{"huge clamped", "999999999", time.Hour},
		{"far date clamped", "Fri, 01 Jan 2100 00:00:00 GMT", time.Hour},
		{"garbage: backoff", "later", 30 * time.Second},
		{"zero: backoff", "0", 30 * time.Second},
		{"negative: backoff", "-10", 30 * time.Second},
		{"past date: backoff", "Sun, 22 Nov 2026 11:00:00 GMT", 30 * time.Second},
	}
	for _, tt := range tests {
		clk := enforcetest.NewClock(t0)
		p := newPoliteness(t, Config{Clock: clk})
		until, ok := p.Observe(context.Background(), origin, 503, tt.ra, t0)
		if !ok || !until.Equal(t0.Add(tt.want)) {
			t.Errorf("%s: Retry-After %q paused until %v, want %v", tt.name, tt.ra, until, t0.Add(tt.want))
		}
	}
}

func TestPause2xxEndsPause(t *testing.T) {
	ctx := context.Background()
	clk := enforcetest.NewClock(t0)
	pauses := NewMemoryPauses()
	p := newPoliteness(t, Config{Clock: clk, Pauses: pauses, BackoffStart: 30 * time.Second})

	p.Observe(ctx, origin, 503, "", t0)
	clk.Advance(time.Second)
	// A 2xx to a request sent before the pause says nothing new.
	p.Observe(ctx, origin, 200, "", t0.Add(-time.Second))
	if _, ok, _ := pauses.PausedUntil(ctx, origin, clk.Now()); !ok {
		t.Fatal("a 2xx sent before the pause ended it")
	}
	// Other statuses change nothing.
	for _, s := range []int{301, 404, 500, 502} {
		p.Observe(ctx, origin, s, "", clk.Now())
	}
	if _, ok, _ := pauses.PausedUntil(ctx, origin, clk.Now()); !ok {
		t.Fatal("a non-2xx ended the pause")
	}
	clk.Advance(30 * time.Second)
	p.Observe(ctx, origin, 503, "", clk.Now()) // second failure: 60s
	if u, _, _ := pauses.PausedUntil(ctx, origin, clk.Now()); !u.Equal(clk.Now().Add(time.Minute)) {
		t.Fatalf("second failure paused until %v", u)
	}
	clk.Advance(time.Second)
	p.Observe(ctx, origin, 204, "", clk.Now())
	if _, ok, _ := pauses.PausedUntil(ctx, origin, clk.Now()); ok {
		t.Fatal("a 2xx did not end the pause")
	}
	if pm, ref, _ := p.Admit(ctx, origin, 0); pm == nil || ref != nil {
		t.Fatalf("not admitted after a 2xx: %+v", ref)
	}
	// The streak was reset: the next failure starts at 30s again.
	if u, _ := p.Observe(ctx, origin, 503, "", clk.Now()); !u.Equal(clk.Now().Add(30 * time.Second)) {
		t.Fatalf("after reset paused until %v", u)
	}
}

// TestPauseQueuedRequestsRefusedAfterPause: requests queued for their
// crawl-delay slots are not sent once a request ahead of them was
// answered 503: the origin sees only that first request.
func TestPauseQueuedRequestsRefusedAfterPause(t *testing.T) {
	ctx := context.Background()
	clk := enforcetest.NewClock(t0)
	p := newPoliteness(t, Config{Clock: clk, MaxWait: time.Minute})
	const d = time.Second
	first, ref, err := p.Admit(ctx, origin, d)
	if first == nil || ref != nil || err != nil {
		t.Fatalf("first request: %v %v %v", first, ref, err)
	}
	out := make(chan admitted, 2)
	for i := 1; i <= 2; i++ {
		admitAsync(ctx, p, i, d, out)
		testsupport.WaitFor(t, "waiter", func() bool { return clk.Waiters() == i })
	}
	sent := 1 // the first request reached the origin
	if _, ok := first.done(ctx, 503, "600"); !ok {
		t.Fatal("503 did not pause the origin")
	}
	clk.Advance(2 * d)
	for range 2 {
		a := <-out
		if a.pm != nil {
			sent++
			a.pm.Release()
			continue
		}
		if a.err != nil || a.ref == nil || a.ref.Reason != ReasonOriginPaused || a.ref.RetryAfter != 600*time.Second-2*d {
			t.Fatalf("queued request %d: %+v %+v %v; want refused as paused", a.i, a.pm, a.ref, a.err)
		}
	}
	if sent != 1 {
		t.Fatalf("the paused origin was sent %d requests, want 1", sent)
	}
}

// TestPauseConcurrencyWaiterRefusedAfterPause: a request waiting for a
// concurrency slot is refused when it gets one after the origin paused.
func TestPauseConcurrencyWaiterRefusedAfterPause(t *testing.T) {
	ctx := context.Background()
	clk := enforcetest.NewClock(t0)
	p := newPoliteness(t, Config{Clock: clk, MaxConcurrency: 1, MaxWait: time.Minute})
	first, _, _ := p.Admit(ctx, origin, 0)
	if first == nil {
		t.Fatal("first request refused")
	}
	out := make(chan admitted, 1)
	admitAsync(ctx, p, 1, 0, out)
	testsupport.WaitFor(t, "waiter", func() bool { return clk.Waiters() == 1 })
	first.done(ctx, 429, "60")
	a := <-out
	if a.pm != nil || a.ref == nil || a.ref.Reason != ReasonOriginPaused {
		t.Fatalf("waiter: %+v %+v %v; want refused as paused", a.pm, a.ref, a.err)
	}
	// Its slot was given back.
	clk.Advance(time.Minute)
	if pm, ref, _ := p.Admit(ctx, origin, 0); pm == nil || ref != nil {
		t.Fatalf("after the pause: %+v", ref)
	}
}
