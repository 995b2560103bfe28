package politeness

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/testsupport"
)

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
