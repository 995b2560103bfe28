package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/robotsgate/robotsgate/internal/redistest"
)

// TestRedisTwoProxiesShareRobotsAndPacing runs two robotsgate servers on
// one Redis (-cache redis://...): their concurrent first requests cause a
// single robots.txt fetch, both enforce it, and requests paced by the
// origin's Crawl-delay through the shared Redis pacer all get through.
func TestRedisTwoProxiesShareRobotsAndPacing(t *testing.T) {
	srv := redistest.Start(t)
	var robots atomic.Int64
	var arrivals atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robots.Add(1)
			io.WriteString(w, "User-agent: *\nDisallow: /private\nCrawl-delay: 0.3\n")
			return
		}
		arrivals.Add(1)
		io.WriteString(w, "ok")
	}))
	t.Cleanup(origin.Close)

	args := []string{"-cache", srv.URL(0), "-audit-log", "-"}
	proxies := []*running{startServe(t, args, nil), startServe(t, args, nil)}

	// Concurrent first requests through both proxies: one fetch, fleet-wide.
	const n = 6
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/private/x"
			if i%2 == 1 {
				path = "/page"
			}
			resp, err := proxies[(i/2)%2].client.Get(origin.URL + path) // both proxies get both kinds
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	if got := robots.Load(); got != 1 {
		t.Fatalf("%d robots.txt fetches by two proxies sharing redis, want 1", got)
	}
	for i, c := range codes {
		if want := map[bool]int{true: 403, false: 200}[i%2 == 0]; c != want {
			t.Errorf("request %d: status %d, want %d", i, c, want)
		}
	}

	// The Redis layer's health is exported.
	resp, err := http.Get("http://" + proxies[0].addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"\nrobotsgate_redis_up 1\n", "\nrobotsgate_redis_fallbacks_total 0\n"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics (status %d) lacks %q", resp.StatusCode, strings.TrimSpace(want))
		}
	}

	// Every allowed request reached the origin. The crawl-delay spacing
	// across replicas is asserted on a fake clock in package enforce
	// (TestRedisPacerAcrossInstances): wall-clock gaps measured here would be flaky.
	if got := arrivals.Load(); got != n/2 {
		t.Fatalf("%d requests reached the origin, want %d", got, n/2)
	}
}
