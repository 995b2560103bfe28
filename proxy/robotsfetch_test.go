package proxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

func TestConcurrentFirstRequestsOneFetch(t *testing.T) {
	const n = 64
	var misses atomic.Int64
	allWaiting := make(chan struct{})
	hooks := enforce.Hooks{CacheLookup: func(origin string, hit bool) {
		if !hit && misses.Add(1) == n {
			close(allWaiting)
		}
	}}
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		// Answer only once all n requests have missed the cache and wait.
		select {
		case <-allWaiting:
		case <-time.After(testTimeout):
		}
		io.WriteString(w, privateRobots)
	}, nil)
	h := newHarness(t, harnessOpts{hooks: hooks})

	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/public"
			if i%2 == 1 {
				path = "/private"
			}
			req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s%s/%d", o.URL, path, i), nil)
			req.Header.Set("User-Agent", "TestBot")
			resp, err := h.client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	if got := o.robotsHits.Load(); got != 1 {
		t.Fatalf("%d concurrent first requests caused %d robots.txt fetches, want 1", n, got)
	}
	for i, s := range statuses {
		want := 200
		if i%2 == 1 {
			want = 403
		}
		if s != want {
			t.Errorf("request %d: status %d, want %d", i, s, want)
		}
	}
	if got := o.hits.Load(); got != n/2 {
		t.Errorf("origin saw %d requests, want %d", got, n/2)
	}
}

func TestRobotsStatusTable(t *testing.T) {
	redirect := func(to string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusMovedPermanently) }
	}
	// A redirect chain on a second server: /r/N redirects to /r/N-1; /r/0
	// serves a robots.txt disallowing /private.
	chain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var k int
		if _, err := fmt.Sscanf(r.URL.Path, "/r/%d", &k); err != nil || k == 0 {
			io.WriteString(w, privateRobots)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/r/%d", k-1), http.StatusFound)
	}))
	defer chain.Close()
	never := make(chan struct{})
	defer close(never)
	huge := strings.Repeat("# padding line to push the rule past the parse limit\n", (600<<10)/53) + privateRobots

	cases := []struct {
		name      string
		robots    http.HandlerFunc
		wantCode  int    // for /private
		wantWhy   string // X-Robotsgate-Decision when refused
		allowsAll bool   // /public goes through as well
	}{
		{"200", robotsBody(privateRobots), 403, "disallowed", true},
		{"301-301-200", redirect(chain.URL + "/r/1"), 403, "disallowed", true},
		{"5 redirects", redirect(chain.URL + "/r/4"), 403, "disallowed", true},
		{"6 redirects", redirect(chain.URL + "/r/5"), 200, "", true},
		{"404", robotsStatus(404), 200, "", true},
		{"401", robotsStatus(401), 200, "", true},
		{"403", robotsStatus(403), 200, "", true},
		{"429", robotsStatus(429), 403, "robots-unreachable", false},
		{"500", robotsStatus(500), 403, "robots-unreachable", false},
		{"503", robotsStatus(503), 403, "robots-unreachable", false},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-never:
			case <-r.Context().Done():
			}
		}, 504, "origin-unreachable", false},
		{"oversized body", robotsBody(huge), 200, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrigin(t, tc.robots, nil)
			var opts harnessOpts
			if tc.name == "timeout" {
				// Only this case needs the short bound: the others must
				// not fail on a slow (loaded) machine.
				opts.config = func(c *config.Config) { c.Robots.FetchTimeout = 300 * time.Millisecond }
			}
			h := newHarness(t, opts)
			resp, body := h.get(t, o.URL+"/private")
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("/private: %d, want %d\n%s", resp.StatusCode, tc.wantCode, body)
			}
			if got := resp.Header.Get(answer.HeaderDecision); got != tc.wantWhy {
				t.Errorf("%s = %q, want %q", answer.HeaderDecision, got, tc.wantWhy)
			}
			resp, _ = h.get(t, o.URL+"/public")
			if got := resp.StatusCode == 200; got != tc.allowsAll {
				t.Errorf("/public: %d; allowed=%v, want %v", resp.StatusCode, got, tc.allowsAll)
			}
			wantHits := int64(0)
			if tc.wantCode == 200 {
				wantHits++
			}
			if tc.allowsAll {
				wantHits++
			}
			if got := o.hits.Load(); got != wantHits {
				t.Errorf("origin saw %d requests, want %d", got, wantHits)
			}
		})
	}

	t.Run("connection refused", func(t *testing.T) {
		// The proxy listens first, so the port freed below cannot be the
		// proxy's own (which would make this a self-request).
		h := newHarness(t, harnessOpts{})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := "http://" + ln.Addr().String()
		ln.Close()
		resp, body := h.get(t, dead+"/anything")
		if resp.StatusCode != 502 || resp.Header.Get(answer.HeaderDecision) != "origin-unreachable" {
			t.Fatalf("refused origin: %d %q\n%s", resp.StatusCode, resp.Header.Get(answer.HeaderDecision), body)
		}
		recs := h.audit.Records(t)
		if len(recs) != 1 || recs[0]["reason"] != "origin-unreachable" || recs[0]["robots_status"] != "unreachable" {
			t.Fatalf("audit: %v", recs)
		}
	})
}

func TestTTLExpiryAndStaleCopy(t *testing.T) {
	clock := enforcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var failing atomic.Bool
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "down", 503)
			return
		}
		io.WriteString(w, privateRobots)
	}, nil)
	h := newHarness(t, harnessOpts{clock: clock, config: func(c *config.Config) { c.Robots.TTL = time.Hour }})

	if resp, _ := h.get(t, o.URL+"/public"); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	clock.Advance(30 * time.Minute)
	h.get(t, o.URL+"/public")
	if n := o.robotsHits.Load(); n != 1 {
		t.Fatalf("within TTL: %d fetches, want 1", n)
	}
	clock.Advance(31 * time.Minute)
	h.get(t, o.URL+"/public") // decided on the expired copy, re-fetched in the background
	testsupport.WaitFor(t, "the re-fetch after the TTL", func() bool {
		en, ok := h.srv.enf.Cached(context.Background(), o.URL)
		return ok && clock.Now().Before(en.Expires)
	})
	if n := o.robotsHits.Load(); n != 2 {
		t.Fatalf("after TTL: %d fetches, want 2", n)
	}

	// The origin fails; after expiry the stale copy keeps deciding.
	failing.Store(true)
	clock.Advance(2 * time.Hour)
	resp, _ := h.get(t, o.URL+"/public")
	if resp.StatusCode != 200 {
		t.Fatalf("stale copy: /public %d, want 200", resp.StatusCode)
	}
	testsupport.WaitFor(t, "the failed re-fetch", func() bool {
		en, ok := h.srv.enf.Cached(context.Background(), o.URL)
		return ok && en.Result.Status == enforce.StatusUnreachable
	})
	if n := o.robotsHits.Load(); n != 3 {
		t.Fatalf("re-fetch after expiry: %d fetches, want 3", n)
	}
	resp, _ = h.get(t, o.URL+"/private")
	if resp.StatusCode != 403 || resp.Header.Get(answer.HeaderDecision) != "disallowed" {
		t.Fatalf("stale copy: /private %d %q", resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
	}
	recs := h.audit.Records(t)
	last := recs[len(recs)-1]
	if last["robots_stale"] != true || last["robots_status"] != "unreachable" || last["robots_http_status"] != 503.0 {
		t.Fatalf("stale audit record: %v", last)
	}
}
