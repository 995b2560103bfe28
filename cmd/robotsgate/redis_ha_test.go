package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/redistest"
)

// haOrigin is an origin for the failover tests: it counts its robots.txt
// fetches and every request for a disallowed path that reaches it (there
// must be none), records when /paced requests arrive, and answers /busy
// with 503 and Retry-After: 60.
type haOrigin struct {
	srv      *httptest.Server
	robots   atomic.Int64
	leaked   atomic.Int64
	mu       sync.Mutex
	arrivals []time.Time
}

func newHAOrigin(t *testing.T, crawlDelay string) *haOrigin {
	t.Helper()
	o := &haOrigin{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			o.robots.Add(1)
			fmt.Fprintf(w, "User-agent: *\nDisallow: /private\n%s", crawlDelay)
		case strings.HasPrefix(r.URL.Path, "/private"):
			o.leaked.Add(1)
		case r.URL.Path == "/paced":
			o.mu.Lock()
			o.arrivals = append(o.arrivals, time.Now())
			o.mu.Unlock()
		case r.URL.Path == "/busy":
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// key returns the origin's robots.txt key in Redis (default prefix).
func (o *haOrigin) key(t *testing.T) string {
	u, err := url.Parse(o.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	origin, err := enforce.Origin(u)
	if err != nil {
		t.Fatal(err)
	}
	return "robotsgate:{" + origin + "}:robots"
}

// logRedisLines logs, when the test failed, what each proxy logged
// about Redis.
func logRedisLines(t *testing.T, proxies []*running) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for i, p := range proxies {
			for l := range strings.SplitSeq(p.stderr.String(), "\n") {
				if strings.Contains(l, "redis") {
					t.Logf("proxy %d: %s", i, l)
				}
			}
		}
	})
}

// haGet sends GET url through p and returns the status (0 on error).
func haGet(p *running, url string) int {
	resp, err := p.client.Get(url)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// haCheck sends an allowed and a disallowed request for o through every
// proxy and fails the test unless they get 200 and 403.
func haCheck(t *testing.T, stage string, proxies []*running, o *haOrigin) {
	t.Helper()
	for i, p := range proxies {
		if c := haGet(p, o.srv.URL+"/page"); c != 200 {
			t.Fatalf("%s: proxy %d: allowed request: status %d, want 200", stage, i, c)
		}
		if c := haGet(p, o.srv.URL+"/private/x"); c != 403 {
			t.Fatalf("%s: proxy %d: disallowed request: status %d, want 403", stage, i, c)
		}
	}
}

// firstVisits sends, for one origin after the other, concurrent first
// requests through both proxies (an allowed and a disallowed one each) and checks their
// verdicts and that each robots.txt was fetched once, fleet-wide.
func firstVisits(t *testing.T, proxies []*running, origins []*haOrigin) {
	t.Helper()
	for _, o := range origins {
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				p := proxies[i%2]
				path, want := "/page", 200
				if i >= 2 {
					path, want = "/private/y", 403
				}
				if c := haGet(p, o.srv.URL+path); c != want {
					t.Errorf("%s%s: status %d, want %d", o.srv.URL, path, c, want)
				}
			})
		}
		wg.Wait()
	}
	for _, o := range origins {
		if n := o.robots.Load(); n != 1 {
			t.Errorf("%s: %d robots.txt fetches by two proxies, want 1", o.srv.URL, n)
		}
	}
}

// fleetMode reports whether every proxy's /metrics says fleet mode.
func fleetMode(t *testing.T, proxies []*running, want bool) bool {
	t.Helper()
	line := fmt.Sprintf("\nrobotsgate_redis_mode{mode=\"fleet\"} %d\n", map[bool]int{true: 1, false: 0}[want])
	for _, p := range proxies {
		resp, err := http.Get("http://" + p.addr.String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), line) {
			return false
		}
	}
	return true
}

