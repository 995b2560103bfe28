package politeness

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/testsupport"
)

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
		testsupport.WaitFor(t, "waiter", func() bool { return clk.Waiters() == i })
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
	testsupport.WaitFor(t, "waiter 1", func() bool { return clk.Waiters() == 1 })
	admitAsync(ctx, p, 2, d, out) // slot t0+20s
	testsupport.WaitFor(t, "waiter 2", func() bool { return clk.Waiters() == 2 })

	// The next slot, t0+30s, is more than 25s away.
	pm, ref, err := p.Admit(context.Background(), origin, d)
	if pm != nil || err != nil || ref == nil {
		t.Fatalf("overflow: %v %v %v; want a refusal", pm, ref, err)
	}
	if ref.Reason != ReasonCrawlDelayWait || ref.RetryAfter != 30*time.Second || ref.Detail == "" {
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
	testsupport.WaitFor(t, "waiter 3", func() bool { return clk.Waiters() == 3 }) // 2 abandoned After channels + 1
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
	testsupport.WaitFor(t, "waiter", func() bool { return clk.Waiters() == 1 })
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
