package main

import (
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/redistest"
	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// TestRedisTwoProxiesShareRobotsAndPacing runs two robotsgate servers on
// one Redis (-cache redis://...): their concurrent first requests cause a
// single robots.txt fetch, both enforce it, and requests paced by the
// origin's Crawl-delay through the shared Redis pacer all get through.
func TestRedisTwoProxiesShareRobotsAndPacing(t *testing.T) {
	srv := redistest.Start(t)
	origin := newCountingOrigin(t, "User-agent: *\nDisallow: /private\nCrawl-delay: 0.3\n", nil)

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
	if got := origin.robots.Load(); got != 1 {
		t.Fatalf("%d robots.txt fetches by two proxies sharing redis, want 1", got)
	}
	for i, c := range codes {
		if want := map[bool]int{true: 403, false: 200}[i%2 == 0]; c != want {
			t.Errorf("request %d: status %d, want %d", i, c, want)
		}
	}

	// The Redis layer's health is exported.
	metrics := proxies[0].metrics(t)
	for _, want := range []string{"\nrobotsgate_redis_up 1\n", "\nrobotsgate_redis_fallbacks_total 0\n"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
		}
	}

	// Every allowed request reached the origin. The crawl-delay spacing
	// across replicas is asserted on a fake clock in package enforce
	// (TestRedisPacerAcrossInstances): wall-clock gaps measured here would be flaky.
	if got := origin.pages.Load(); got != n/2 {
		t.Fatalf("%d requests reached the origin, want %d", got, n/2)
	}
}

// TestRedisOutageThroughProxies kills and restarts the shared redis-server
// under two running robotsgate servers: requests keep their verdicts
// (403/200) throughout, robotsgate_redis_up reads 0 during the outage and
// 1 after it, and each server logs the outage once.
func TestRedisOutageThroughProxies(t *testing.T) {
	srv := redistest.Start(t)
	origin := newCountingOrigin(t, "User-agent: *\nDisallow: /private\n", nil)

	args := []string{"-cache", srv.URL(0), "-audit-log", "-"}
	proxies := []*running{startServe(t, args, nil), startServe(t, args, nil)}

	// traffic sends an allowed and a disallowed request through each
	// proxy and checks their verdicts.
	traffic := func(stage string) {
		t.Helper()
		for i, p := range proxies {
			for path, want := range map[string]int{"/private/x": 403, "/page": 200} {
				resp, err := p.client.Get(origin.URL + path)
				if err != nil {
					t.Fatalf("%s: proxy %d %s: %v", stage, i, path, err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != want {
					t.Fatalf("%s: proxy %d %s: status %d, want %d", stage, i, path, resp.StatusCode, want)
				}
			}
		}
	}
	// redisUp polls each proxy's /metrics until robotsgate_redis_up reads
	// want, sending traffic meanwhile (deadline 10s; no timing asserted).
	redisUp := func(want string) {
		t.Helper()
		line := "\nrobotsgate_redis_up " + want + "\n"
		for i, p := range proxies {
			deadline := time.Now().Add(10 * time.Second)
			for {
				if strings.Contains(p.metrics(t), line) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("proxy %d: robotsgate_redis_up never read %s", i, want)
				}
				traffic("waiting for redis_up " + want)
				time.Sleep(20 * time.Millisecond)
			}
		}
	}

	traffic("redis up")
	redisUp("1")
	if got := origin.robots.Load(); got != 1 {
		t.Fatalf("%d robots.txt fetches by two proxies sharing redis, want 1", got)
	}

	srv.Stop()
	traffic("redis down")
	redisUp("0")
	for range 5 {
		traffic("redis down")
	}

	srv.Restart() // empty
	redisUp("1")
	traffic("redis back")

	for i, p := range proxies {
		logs := p.stderr.String()
		if n := strings.Count(logs, "redis unavailable: using local"); n != 1 {
			t.Errorf("proxy %d logged the outage %d times, want once:\n%s", i, n, logs)
		}
		if !strings.Contains(logs, "redis available again") {
			t.Errorf("proxy %d did not log the recovery:\n%s", i, logs)
		}
	}
}

// TestRedisCacheEntriesMetric: with -cache redis://..., the metric
// robotsgate_robots_cache_entries counts the robots.txt entries the
// process holds, as it does with the in-memory cache.
func TestRedisCacheEntriesMetric(t *testing.T) {
	srv := redistest.Start(t)
	originA, _ := newTestOrigin(t, nil)
	originB, _ := newTestOrigin(t, nil)
	r := startServe(t, []string{"-cache", srv.URL(0), "-audit-log", "-"}, nil)
	r.getAll(t, originA.URL+"/private/x", originB.URL+"/page")
	b := r.metrics(t)
	if testsupport.MetricValue(t, string(b), "robotsgate_robots_cache_entries") != 2 {
		t.Fatalf("metrics after two origins' robots.txt were cached:\n%s", b)
	}
}
