package politeness

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
)

const origin = "http://a.test"

func newPoliteness(t *testing.T, cfg Config) *Politeness {
	t.Helper()
	p, err := New(filled(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitFor polls cond until it holds; it synchronises with goroutines that
// block on the fake clock and asserts nothing about timing.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

type admitted struct {
	i   int
	pm  *Permit
	ref *Refusal
	err error
}

func admitAsync(ctx context.Context, p *Politeness, i int, delay time.Duration, out chan<- admitted) {
	go func() {
		pm, ref, err := p.Admit(ctx, origin, delay)
		out <- admitted{i, pm, ref, err}
	}()
}

func TestPacePolitenessFIFO(t *testing.T) {
	clk := enforcetest.NewClock(t0)
	p := newPoliteness(t, Config{Clock: clk, MaxWait: time.Minute})
	const n, d = 6, 10 * time.Second
	out := make(chan admitted, n)
	var first admitted
	for i := range n {
		admitAsync(context.Background(), p, i, d, out)
		if i == 0 {
			first = <-out // admitted at once, before the others arrive
			continue
		}
		waitFor(t, "waiter", func() bool { return clk.Waiters() == i })
	}
	for i := range n {
		var a admitted
		if i == 0 {
			a = first
		} else {
			clk.Advance(d)
			a = <-out
		}
		if a.err != nil || a.ref != nil || a.pm == nil {
			t.Fatalf("request %d: %+v", i, a)
		}
		if a.i != i {
			t.Fatalf("release %d went to request %d: not FIFO", i, a.i)
		}
		want := t0.Add(time.Duration(i) * d)
		if !a.pm.Admitted.Equal(want) || a.pm.Waited != time.Duration(i)*d || a.pm.Delay != d {
			t.Fatalf("request %d admitted at %v after %v (delay %v); want %v", i, a.pm.Admitted, a.pm.Waited, a.pm.Delay, want)
		}
		a.pm.Release()
	}
	select {
	case a := <-out:
		t.Fatalf("extra release: %+v", a)
	default:
	}
}

func TestPaceQueueFullAndCancel(t *testing.T) {
	clk := enforcetest.NewClock(t0)
	p := newPoliteness(t, Config{Clock: clk, MaxWait: 25 * time.Second})
	const d = 10 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan admitted, 3)
	if pm, ref, err := p.Admit(ctx, origin, d); pm == nil || ref != nil || err != nil {
		t.Fatalf("first request: %v %v %v", pm, ref, err)
	}
	admitAsync(ctx, p, 1, d, out) // slot t0+10s
	waitFor(t, "waiter 1", func() bool { return clk.Waiters() == 1 })
	admitAsync(ctx, p, 2, d, out) // slot t0+20s
	waitFor(t, "waiter 2", func() bool { return clk.Waiters() == 2 })

	// The next slot, t0+30s, is more than 25s away.
	pm, ref, err := p.Admit(context.Background(), origin, d)
	if pm != nil || err != nil || ref == nil {
		t.Fatalf("overflow: %v %v %v; want a refusal", pm, ref, err)
	}
	if ref.Reason != ReasonQueueFull || ref.RetryAfter != 30*time.Second || ref.Detail == "" {
		t.Fatalf("refusal = %+v; want crawl-delay-wait, retry after 30s", ref)
	}

	// Cancelled waiters return ctx.Err() and keep their slots: the next
	// request after them still starts at t0+30s, not earlier.
	cancel()
	for range 2 {
		if a := <-out; !errors.Is(a.err, context.Canceled) || a.pm != nil || a.ref != nil {
			t.Fatalf("cancelled waiter: %+v", a)
		}
	}
	clk.Advance(6 * time.Second)
	admitAsync(context.Background(), p, 3, d, out)
	waitFor(t, "waiter 3", func() bool { return clk.Waiters() == 3 }) // 2 abandoned After channels + 1
	clk.Advance(23 * time.Second)
	select {
	case a := <-out:
		t.Fatalf("released before its slot: %+v", a)
	default:
	}
	clk.Advance(time.Second)
	if a := <-out; a.pm == nil || !a.pm.Admitted.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("after cancelled waiters: %+v", a)
	}
}

func TestPaceDelayClampDefaultIgnore(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		crawl time.Duration
		want  time.Duration
	}{
		{"crawl-delay", Config{}, 5 * time.Second, 5 * time.Second},
		{"none", Config{}, 0, 0},
		{"clamped to default max", Config{}, 2 * time.Hour, testMaxDelay},
		{"clamped", Config{MaxDelay: 20 * time.Second}, time.Minute, 20 * time.Second},
		{"default delay", Config{DefaultDelay: 3 * time.Second}, 0, 3 * time.Second},
		{"stated beats default", Config{DefaultDelay: 3 * time.Second}, time.Second, time.Second},
		{"default clamped", Config{DefaultDelay: time.Minute, MaxDelay: 2 * time.Second}, 0, 2 * time.Second},
		{"ignore", Config{IgnoreCrawlDelay: true}, 5 * time.Second, 0},
		{"ignore uses default", Config{IgnoreCrawlDelay: true, DefaultDelay: time.Second}, 5 * time.Second, time.Second},
		{"negative", Config{}, -time.Second, 0},
	}
	for _, tt := range tests {
		if got := newPoliteness(t, tt.cfg).Delay(tt.crawl); got != tt.want {
			t.Errorf("%s: Delay(%v) = %v, want %v", tt.name, tt.crawl, got, tt.want)
		}
	}
}

