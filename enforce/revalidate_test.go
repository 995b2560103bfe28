package enforce

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

func TestStaleWhileRevalidate(t *testing.T) {
	release := make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	v := newEnv(t, serve(200, testRobots), Config{TTL: time.Hour, UnreachableWindow: 10 * time.Hour})
	v.decide("/private", 1)
	v.o.set(func(w http.ResponseWriter, r *http.Request) {
		<-release
		serve(200, "User-agent: *\nDisallow: /other\n")(w, r)
	})
	v.clock.Advance(time.Hour)
	// While the re-fetch hangs, every request is decided at once on the
	// expired copy, and only one fetch is made.
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		d := v.e.Decide(ctx, v.o.url("/private"), "", DecideOptions{})
		if d.Allowed || d.Rule != "Disallow: /private" || d.RobotsAge != time.Hour || d.RobotsStatus != StatusOK {
			t.Fatalf("request %d while re-fetching: %+v", i, d)
		}
	}
	testsupport.WaitFor(t, "return v.o.robots.Load() == 2", func() bool { return v.o.robots.Load() == 2 })
	close(release)
	released = true
	v.settle()
	if got := v.o.robots.Load(); got != 2 {
		t.Fatalf("%d fetches, want 2", got)
	}
	if d := v.decide("/private", 2); !d.Allowed || d.RobotsAge != 0 {
		t.Fatalf("after the re-fetch: %+v", d)
	}
	if d := v.decide("/other", 2); d.Allowed {
		t.Fatalf("new rules not in force: %+v", d)
	}

	// Past the unreachable window the expired copy is not used: the
	// caller waits for the fetch.
	v.clock.Advance(12 * time.Hour)
	v.o.set(serve(200, "User-agent: *\nDisallow: /\n"))
	if d := v.decide("/x", 3); d.Allowed || d.Rule != "Disallow: /" {
		t.Fatalf("expired past the window: %+v", d)
	}
}

func TestNoStaleServeWithoutGoodCopy(t *testing.T) {
	// Expired 4xx and unreachable entries without a good copy wait for
	// the fetch, as before: the new result decides.
	for _, code := range []int{404, 503} {
		v := newEnv(t, serve(code, ""), Config{TTL: time.Hour, RetryMin: time.Hour, RetryMax: time.Hour})
		v.decide("/private", 1)
		v.o.set(serve(200, testRobots))
		v.clock.Advance(time.Hour)
		if d := v.decide("/private", 2); d.Allowed || d.Reason != ReasonDisallowed {
			t.Errorf("expired %d entry: %+v", code, d)
		}
	}
}