// throughFailover kills a primary (kill), then sends traffic for the
// origins of check until ready() holds (the new primary serves) and both
// proxies are in fleet mode: every verdict must stay right meanwhile. It
// logs how long that took.
func throughFailover(t *testing.T, proxies []*running, check []*haOrigin, kill func(), ready func() bool) {
	t.Helper()
	killed := time.Now()
	kill()
	wentLocal := false
	redistest.WaitFor(t, "the new primary, and both proxies in fleet mode", func() bool {
		for _, o := range check {
			haCheck(t, "during the failover", proxies, o)
		}
		if fleetMode(t, proxies, false) {
			wentLocal = true
			return false
		}
		return ready() && fleetMode(t, proxies, true)
	})
	t.Logf("new primary serving and both proxies in fleet mode %v after the primary was killed (local mode seen: %v)",
		time.Since(killed).Round(10*time.Millisecond), wentLocal)
	if !wentLocal {
		return
	}
	// The switches are counted: a replica seen in local mode switched
	// there and back at least once.
	for i, p := range proxies {
		resp, err := http.Get("http://" + p.addr.String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), "robotsgate_redis_switches_total{to=\"fleet\"} 0\n") ||
			!strings.Contains(string(b), "robotsgate_redis_switches_total{to=\"fleet\"}") {
			t.Errorf("proxy %d: no switch back to fleet mode counted", i)
		}
	}
}

// TestSentinelFailoverThroughProxies: two robotsgate replicas on a
// Sentinel set (primary, replica, three sentinels) fetch each robots.txt
// once; the primary is killed: every verdict holds while Sentinel
// promotes the replica, the proxies return to fleet mode, and a new origin
// is fetched once fleet-wide and stored on the new primary.
func TestSentinelFailoverThroughProxies(t *testing.T) {
	set := redistest.StartSentinel(t)
	var origins []*haOrigin
	for range 6 {
		origins = append(origins, newHAOrigin(t, ""))
	}
	args := []string{"-cache", set.URL(0), "-audit-log", "-"}
	proxies := []*running{startServe(t, args, nil), startServe(t, args, nil)}
	logRedisLines(t, proxies)
	firstVisits(t, proxies, origins[:5])
	primary := redis.NewClient(&redis.Options{Addr: set.Primary.Addr(), DisableIdentity: true})
	defer primary.Close()
	if n, err := primary.Exists(context.Background(), origins[0].key(t)).Result(); err != nil || n != 1 {
		t.Fatalf("robots.txt entry on the primary: %d, %v", n, err)
	}

	throughFailover(t, proxies, origins[:4], set.Primary.Stop, func() bool {
		return set.PrimaryAddr() == set.Replica.Addr()
	})

	firstVisits(t, proxies, origins[5:])
	promoted := redis.NewClient(&redis.Options{Addr: set.Replica.Addr(), DisableIdentity: true})
	defer promoted.Close()
	if n, err := promoted.Exists(context.Background(), origins[5].key(t)).Result(); err != nil || n != 1 {
		t.Fatalf("new origin's entry on the promoted primary: %d, %v", n, err)
	}
	for _, o := range origins {
		if n := o.leaked.Load(); n != 0 {
			t.Errorf("%s: %d disallowed requests reached the origin", o.srv.URL, n)
		}
	}
}

// TestClusterThroughProxies: two robotsgate replicas on a six-node Redis
// Cluster fetch each of 40 robots.txt once, the entries spread over the
// primaries, a Crawl-delay paces both replicas together, a pause seen by
// one holds for the other, and a primary killed mid-test costs no wrong
// verdict; afterwards a new origin is fetched once fleet-wide, and its
// announcement reaches subscribers on every node.
func TestClusterThroughProxies(t *testing.T) {
	cl := redistest.StartCluster(t)
	origins := []*haOrigin{newHAOrigin(t, "Crawl-delay: 0.4\n")}
	for range 40 {
		origins = append(origins, newHAOrigin(t, ""))
	}
	args := []string{"-cache", cl.URL(), "-audit-log", "-"}
	proxies := []*running{startServe(t, args, nil), startServe(t, args, nil)}
	logRedisLines(t, proxies)
	firstVisits(t, proxies, origins[:40])

	// The entries are spread over the primaries; the victim holds origins[1]'s.
	holding := 0
	var victim *redistest.Server
	for _, p := range cl.Primaries() {
		c := redis.NewClient(&redis.Options{Addr: p.Addr(), DisableIdentity: true})
		n, err := c.DBSize(context.Background()).Result()
		if err == nil && n > 0 {
			holding++
		}
		if n, err := c.Exists(context.Background(), origins[1].key(t)).Result(); err == nil && n == 1 {
			victim = p
		}
		c.Close()
	}
	if holding < 2 || victim == nil {
		t.Fatalf("robots.txt entries on %d primaries (want several), origins[1]'s found: %v", holding, victim != nil)
	}

	clusterPacing(t, proxies, origins[0])
	clusterPause(t, proxies, origins[39])

	throughFailover(t, proxies, origins[1:5], victim.Stop, func() bool { return len(cl.Primaries()) == 3 })
	heard := listenEverywhere(t, cl)
	firstVisits(t, proxies, origins[40:])
	heard(origins[40])
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{cl.Nodes[5].Addr(), cl.Nodes[4].Addr()}, DisableIdentity: true})
	defer cc.Close()
	if n, err := cc.Exists(context.Background(), origins[40].key(t)).Result(); err != nil || n != 1 {
		t.Fatalf("new origin's entry in the cluster: %d, %v", n, err)
	}
	for _, o := range origins {
		if n := o.leaked.Load(); n != 0 {
			t.Errorf("%s: %d disallowed requests reached the origin", o.srv.URL, n)
		}
	}
}