// TestPaceClampAdmit checks that Admit spaces by the clamped delay.
func TestPaceClampAdmit(t *testing.T) {
	clk := enforcetest.NewClock(t0)
	p := newPoliteness(t, Config{Clock: clk, MaxDelay: time.Minute, MaxWait: 5 * time.Minute})
	if pm, _, _ := p.Admit(context.Background(), origin, 2*time.Hour); pm == nil || pm.Delay != time.Minute {
		t.Fatalf("first: %+v", pm)
	}
	out := make(chan admitted, 1)
	admitAsync(context.Background(), p, 1, 2*time.Hour, out)
	waitFor(t, "waiter", func() bool { return clk.Waiters() == 1 })
	clk.Advance(time.Minute)
	if a := <-out; a.pm == nil || !a.pm.Admitted.Equal(t0.Add(time.Minute)) {
		t.Fatalf("second: %+v", a)
	}
}

func TestPaceIgnoreDoesNotWait(t *testing.T) {
	clk := enforcetest.NewClock(t0)
	p := newPoliteness(t, Config{Clock: clk, IgnoreCrawlDelay: true})
	for i := range 3 {
		pm, ref, err := p.Admit(context.Background(), origin, time.Minute)
		if pm == nil || ref != nil || err != nil || pm.Waited != 0 || pm.Delay != 0 {
			t.Fatalf("request %d: %+v %v %v", i, pm, ref, err)
		}
	}
}

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
		if pm != nil || ref == nil || ref.Reason != ReasonPaused || ref.RetryAfter != want {
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

func TestPolitePermitDone(t *testing.T) {
	ctx := context.Background()
	clk := enforcetest.NewClock(t0)
	p := newPoliteness(t, Config{Clock: clk, MaxConcurrency: 1, MaxWait: time.Second})
	pm, _, _ := p.Admit(ctx, origin, 0)
	if u, ok := pm.Done(ctx, 429, "5"); !ok || !u.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("Done(429) = %v %v", u, ok)
	}
	pm.Done(ctx, 200, "") // idempotent release; a 2xx after a Done is still observed
	pm.Release()
	var nilPermit *Permit
	nilPermit.Release()
	nilPermit.Done(ctx, 200, "")
	clk.Advance(5 * time.Second)
	if pm, ref, _ := p.Admit(ctx, origin, 0); pm == nil || ref != nil {
		t.Fatalf("slot leaked by Done: %+v", ref)
	}
}

func TestPoliteConcurrencyLimit(t *testing.T) {
	ctx := context.Background()
	clk := enforcetest.NewClock(t0)
	p := newPoliteness(t, Config{Clock: clk, MaxConcurrency: 2, MaxWait: 10 * time.Second})
	a, _, _ := p.Admit(ctx, origin, 0)
	b, _, _ := p.Admit(ctx, origin, 0)
	if a == nil || b == nil {
		t.Fatal("first two not admitted")
	}
	if pm, _, _ := p.Admit(ctx, "http://other.test", 0); pm == nil {
		t.Fatal("limit is not per origin")
	}
	out := make(chan admitted, 3)
	admitAsync(ctx, p, 3, 0, out)
	waitFor(t, "c waiting", func() bool { return clk.Waiters() == 1 })
	admitAsync(ctx, p, 4, 0, out)
	waitFor(t, "d waiting", func() bool { return clk.Waiters() == 2 })
	a.Release()
	c := <-out
	if c.i != 3 || c.pm == nil {
		t.Fatalf("slot went to %+v; want the first waiter", c)
	}
	a.Release() // idempotent: must not free a second slot
	clk.Advance(10 * time.Second)
	d := <-out
	if d.pm != nil || d.ref == nil || d.ref.Reason != ReasonQueueFull || d.ref.RetryAfter != time.Second {
		t.Fatalf("d = %+v; want refused after waiting 10s", d)
	}
	b.Release()
	c.pm.Release()
	for i := range 2 {
		if pm, _, _ := p.Admit(ctx, origin, 0); pm == nil || pm.Waited != 0 {
			t.Fatalf("after release %d: %+v", i, pm)
		}
	}
}

