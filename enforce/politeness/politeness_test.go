package politeness

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/testsupport"
)

const origin = "http://a.test"

// done records the origin's answer to the permitted request (see
// Observe) and releases the permit, as the proxy does. retryAfter is the
// answer's Retry-After header ("" when absent). It returns what Observe
// returns.
func (pm *Permit) done(ctx context.Context, status int, retryAfter string) (time.Time, bool) {
	if pm == nil || pm.p == nil {
		return time.Time{}, false
	}
	defer pm.Release()
	return pm.p.Observe(ctx, pm.Origin, status, retryAfter, pm.Admitted)
}

func newPoliteness(t *testing.T, cfg Config) *Politeness {
	t.Helper()
	p, err := New(filled(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPolitePermitDone(t *testing.T) {
	ctx := context.Background()
	clk := enforcetest.NewClock(t0)
	p := newPoliteness(t, Config{Clock: clk, MaxConcurrency: 1, MaxWait: time.Second})
	pm, _, _ := p.Admit(ctx, origin, 0)
	if u, ok := pm.done(ctx, 429, "5"); !ok || !u.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("Done(429) = %v %v", u, ok)
	}
	pm.done(ctx, 200, "") // idempotent release; a 2xx after a Done is still observed
	pm.Release()
	var nilPermit *Permit
	nilPermit.Release()
	nilPermit.done(ctx, 200, "")
	clk.Advance(5 * time.Second)
	if pm, ref, _ := p.Admit(ctx, origin, 0); pm == nil || ref != nil {
		t.Fatalf("slot leaked by Done: %+v", ref)
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
	if refusals[0] != nil || refusals[1] != nil || refusals[2] == nil || refusals[2].Reason != ReasonCrawlDelayWait {
		t.Fatalf("report mode refusals = %+v", refusals)
	}
	p.Observe(ctx, origin, 503, "60", clk.Now())
	pm, ref, _ := p.Admit(ctx, origin, 0)
	if pm == nil || ref == nil || ref.Reason != ReasonOriginPaused {
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
			pm.done(ctx, 200, "")
		}
	})
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
	testsupport.WaitFor(t, "c waiting", func() bool { return clk.Waiters() == 1 })
	admitAsync(ctx, p, 4, 0, out)
	testsupport.WaitFor(t, "d waiting", func() bool { return clk.Waiters() == 2 })
	a.Release()
	c := <-out
	if c.i != 3 || c.pm == nil {
		t.Fatalf("slot went to %+v; want the first waiter", c)
	}
	a.Release() // idempotent: must not free a second slot
	clk.Advance(10 * time.Second)
	d := <-out
	if d.pm != nil || d.ref == nil || d.ref.Reason != ReasonCrawlDelayWait || d.ref.RetryAfter != time.Second {
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
	testsupport.WaitFor(t, "waiter", func() bool { return clk.Waiters() == 1 })
	cancel()
	if r := <-out; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled waiter: %+v", r)
	}
	a.Release()
	if pm, _, _ := p.Admit(context.Background(), origin, 0); pm == nil || pm.Waited != 0 {
		t.Fatal("slot lost after a cancelled waiter")
	}
}
