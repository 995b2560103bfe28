package enforce

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestTTLExpiryAndRefetch(t *testing.T) {
	v := newEnv(t, serve(200, testRobots), Config{})
	if d := v.decide("/private", 1); d.Allowed || d.RobotsAge != 0 || !d.RobotsFetchedAt.Equal(t0) {
		t.Fatalf("first: %+v", d)
	}
	v.clock.Advance(23 * time.Hour)
	if d := v.decide("/private", 1); d.Allowed || d.RobotsAge != 23*time.Hour {
		t.Fatalf("at 23h: %+v", d)
	}
	v.o.set(serve(200, "User-agent: *\nDisallow: /other\n"))
	v.clock.Advance(time.Hour) // exactly the TTL: expired
	// The expired copy decides while it is re-fetched in the background.
	if d := v.decide("/private", 2); d.Allowed || d.RobotsAge != 24*time.Hour {
		t.Fatalf("while re-fetching: %+v", d)
	}
	if d := v.decide("/private", 2); !d.Allowed || d.Reason != ReasonAllowed || d.RobotsAge != 0 {
		t.Fatalf("after re-fetch: %+v", d)
	}
	if d := v.decide("/other", 2); d.Allowed || d.Rule != "Disallow: /other" {
		t.Fatalf("new rules: %+v", d)
	}
}

func TestMaxAgeClamping(t *testing.T) {
	tests := []struct {
		header string
		want   time.Duration // the freshness the entry gets
	}{
		{"max-age=3600", time.Hour},
		{"max-age=10", time.Minute},        // clamped up to MinTTL
		{"max-age=0", time.Minute},         // likewise
		{"max-age=999999", 24 * time.Hour}, // clamped down to TTL
		{"no-store", time.Minute},          // may not be stored: MinTTL
		{"no-cache, max-age=3600", time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			v := newEnv(t, serve(200, testRobots, "Cache-Control", tt.header), Config{})
			v.decide("/", 1)
			en, ok := v.e.Cached(context.Background(), v.o.srv.URL)
			if !ok || en.Expires.Sub(en.FetchedAt) != tt.want {
				t.Fatalf("entry %+v, want fresh for %v", en, tt.want)
			}
			v.clock.Advance(tt.want - time.Second)
			v.decide("/", 1)
			v.clock.Advance(time.Second)
			v.decide("/", 2)
		})
	}
	// 4xx results honour max-age as well.
	v := newEnv(t, serve(404, "", "Cache-Control", "max-age=120"), Config{})
	v.decide("/", 1)
	v.clock.Advance(119 * time.Second)
	v.decide("/", 1)
	v.clock.Advance(time.Second)
	v.decide("/", 2)
}

func TestUnavailableCachedWithTTL(t *testing.T) {
	v := newEnv(t, serve(404, ""), Config{TTL: 2 * time.Hour})
	for i := 0; i < 5; i++ {
		if d := v.decide("/private", 1); !d.Allowed || d.Reason != ReasonRobotsUnavailable {
			t.Fatalf("%+v", d)
		}
	}
	v.clock.Advance(2 * time.Hour)
	v.decide("/private", 2)
}

func TestPurge(t *testing.T) {
	v := newEnv(t, serve(200, testRobots), Config{})
	v.decide("/", 1)
	v.decide("/", 1)
	v.e.Purge(context.Background(), v.o.srv.URL)
	if _, ok := v.e.Cached(context.Background(), v.o.srv.URL); ok {
		t.Fatal("entry cached after Purge")
	}
	v.decide("/", 2)
	if _, ok := v.e.Cached(context.Background(), v.o.srv.URL); !ok {
		t.Fatal("entry not cached after Decide")
	}
}

func TestEntry(t *testing.T) {
	v := newEnv(t, serve(200, testRobots, "Cache-Control", "max-age=600"), Config{})
	ctx := context.Background()
	if _, ok := v.e.Cached(ctx, v.o.srv.URL); ok {
		t.Fatal("cached before any fetch")
	}
	en, err := v.e.Entry(ctx, v.o.srv.URL)
	if err != nil || en.Result.Status != StatusOK || en.Parsed == nil || en.Key != robotsKey(v.o.srv.URL) ||
		!en.Expires.Equal(t0.Add(10*time.Minute)) || en.Result.MaxAge != 10*time.Minute {
		t.Fatalf("Entry = %+v, %v", en, err)
	}
	if en2, _ := v.e.Entry(ctx, v.o.srv.URL); en2 != en || v.o.robots.Load() != 1 {
		t.Fatal("fresh entry fetched again")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	v.clock.Advance(time.Hour)
	v.o.set(blocking(t))
	if _, err := v.e.Entry(cctx, v.o.srv.URL); !errors.Is(err, context.Canceled) {
		t.Errorf("Entry with a cancelled ctx: %v", err)
	}
}

func TestRebuild(t *testing.T) {
	v := newEnv(t, serve(200, testRobots), Config{})
	v.decide("/", 1)
	v.o.set(serve(500, ""))
	v.clock.Advance(25 * time.Hour)
	v.decide("/", 2)
	en, _ := v.e.Cached(context.Background(), v.o.srv.URL)
	// As a serialising store would: copy without Parsed, then rebuild.
	cp := *en
	cp.Parsed = nil
	cp.Rebuild(0)
	if cp.Parsed == nil || cp.Parsed.MatchPath("", "/private").Allowed {
		t.Fatal("rebuilt entry lost the good copy's rules")
	}
	cp.Good = nil
	cp.Rebuild(0)
	if cp.Parsed != nil {
		t.Fatal("rebuilt failure entry without a good copy has rules")
	}
	ok := Entry{Result: FetchResult{Status: StatusOK, Body: []byte("User-agent: *\nDisallow: /\n")}}
	ok.Rebuild(0)
	if ok.Parsed == nil || ok.Parsed.MatchPath("x", "/a").Allowed {
		t.Fatal("rebuilt OK entry")
	}
}
