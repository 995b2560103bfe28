package politeness

import (
	"context"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestPacerSlots(t *testing.T) {
	ctx := context.Background()
	clk := enforcetest.NewClock(t0)
	p := NewMemoryPacer(clk)
	const d = 10 * time.Second

	for i := 0; i < 4; i++ {
		at, ok, err := p.Reserve(ctx, "http://a.test", d, 30*time.Second)
		if err != nil || !ok || !at.Equal(t0.Add(time.Duration(i)*d)) {
			t.Fatalf("reserve %d = %v, %v, %v; want %v, true, nil", i, at, ok, err, t0.Add(time.Duration(i)*d))
		}
	}
	// The fifth slot would be 40s away: refused, nothing reserved.
	for range 2 {
		at, ok, err := p.Reserve(ctx, "http://a.test", d, 30*time.Second)
		if err != nil || ok || !at.Equal(t0.Add(4*d)) {
			t.Fatalf("overflow = %v, %v, %v; want %v, false, nil", at, ok, err, t0.Add(4*d))
		}
	}
	// Another origin has its own schedule.
	if at, ok, _ := p.Reserve(ctx, "http://b.test", d, 0); !ok || !at.Equal(t0) {
		t.Fatalf("other origin = %v, %v; want now", at, ok)
	}
	// Once time has caught up, slots start from now again.
	clk.Advance(time.Hour)
	if at, ok, _ := p.Reserve(ctx, "http://a.test", d, 0); !ok || !at.Equal(t0.Add(time.Hour)) {
		t.Fatalf("after idle = %v, %v; want now", at, ok)
	}
	// delay 0 reserves nothing.
	if at, ok, _ := p.Reserve(ctx, "http://c.test", 0, 0); !ok || !at.Equal(clk.Now()) {
		t.Fatalf("delay 0 = %v, %v", at, ok)
	}
	if at, ok, _ := p.Reserve(ctx, "http://c.test", 0, 0); !ok || !at.Equal(clk.Now()) {
		t.Fatalf("delay 0 again = %v, %v", at, ok)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, ok, err := p.Reserve(cctx, "http://d.test", d, d); ok || err == nil {
		t.Fatalf("cancelled ctx = %v, %v; want an error", ok, err)
	}
}

func TestPacerForgetsPastOrigins(t *testing.T) {
	ctx := context.Background()
	clk := enforcetest.NewClock(t0)
	p := NewMemoryPacer(clk)
	for i := range 1000 {
		p.Reserve(ctx, "http://h"+string(rune('a'+i%26))+string(rune('a'+i/26))+".test", time.Second, time.Minute)
	}
	if n := p.Len(); n != 1000 {
		t.Fatalf("Len = %d, want 1000", n)
	}
	clk.Advance(2 * time.Minute)
	p.Reserve(ctx, "http://x.test", time.Second, time.Minute)
	if n := p.Len(); n != 1 {
		t.Fatalf("Len after the slots passed = %d, want 1", n)
	}
}

func TestPausesMemory(t *testing.T) {
	ctx := context.Background()
	m := NewMemoryPauses()
	const o = "http://a.test"
	if _, ok, err := m.PausedUntil(ctx, o, t0); ok || err != nil {
		t.Fatalf("fresh origin paused: %v %v", ok, err)
	}
	m.Pause(ctx, o, t0.Add(time.Minute))
	m.Pause(ctx, o, t0.Add(time.Second)) // never shortens
	if u, ok, _ := m.PausedUntil(ctx, o, t0); !ok || !u.Equal(t0.Add(time.Minute)) {
		t.Fatalf("PausedUntil = %v, %v; want %v", u, ok, t0.Add(time.Minute))
	}
	m.Pause(ctx, o, t0.Add(time.Hour)) // extends
	if u, ok, _ := m.PausedUntil(ctx, o, t0.Add(2*time.Minute)); !ok || !u.Equal(t0.Add(time.Hour)) {
		t.Fatalf("extended PausedUntil = %v, %v", u, ok)
	}
	if _, ok, _ := m.PausedUntil(ctx, o, t0.Add(time.Hour)); ok {
		t.Fatal("paused at its end")
	}
	if m.Len() != 0 {
		t.Fatalf("ended pause kept: Len = %d", m.Len())
	}
	m.Pause(ctx, o, t0.Add(time.Hour))
	m.Resume(ctx, o)
	if _, ok, _ := m.PausedUntil(ctx, o, t0); ok {
		t.Fatal("paused after Resume")
	}
	var zero MemoryPauses // the zero value works
	if err := zero.Pause(ctx, o, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := zero.PausedUntil(ctx, o, t0); !ok {
		t.Fatal("zero MemoryPauses lost a pause")
	}
}

func TestPacerHoldNext(t *testing.T) {
	ctx := context.Background()
	clk := enforcetest.NewClock(t0)
	p := NewMemoryPacer(clk)
	const o = "http://a.test"
	if n := p.Next(o); !n.IsZero() {
		t.Fatalf("Next of a fresh origin = %v", n)
	}
	p.Hold(o, t0.Add(3*time.Second))
	p.Hold(o, t0.Add(time.Second)) // never moves back
	if n := p.Next(o); !n.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("Next = %v, want t0+3s", n)
	}
	if at, ok, _ := p.Reserve(ctx, o, time.Second, time.Minute); !ok || !at.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("Reserve after Hold = %v %v, want t0+3s", at, ok)
	}
}

func TestPausesMemoryBackoff(t *testing.T) {
	ctx := context.Background()
	m := NewMemoryPauses()
	const o = "http://a.test"
	b := BackoffPolicy{Start: 10 * time.Second, Max: time.Minute}
	if u, ext, err := m.Backoff(ctx, o, t0, 0, b); err != nil || !ext || !u.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("first: %v %v %v", u, ext, err)
	}
	// In flight when the pause began: the streak does not grow (10s
	// from now, not 20s).
	if u, ext, _ := m.Backoff(ctx, o, t0.Add(time.Second), 0, b); !ext || !u.Equal(t0.Add(11*time.Second)) {
		t.Fatalf("in-flight answer: %v %v, want t0+11s", u, ext)
	}
	if u, _, _ := m.Backoff(ctx, o, t0.Add(11*time.Second), 0, b); !u.Equal(t0.Add(31 * time.Second)) {
		t.Fatalf("second: %v, want 20s after t0+11s", u)
	}
	// A 2xx sent before the pause began ends nothing; one sent after does.
	m.ResumeSent(ctx, o, t0.Add(5*time.Second))
	if _, ok, _ := m.PausedUntil(ctx, o, t0.Add(12*time.Second)); !ok {
		t.Fatal("an old 2xx ended the pause")
	}
	m.ResumeSent(ctx, o, t0.Add(11*time.Second))
	if _, ok, _ := m.PausedUntil(ctx, o, t0.Add(12*time.Second)); ok {
		t.Fatal("a 2xx sent after the pause began did not end it")
	}
	if u, _, _ := m.Backoff(ctx, o, t0.Add(12*time.Second), 0, b); !u.Equal(t0.Add(22 * time.Second)) {
		t.Fatalf("after the 2xx: %v, want the streak reset (10s)", u)
	}
}
