package enforce

import (
	"context"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// gateFetcher is a Fetcher whose every Fetch waits for the test to hand
// it a result on next; a result whose Err is "panic" makes it panic.
type gateFetcher struct {
	calls atomic.Int64
	next  chan FetchResult
}

func newGateFetcher() *gateFetcher { return &gateFetcher{next: make(chan FetchResult, 4)} }

func (f *gateFetcher) Fetch(ctx context.Context, origin string) FetchResult {
	f.calls.Add(1)
	select {
	case r := <-f.next:
		if r.Err == "panic" {
			panic("fetch failed")
		}
		return r
	case <-ctx.Done():
		return FetchResult{Status: StatusUnreachable, Err: ctx.Err().Error()}
	}
}

func okResult(body string) FetchResult {
	return FetchResult{Status: StatusOK, HTTPStatus: 200, Body: []byte(body)}
}

// staleEnv is an Enforcer on a fake clock in front of a gateFetcher;
// lookups receives the origin of each cache lookup of Decide.
type staleEnv struct {
	f       *gateFetcher
	clock   *enforcetest.Clock
	e       *Enforcer
	u       *url.URL
	lookups chan string
}

const staleFetchTimeout = 10 * time.Second

func newStaleEnv(t *testing.T) *staleEnv {
	v := &staleEnv{f: newGateFetcher(), clock: enforcetest.NewClock(t0), lookups: make(chan string, 64)}
	v.e = newTestEnforcer(t, Config{
		Fetcher: v.f, TTL: time.Hour, FetchTimeout: staleFetchTimeout,
		Hooks: Hooks{CacheLookup: func(origin string, _ bool) { v.lookups <- origin }},
	}, v.clock)
	v.u, _ = url.Parse("http://example.test/private/x")
	return v
}

func (v *staleEnv) decide() Decision {
	return v.e.Decide(context.Background(), v.u, "", DecideOptions{})
}

// TestStaleWhileRevalidateIsFlaggedAndBounded: an expired copy that
// decides while it is re-fetched says so, and decides for at most
// FetchTimeout past its expiry; later requests wait for the fetch.
func TestStaleWhileRevalidateIsFlaggedAndBounded(t *testing.T) {
	v := newStaleEnv(t)
	v.f.next <- okResult(testRobots)
	if d := v.decide(); d.Allowed || d.RobotsStale || d.RobotsStaleReason != "" {
		t.Fatalf("fresh: %+v", d)
	}
	<-v.lookups

	// Expired: decided at once on the copy, flagged, while one re-fetch
	// waits at the gate.
	v.clock.Advance(time.Hour)
	d := v.decide()
	<-v.lookups
	if d.Allowed || !d.RobotsStale || d.RobotsStaleReason != StaleRevalidating || d.RobotsStatus != StatusOK || d.RobotsAge != time.Hour {
		t.Fatalf("at expiry: %+v", d)
	}
	testsupport.WaitFor(t, "return v.f.calls.Load() == 2", func() bool { return v.f.calls.Load() == 2 })
	v.clock.Advance(staleFetchTimeout)
	if d := v.decide(); d.Allowed || d.RobotsStaleReason != StaleRevalidating {
		t.Fatalf("FetchTimeout past expiry: %+v", d)
	}
	<-v.lookups

	// Past that bound the request waits for the fetch under way and is
	// decided on its result.
	v.clock.Advance(time.Second)
	res := make(chan Decision, 1)
	go func() { res <- v.decide() }()
	<-v.lookups // the request has read the expired entry
	v.f.next <- okResult("User-agent: *\nDisallow: /other\n")
	d = <-res
	if !d.Allowed || d.RobotsStale || d.RobotsStaleReason != "" || d.RobotsAge != 0 {
		t.Fatalf("past the bound: %+v, want decided on the new copy", d)
	}
	if n := v.f.calls.Load(); n != 2 {
		t.Errorf("%d fetches, want 2 (one shared fetch)", n)
	}
}

// TestStaleReasons: a last good copy serving an unreachable origin says
// so, and so does an expired copy whose re-fetch ended without a result.
func TestStaleReasons(t *testing.T) {
	v := newStaleEnv(t)
	v.f.next <- okResult(testRobots)
	v.decide()

	// Long past expiry: the request waits for the fetch, which fails.
	v.clock.Advance(2 * time.Hour)
	v.f.next <- FetchResult{Status: StatusUnreachable, HTTPStatus: 503, Err: "HTTP 503"}
	d := v.decide()
	if d.Allowed || !d.RobotsStale || d.RobotsStaleReason != StaleUnreachable || d.RobotsStatus != StatusUnreachable || d.RobotsAge != 2*time.Hour {
		t.Fatalf("unreachable: %+v", d)
	}

	// The origin recovers, then the copy expires and its re-fetch panics.
	v.clock.Advance(time.Hour)
	v.f.next <- okResult(testRobots)
	if d := v.decide(); d.RobotsStale {
		t.Fatalf("recovered: %+v", d)
	}
	v.clock.Advance(2 * time.Hour)
	v.f.next <- FetchResult{Err: "panic"}
	d = v.decide()
	if d.Allowed || !d.RobotsStale || d.RobotsStaleReason != StaleFetchFailed || d.Rule != "Disallow: /private" {
		t.Fatalf("failed re-fetch: %+v", d)
	}
}

// closeStore is a MemoryStore that fails the test when it is written to
// after the Enforcer's Close returned.
type closeStore struct {
	*MemoryStore
	t      *testing.T
	closed atomic.Bool
	sets   atomic.Int64
}

func (s *closeStore) Set(ctx context.Context, key Key, e *Entry, keep time.Duration) {
	if s.closed.Load() {
		s.t.Errorf("Set(%s) after Close returned", key)
	}
	s.sets.Add(1)
	s.MemoryStore.Set(ctx, key, e, keep)
}

// TestCloseWaitsForRevalidation: Close waits for a background
// revalidation under way, which therefore never writes to the store
// after Close, and starts no new one.
func TestCloseWaitsForRevalidation(t *testing.T) {
	v := newStaleEnv(t)
	st := &closeStore{MemoryStore: newTestStore(), t: t}
	v.e = newTestEnforcer(t, Config{Fetcher: v.f, Store: st, TTL: time.Hour, FetchTimeout: staleFetchTimeout}, v.clock)
	v.f.next <- okResult(testRobots)
	v.decide()
	v.clock.Advance(time.Hour)
	if d := v.decide(); d.RobotsStaleReason != StaleRevalidating {
		t.Fatalf("not revalidating: %+v", d)
	}
	done := make(chan struct{})
	go func() {
		v.e.Close()
		st.closed.Store(true)
		close(done)
	}()
	// Let the revalidation finish once Close returned, or after a while:
	// a Close that does not wait is caught by closeStore either way.
	select {
	case <-done:
	case <-time.After(100 * time.Millisecond):
	}
	v.f.next <- okResult(testRobots)
	<-done
	if n := st.sets.Load(); n != 2 {
		t.Fatalf("%d Sets, want 2 (the first fetch and the revalidation)", n)
	}
	v.clock.Advance(time.Hour)
	if d := v.decide(); d.RobotsStaleReason != StaleRevalidating {
		t.Fatalf("after Close: %+v", d)
	}
	if n := st.sets.Load(); n != 2 {
		t.Fatalf("a revalidation ran after Close (%d Sets)", n)
	}
}