// clusterPacing sends four concurrent requests for o's /paced, two
// through each proxy: the origin's Crawl-delay (0.4 s) spaces them
// fleet-wide. Gaps are lower bounds (a late arrival only widens the next
// gap), checked with a margin for scheduling.
func clusterPacing(t *testing.T, proxies []*running, o *haOrigin) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			if c := haGet(proxies[i%2], o.srv.URL+"/paced"); c != 200 {
				t.Errorf("paced request %d: status %d", i, c)
			}
		})
	}
	wg.Wait()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.arrivals) != 4 {
		t.Fatalf("%d paced requests arrived, want 4", len(o.arrivals))
	}
	if span := o.arrivals[3].Sub(o.arrivals[0]); span < 3*400*time.Millisecond-150*time.Millisecond {
		t.Fatalf("4 requests through two proxies arrived within %v: not paced fleet-wide (Crawl-delay 0.4 s)", span)
	}
}

// clusterPause: a 503 with Retry-After seen through one proxy pauses the
// origin for the other.
func clusterPause(t *testing.T, proxies []*running, o *haOrigin) {
	t.Helper()
	if c := haGet(proxies[0], o.srv.URL+"/busy"); c != 503 {
		t.Fatalf("/busy: status %d, want the origin's 503", c)
	}
	// The other proxy learns of the pause from Redis (its cached "no
	// pause" lookup is dropped by the announcement, or expires in 1 s).
	redistest.WaitFor(t, "the other proxy to honour the pause", func() bool {
		resp, err := proxies[1].client.Get(o.srv.URL + "/page")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == 503 && resp.Header.Get("Retry-After") != ""
	})
}

// listenEverywhere subscribes to the announcement channel on every
// running node of the cluster, each through a connection of its own; the
// returned function waits until each of them has heard that o changed.
func listenEverywhere(t *testing.T, cl *redistest.ClusterSet) func(o *haOrigin) {
	t.Helper()
	var subs []*redis.PubSub
	for _, n := range cl.Nodes {
		if !n.Running() {
			continue
		}
		c := redis.NewClient(&redis.Options{Addr: n.Addr(), DisableIdentity: true})
		t.Cleanup(func() { c.Close() })
		ps := c.Subscribe(context.Background(), "robotsgate:events")
		if _, err := ps.Receive(context.Background()); err != nil { // the confirmation
			t.Fatal(err)
		}
		t.Cleanup(func() { ps.Close() })
		subs = append(subs, ps)
	}
	return func(o *haOrigin) {
		t.Helper()
		u, _ := url.Parse(o.srv.URL)
		origin, _ := enforce.Origin(u)
		for i, ps := range subs {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			for {
				m, err := ps.ReceiveMessage(ctx)
				if err != nil {
					cancel()
					t.Fatalf("node %d of %d: no announcement of %s: %v", i, len(subs), origin, err)
				}
				if strings.HasPrefix(m.Payload, "r ") && strings.HasSuffix(m.Payload, " "+origin) {
					break
				}
			}
			cancel()
		}
	}
}
