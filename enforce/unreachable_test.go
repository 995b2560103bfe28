package enforce

import (
	"context"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
)

func TestStaleCopyWhenRefetchFails(t *testing.T) {
	v := newEnv(t, serve(200, testRobots), Config{})
	v.decide("/private", 1)
	v.o.set(serve(503, ""))
	v.clock.Advance(25 * time.Hour)
	// An hour past its expiry the copy no longer decides while it is
	// re-fetched: the request waits for the fetch, which fails, and the
	// copy decides as the last good one.
	if d := v.decide("/private", 2); d.Allowed || d.RobotsStatus != StatusUnreachable || d.RobotsStaleReason != StaleUnreachable || d.RobotsAge != 25*time.Hour {
		t.Fatalf("after the re-fetch: %+v", d)
	}
	d := v.decide("/private", 2)
	if d.Allowed || d.Reason != ReasonDisallowed || !d.RobotsStale || d.RobotsStaleReason != StaleUnreachable || d.Rule != "Disallow: /private" {
		t.Fatalf("stale /private: %+v", d)
	}
	if d.RobotsStatus != StatusUnreachable || d.RobotsHTTPStatus != 503 || !d.RobotsFetchedAt.Equal(t0) || d.RobotsAge != 25*time.Hour {
		t.Errorf("robots fields: %+v", d)
	}
	if d := v.decide("/public", 2); !d.Allowed || d.Reason != ReasonAllowed || !d.RobotsStale {
		t.Fatalf("stale /public: %+v", d)
	}
	// Still failing after the backoff: the copy stays in use.
	v.clock.Advance(time.Minute)
	if d := v.decide("/public", 3); !d.Allowed || !d.RobotsStale {
		t.Fatalf("second failure: %+v", d)
	}
	// The origin recovers.
	v.o.set(serve(200, "User-agent: *\nDisallow: /\n"))
	v.clock.Advance(2 * time.Minute)
	if d := v.decide("/public", 4); !d.Allowed || !d.RobotsStale { // the stale copy, while re-fetching
		t.Fatalf("re-fetching: %+v", d)
	}
	if d := v.decide("/public", 4); d.Allowed || d.RobotsStale || d.RobotsStatus != StatusOK {
		t.Fatalf("recovered: %+v", d)
	}
}

func TestBackoff(t *testing.T) {
	v := newEnv(t, serve(500, ""), Config{RetryMin: time.Minute, RetryMax: 4 * time.Minute})
	v.decide("/", 1)
	for i := 0; i < 20; i++ {
		if d := v.decide("/", 1); d.Allowed || d.Reason != ReasonRobotsUnreachable {
			t.Fatalf("%+v", d)
		}
	}
	// Waits: 1m, 2m, 4m, 4m (capped).
	for i, wait := range []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 4 * time.Minute} {
		n := int64(i + 1)
		v.clock.Advance(wait - time.Second)
		v.decide("/", n)
		v.clock.Advance(time.Second)
		v.decide("/", n+1)
		en, _ := v.e.Cached(context.Background(), v.o.srv.URL)
		if en.Failures != i+2 || !en.UnreachableSince.Equal(t0) {
			t.Fatalf("entry after failure %d: failures %d since %v", i+2, en.Failures, en.UnreachableSince)
		}
	}
}