func TestPoliteConcurrencyCancel(t *testing.T) {
	clk := enforcetest.NewClock(t0)
	p := newPoliteness(t, Config{Clock: clk, MaxConcurrency: 1})
	a, _, _ := p.Admit(context.Background(), origin, 0)
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan admitted, 1)
	admitAsync(ctx, p, 1, 0, out)
	waitFor(t, "waiter", func() bool { return clk.Waiters() == 1 })
	cancel()
	if r := <-out; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled waiter: %+v", r)
	}
	a.Release()
	if pm, _, _ := p.Admit(context.Background(), origin, 0); pm == nil || pm.Waited != 0 {
		t.Fatal("slot lost after a cancelled waiter")
	}
}

func TestPoliteReportMode(t *testing.T) {
	ctx := context.Background()
	clk := enforcetest.NewClock(t0)
	p := newPoliteness(t, Config{Clock: clk, Report: true, MaxWait: 15 * time.Second, MaxConcurrency: 1})
	var refusals []*Refusal
	for i := range 3 {
		pm, ref, err := p.Admit(ctx, origin, 10*time.Second)
		if pm == nil || err != nil || pm.Waited != 0 {
			t.Fatalf("report mode request %d: %+v %v", i, pm, err)
		}
		refusals = append(refusals, ref)
	}
	if clk.Waiters() != 0 {
		t.Fatal("report mode waited on the clock")
	}
	// Slots t0 and t0+10s fit, t0+20s would not.
	if refusals[0] != nil || refusals[1] != nil || refusals[2] == nil || refusals[2].Reason != ReasonQueueFull {
		t.Fatalf("report mode refusals = %+v", refusals)
	}
	p.Observe(ctx, origin, 503, "60", clk.Now())
	pm, ref, _ := p.Admit(ctx, origin, 0)
	if pm == nil || ref == nil || ref.Reason != ReasonPaused {
		t.Fatalf("report mode on a paused origin: %+v %+v", pm, ref)
	}
}

type failingPacer struct{}

func (failingPacer) Reserve(context.Context, string, time.Duration, time.Duration) (time.Time, bool, error) {
	return time.Time{}, false, errors.New("redis down")
}

type failingPauses struct{}

func (failingPauses) Pause(context.Context, string, time.Time) error { return errors.New("redis down") }
func (failingPauses) PausedUntil(context.Context, string, time.Time) (time.Time, bool, error) {
	return time.Time{}, false, errors.New("redis down")
}
func (failingPauses) Resume(context.Context, string) error { return errors.New("redis down") }
func (failingPauses) Backoff(context.Context, string, time.Time, time.Duration, BackoffPolicy) (time.Time, bool, error) {
	return time.Time{}, false, errors.New("redis down")
}
func (failingPauses) ResumeSent(context.Context, string, time.Time) error {
	return errors.New("redis down")
}

func TestPoliteBackendErrorsFailOpen(t *testing.T) {
	ctx := context.Background()
	clk := enforcetest.NewClock(t0)
	p := newPoliteness(t, Config{Clock: clk, Pacer: failingPacer{}, Pauses: failingPauses{}})
	p.Observe(ctx, origin, 503, "", t0)
	for range 2 {
		if pm, ref, err := p.Admit(ctx, origin, 10*time.Second); pm == nil || ref != nil || err != nil {
			t.Fatalf("backend failure not failing open: %+v %+v %v", pm, ref, err)
		}
	}
}

func TestPoliteConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{MaxWait: -1}, {MaxDelay: -1}, {DefaultDelay: -1}, {BackoffStart: -1}, {BackoffMax: -1}, {MaxConcurrency: -1},
	} {
		if _, err := New(filled(cfg)); err == nil {
			t.Errorf("NewPoliteness(%+v) accepted", cfg)
		}
	}
}

// BenchmarkPoliteAdmit measures the per-request cost of the politeness
// step for an origin with no crawl-delay and no pause (the common case),
// with in-memory state.
func BenchmarkPoliteAdmit(b *testing.B) {
	p, _ := New(filled(Config{}))
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			pm, _, _ := p.Admit(ctx, origin, 0)
			pm.Done(ctx, 200, "")
		}
	})
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
		waitFor(t, "waiter", func() bool { return clk.Waiters() == i })
	}
	sent := 1 // the first request reached the origin
	if _, ok := first.Done(ctx, 503, "600"); !ok {
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
		if a.err != nil || a.ref == nil || a.ref.Reason != ReasonPaused || a.ref.RetryAfter != 600*time.Second-2*d {
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
	waitFor(t, "waiter", func() bool { return clk.Waiters() == 1 })
	first.Done(ctx, 429, "60")
	a := <-out
	if a.pm != nil || a.ref == nil || a.ref.Reason != ReasonPaused {
		t.Fatalf("waiter: %+v %+v %v; want refused as paused", a.pm, a.ref, a.err)
	}
	// Its slot was given back.
	clk.Advance(time.Minute)
	if pm, ref, _ := p.Admit(ctx, origin, 0); pm == nil || ref != nil {
		t.Fatalf("after the pause: %+v", ref)
	}
}
