package enforce

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

func TestConcurrentFirstRequestsFetchOnce(t *testing.T) {
	release := make(chan struct{})
	var misses atomic.Int64
	v := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		serve(200, testRobots)(w, r)
	}, Config{Hooks: Hooks{CacheLookup: func(_ string, hit bool) {
		if !hit {
			misses.Add(1)
		}
	}}})
	const n = 64
	var wg sync.WaitGroup
	decisions := make([]Decision, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			path := "/public"
			if i%2 == 0 {
				path = "/private/x"
			}
			decisions[i] = v.e.Decide(context.Background(), v.o.url(path), "", DecideOptions{})
		}(i)
	}
	// Release the fetch only once every caller has missed the cache, so
	// that none can pass by finding the entry the fetch stored.
	testsupport.WaitFor(t, "return misses.Load() == n && v.o.robots.Load() >= 1", func() bool { return misses.Load() == n && v.o.robots.Load() >= 1 })
	close(release)
	wg.Wait()
	if got := v.o.robots.Load(); got != 1 {
		t.Fatalf("%d robots.txt fetches for %d concurrent first requests, want 1", got, n)
	}
	for i, d := range decisions {
		if d.Allowed != (i%2 == 1) {
			t.Errorf("decision %d: %+v", i, d)
		}
	}
}

func TestCancelledCallerDoesNotFailOthers(t *testing.T) {
	release := make(chan struct{})
	v := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		serve(200, testRobots)(w, r)
	}, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan Decision, 1)
	go func() { first <- v.e.Decide(ctx, v.o.url("/public"), "", DecideOptions{}) }()
	testsupport.WaitFor(t, "return v.o.robots.Load() == 1", func() bool { return v.o.robots.Load() == 1 })
	second := make(chan Decision, 1)
	go func() { second <- v.e.Decide(context.Background(), v.o.url("/private"), "", DecideOptions{}) }()
	cancel()
	d := <-first
	if d.Allowed || d.Reason != ReasonClientGone || !strings.Contains(d.Detail, "canceled") || d.RobotsStatus != "" {
		t.Errorf("cancelled caller: %+v", d)
	}
	close(release)
	d = <-second
	if d.Allowed || d.Reason != ReasonDisallowed || d.Rule != "Disallow: /private" {
		t.Errorf("other caller: %+v", d)
	}
	if d := v.decide("/public", 1); !d.Allowed {
		t.Errorf("after: %+v", d)
	}
}

func TestClientGoneWithExpiredCopyWithoutRules(t *testing.T) {
	// An expired 4xx entry has no good copy to serve: the caller waits
	// for the re-fetch, and a caller that leaves is client-gone, not a
	// robots.txt verdict.
	release := make(chan struct{})
	defer close(release)
	v := newEnv(t, serve(404, ""), Config{})
	v.decide("/", 1)
	v.o.set(func(w http.ResponseWriter, r *http.Request) { <-release })
	v.clock.Advance(48 * time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan Decision, 1)
	go func() { res <- v.e.Decide(ctx, v.o.url("/private"), "", DecideOptions{}) }()
	testsupport.WaitFor(t, "return v.o.robots.Load() == 2", func() bool { return v.o.robots.Load() == 2 })
	cancel()
	if d := <-res; d.Allowed || d.Reason != ReasonClientGone || !strings.Contains(d.Detail, "canceled") {
		t.Errorf("%+v", d)
	}
}

// coordStore is a MemoryStore that is also a Coordinator.
type coordStore struct {
	*MemoryStore
	calls atomic.Int64
	fail  bool
}

func (s *coordStore) Once(ctx context.Context, key Key, fetch func(context.Context, Store) *Entry) (*Entry, error) {
	s.calls.Add(1)
	if s.fail {
		return nil, errors.New("redis down")
	}
	return fetch(ctx, s), nil
}

func TestCoordinator(t *testing.T) {
	for _, fail := range []bool{false, true} {
		s := &coordStore{MemoryStore: newTestStore(), fail: fail}
		v := newEnv(t, serve(200, testRobots), Config{Store: s})
		if d := v.decide("/private", 1); d.Allowed || d.Reason != ReasonDisallowed {
			t.Fatalf("fail=%v: %+v", fail, d)
		}
		v.decide("/private", 1)
		if s.calls.Load() != 1 {
			t.Errorf("fail=%v: Once called %d times", fail, s.calls.Load())
		}
	}
}

// panicFetcher panics: the Enforcer must turn that into a verdict.
type panicFetcher struct{}

func TestFetcherPanic(t *testing.T) {
	e := newTestEnforcer(t, Config{Fetcher: panicFetcher{}}, nil)
	u, _ := url.Parse("http://127.0.0.1:1/x")
	d := e.Decide(context.Background(), u, "", DecideOptions{})
	if d.Allowed || d.Reason != ReasonRobotsUnreachable || !strings.Contains(d.Detail, "boom") {
		t.Errorf("%+v", d)
	}
}