func TestUnreachableWindow(t *testing.T) {
	const window = 5 * time.Hour
	cfg := Config{UnreachableWindow: window, RetryMin: time.Hour, RetryMax: time.Hour}

	t.Run("no copy", func(t *testing.T) {
		v := newEnv(t, serve(503, ""), cfg)
		for i := 0; i <= 5; i++ {
			if d := v.decide("/private", int64(i+1)); d.Allowed || d.Reason != ReasonRobotsUnreachable {
				t.Fatalf("at +%dh: %+v", i, d)
			}
			v.clock.Advance(time.Hour)
		}
		// 6h unreachable, past the window: treated as unavailable.
		d := v.decide("/private", 7)
		if !d.Allowed || d.Reason != ReasonRobotsUnavailable || !strings.Contains(d.Detail, "longer than") {
			t.Fatalf("past the window: %+v", d)
		}
		// Also between fetches, once the window has passed.
		v.o.set(serve(200, testRobots))
		v.clock.Advance(time.Hour)
		if d := v.decide("/private", 8); d.Allowed || d.Reason != ReasonDisallowed {
			t.Fatalf("recovered: %+v", d)
		}
	})

	t.Run("stale copy", func(t *testing.T) {
		v := newEnv(t, serve(200, testRobots), cfg)
		v.decide("/", 1)
		v.o.set(serve(503, ""))
		v.clock.Advance(24 * time.Hour)
		v.decide("/private", 2) // re-fetched in the background
		for i := 0; i <= 5; i++ {
			if d := v.decide("/private", int64(i+2)); d.Allowed || !d.RobotsStale {
				t.Fatalf("at +%dh: %+v", i, d)
			}
			if d := v.decide("/public", int64(i+2)); !d.Allowed || !d.RobotsStale {
				t.Fatalf("at +%dh: %+v", i, d)
			}
			v.clock.Advance(time.Hour)
		}
		if d := v.decide("/private", 8); !d.Allowed || d.Reason != ReasonRobotsUnavailable || d.RobotsStale {
			t.Fatalf("past the window: %+v", d)
		}
		en, _ := v.e.Cached(context.Background(), v.o.srv.URL)
		if en.Good != nil || en.Parsed != nil {
			t.Errorf("old copy kept past the window: %+v", en)
		}
	})

	t.Run("decided between fetches", func(t *testing.T) {
		// RetryMax beyond the window: the verdict changes at the window's
		// end although no fetch happens then.
		v := newEnv(t, serve(503, ""), Config{UnreachableWindow: window, RetryMin: 10 * time.Hour, RetryMax: 10 * time.Hour})
		v.decide("/", 1)
		v.clock.Advance(window)
		if d := v.decide("/", 1); d.Allowed {
			t.Fatalf("at the window: %+v", d)
		}
		v.clock.Advance(time.Second)
		if d := v.decide("/", 1); !d.Allowed || d.Reason != ReasonRobotsUnavailable {
			t.Fatalf("past the window: %+v", d)
		}
	})
}

// kindFetcher fails every fetch with kind, counting them.
type kindFetcher struct {
	kind  FetchErrorKind
	calls atomic.Int64
}

func (f *kindFetcher) Fetch(context.Context, string) FetchResult {
	f.calls.Add(1)
	return FetchResult{Status: StatusUnreachable, Err: string(f.kind) + ": test failure", ErrKind: f.kind}
}

// An origin that was never reached is refused as origin-unreachable and
// its robots.txt retried after 10 s, doubling up to RetryMin; a
// robots.txt that answered (an HTTP status) keeps the RetryMin..RetryMax
// backoff and the robots-unreachable reason. Both say when they retry.
func TestRetryDependsOnKind(t *testing.T) {
	cases := []struct {
		kind   FetchErrorKind
		reason Reason
		waits  []time.Duration
	}{
		{FetchDNS, ReasonOriginUnreachable, []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}},
		{FetchRefused, ReasonOriginUnreachable, []time.Duration{10 * time.Second, 20 * time.Second}},
		{FetchTimeout, ReasonOriginUnreachable, []time.Duration{10 * time.Second}},
		{FetchTLSUntrusted, ReasonOriginUnreachable, []time.Duration{10 * time.Second}},
		{FetchStatus, ReasonRobotsUnreachable, []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute}},
	}
	for _, c := range cases {
		t.Run(string(c.kind), func(t *testing.T) {
			f := &kindFetcher{kind: c.kind}
			clock := enforcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			e := newTestEnforcer(t, Config{Fetcher: f, RetryMin: time.Minute, RetryMax: time.Hour}, clock)
			u, _ := url.Parse("http://origin.test/page")
			for i, wait := range c.waits {
				d := e.Decide(context.Background(), u, "", DecideOptions{})
				if d.Allowed || d.Reason != c.reason || d.RobotsErrKind != c.kind {
					t.Fatalf("failure %d: %v/%s kind %q", i+1, d.Allowed, d.Reason, d.RobotsErrKind)
				}
				if d.RetryAfter != wait || !strings.Contains(d.Detail, "tried again in "+wait.String()) {
					t.Fatalf("failure %d: RetryAfter %v, detail %q; want %v", i+1, d.RetryAfter, d.Detail, wait)
				}
				clock.Advance(wait - time.Second)
				if d := e.Decide(context.Background(), u, "", DecideOptions{}); d.RetryAfter != time.Second || f.calls.Load() != int64(i+1) {
					t.Fatalf("before the retry: RetryAfter %v, %d fetches", d.RetryAfter, f.calls.Load())
				}
				clock.Advance(time.Second)
			}
		})
	}
}
