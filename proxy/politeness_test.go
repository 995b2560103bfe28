package proxy

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

var politeT0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// stampOrigin is an origin that records, for every page request, its path
// and the fake clock's time when the request arrived.
type stampOrigin struct {
	*origin
	mu    sync.Mutex
	paths []string
	times []time.Time
}

func newStampOrigin(t *testing.T, robots string, clk *enforcetest.Clock, page http.HandlerFunc) *stampOrigin {
	so := &stampOrigin{}
	so.origin = newOrigin(t, robotsBody(robots), func(w http.ResponseWriter, r *http.Request) {
		so.mu.Lock()
		so.paths = append(so.paths, r.URL.Path)
		so.times = append(so.times, clk.Now())
		so.mu.Unlock()
		if page != nil {
			page(w, r)
			return
		}
		w.Write([]byte("ok"))
	})
	return so
}

func (so *stampOrigin) seen() ([]string, []time.Time) {
	so.mu.Lock()
	defer so.mu.Unlock()
	return append([]string(nil), so.paths...), append([]time.Time(nil), so.times...)
}

type getResult struct {
	path   string
	status int
	header http.Header
	body   string
}

// getAsync GETs u through the proxy in a goroutine.
func (h *harness) getAsync(t *testing.T, u string, out chan<- getResult) {
	go func() {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("User-Agent", "TestBot/1.0")
		resp, err := h.client.Do(req)
		if err != nil {
			out <- getResult{path: u, body: err.Error()}
			return
		}
		defer resp.Body.Close()
		var sb strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			sb.Write(buf[:n])
			if err != nil {
				break
			}
		}
		out <- getResult{path: u, status: resp.StatusCode, header: resp.Header, body: sb.String()}
	}()
}

// politeRecords returns the audit records with the given reason.
func politeRecords(t *testing.T, h *harness, reason string) []map[string]any {
	var out []map[string]any
	for _, r := range h.audit.Records(t) {
		if r["reason"] == reason {
			out = append(out, r)
		}
	}
	return out
}

func TestPoliteCrawlDelaySpacingAtOrigin(t *testing.T) {
	clk := enforcetest.NewClock(politeT0)
	o := newStampOrigin(t, "User-agent: *\nCrawl-delay: 5\nDisallow: /private\n", clk, nil)
	h := newHarness(t, harnessOpts{clock: clk})

	if resp, _ := h.get(t, o.URL+"/p0"); resp.StatusCode != 200 {
		t.Fatalf("first request: %d", resp.StatusCode)
	}
	const n = 4
	out := make(chan getResult, n)
	for i := 1; i < n; i++ {
		h.getAsync(t, o.URL+"/p"+string(rune('0'+i)), out)
		testsupport.WaitFor(t, "request waiting for its slot", func() bool { return clk.Waiters() == i })
	}
	for i := 1; i < n; i++ {
		if paths, _ := o.seen(); len(paths) != i {
			t.Fatalf("origin saw %d requests before the clock reached slot %d", len(paths), i)
		}
		clk.Advance(5 * time.Second)
		if r := <-out; r.status != 200 {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	paths, times := o.seen()
	for i := range n {
		if want := "/p" + string(rune('0'+i)); paths[i] != want {
			t.Errorf("origin's request %d was %s, want %s (FIFO)", i, paths[i], want)
		}
		if want := politeT0.Add(time.Duration(i) * 5 * time.Second); !times[i].Equal(want) {
			t.Errorf("origin saw request %d at %v, want %v", i, times[i].Sub(politeT0), want.Sub(politeT0))
		}
	}
	// Disallowed requests are refused by robots.txt and take no slot.
	if resp, _ := h.get(t, o.URL+"/private"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("disallowed: %d", resp.StatusCode)
	}
	if clk.Waiters() != 0 {
		t.Fatal("a disallowed request waited for a slot")
	}
}

func TestPoliteQueueFull429(t *testing.T) {
	clk := enforcetest.NewClock(politeT0)
	o := newStampOrigin(t, "User-agent: *\nCrawl-delay: 5\n", clk, nil)
	h := newHarness(t, harnessOpts{clock: clk, config: func(c *config.Config) { c.Politeness.MaxQueueWait = 10 * time.Second }})

	h.get(t, o.URL+"/a")
	out := make(chan getResult, 2)
	h.getAsync(t, o.URL+"/b", out) // waits 5s
	testsupport.WaitFor(t, "b waiting", func() bool { return clk.Waiters() == 1 })
	h.getAsync(t, o.URL+"/c", out) // waits 10s
	testsupport.WaitFor(t, "c waiting", func() bool { return clk.Waiters() == 2 })

	resp, body := h.get(t, o.URL+"/d", "Accept", "application/json") // would wait 15s
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "15" ||
		resp.Header.Get(answer.HeaderDecision) != "crawl-delay-wait" || !strings.Contains(body, `"retry_after_s": 15`) {
		t.Fatalf("overflow: %d Retry-After %q %s %q\n%s", resp.StatusCode, resp.Header.Get("Retry-After"),
			answer.HeaderDecision, resp.Header.Get(answer.HeaderDecision), body)
	}
	if e, d := proxyStatus(t, resp); e != answer.PSDenied || !strings.HasPrefix(d, "crawl-delay-wait") {
		t.Errorf("overflow: Proxy-Status error=%s details=%q", e, d)
	}
	recs := politeRecords(t, h, "crawl-delay-wait")
	if len(recs) != 1 || recs[0]["decision"] != audit.DecisionBlocked || recs[0]["status"] != float64(429) ||
		!strings.HasSuffix(recs[0]["url"].(string), "/d") || !strings.Contains(recs[0]["detail"].(string), "Retry-After 15s") {
		t.Fatalf("audit records: %v", recs)
	}
	for range 2 {
		clk.Advance(5 * time.Second)
		if r := <-out; r.status != 200 {
			t.Fatalf("queued request: %d %s", r.status, r.body)
		}
	}
	if paths, _ := o.seen(); strings.Join(paths, ",") != "/a,/b,/c" {
		t.Fatalf("origin saw %v; the refused request must never reach it", paths)
	}
}

func TestPolite503RetryAfterPausesOrigin(t *testing.T) {
	clk := enforcetest.NewClock(politeT0)
	var mu sync.Mutex
	overloaded := true
	o := newStampOrigin(t, "User-agent: *\nAllow: /\n", clk, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if overloaded {
			w.Header().Set("Retry-After", "120")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	})
	h := newHarness(t, harnessOpts{clock: clk})

	// The origin's own 503 reaches the client unchanged.
	if resp, body := h.get(t, o.URL+"/1"); resp.StatusCode != 503 || resp.Header.Get(answer.HeaderDecision) != "" ||
		resp.Header.Get(answer.HeaderProxyStatus) != "" || !strings.Contains(body, "busy") {
		t.Fatalf("origin's 503: %d %q", resp.StatusCode, body)
	}
	for _, step := range []struct {
		advance time.Duration
		retry   string
	}{{0, "120"}, {60 * time.Second, "60"}, {59*time.Second + 500*time.Millisecond, "1"}} {
		clk.Advance(step.advance)
		resp, body := h.get(t, o.URL+"/2")
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != step.retry || resp.Header.Get(answer.HeaderDecision) != "origin-paused" || resp.Header.Get(answer.HeaderRule) != "" {
			t.Fatalf("paused +%v: %d Retry-After %q %q\n%s", clk.Now().Sub(politeT0), resp.StatusCode,
				resp.Header.Get("Retry-After"), resp.Header.Get(answer.HeaderDecision), body)
		}
		if e, d := proxyStatus(t, resp); e != answer.PSDenied || !strings.HasPrefix(d, "origin-paused") {
			t.Errorf("paused: Proxy-Status error=%s details=%q", e, d)
		}
	}
	if paths, _ := o.seen(); len(paths) != 1 {
		t.Fatalf("origin saw %d requests while paused, want 1 (the first)", len(paths))
	}
	recs := politeRecords(t, h, "origin-paused")
	if len(recs) != 3 || recs[0]["decision"] != audit.DecisionBlocked || recs[0]["status"] != float64(503) {
		t.Fatalf("audit records: %v", recs)
	}

	mu.Lock()
	overloaded = false
	mu.Unlock()
	clk.Advance(500 * time.Millisecond) // the 120s have passed
	for i := range 2 {
		if resp, body := h.get(t, o.URL+"/3"); resp.StatusCode != 200 {
			t.Fatalf("after the pause, request %d: %d %q", i, resp.StatusCode, body)
		}
	}
	if paths, _ := o.seen(); len(paths) != 3 {
		t.Fatalf("origin saw %d requests, want 3", len(paths))
	}
}

func TestPolite429WithoutRetryAfterBacksOff(t *testing.T) {
	clk := enforcetest.NewClock(politeT0)
	o := newStampOrigin(t, "User-agent: *\nAllow: /\n", clk, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "slow down", http.StatusTooManyRequests)
	})
	h := newHarness(t, harnessOpts{clock: clk, config: func(c *config.Config) { c.Politeness.BackoffStart = 10 * time.Second }})
	for i, want := range []string{"10", "20", "40"} {
		h.get(t, o.URL+"/x") // reaches the origin, which answers 429
		resp, _ := h.get(t, o.URL+"/x")
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != want {
			t.Fatalf("failure %d: %d Retry-After %q, want 503 and %s", i+1, resp.StatusCode, resp.Header.Get("Retry-After"), want)
		}
		clk.Advance(time.Hour)
	}
	if paths, _ := o.seen(); len(paths) != 3 {
		t.Fatalf("origin saw %d requests, want 3", len(paths))
	}
}

func TestPoliteReportModeDoesNotWaitOrRefuse(t *testing.T) {
	clk := enforcetest.NewClock(politeT0)
	o := newStampOrigin(t, "User-agent: *\nCrawl-delay: 5\n", clk, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			w.Header().Set("Retry-After", "60")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	})
	h := newHarness(t, harnessOpts{clock: clk, config: func(c *config.Config) {
		c.Mode = config.ModeReport
		c.Politeness.MaxQueueWait = 7 * time.Second
	}})
	// Slots t0 and t0+5s fit in 7s, t0+10s would not: nobody waits, the
	// third is reported.
	for i := range 3 {
		resp, _ := h.get(t, o.URL+"/ok")
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
		want := ""
		if i == 2 {
			want = "report-only; crawl-delay-wait"
		}
		if got := resp.Header.Get(answer.HeaderDecision); got != want {
			t.Fatalf("request %d: %s %q, want %q", i, answer.HeaderDecision, got, want)
		}
	}
	if clk.Waiters() != 0 {
		t.Fatal("report mode waited")
	}
	clk.Advance(time.Minute) // the simulated queue has drained
	h.get(t, o.URL+"/busy")
	resp, _ := h.get(t, o.URL+"/ok")
	if resp.StatusCode != 200 || resp.Header.Get(answer.HeaderDecision) != "report-only; origin-paused" {
		t.Fatalf("paused origin in report mode: %d %q", resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
	}
	if paths, _ := o.seen(); len(paths) != 5 {
		t.Fatalf("origin saw %d requests, want all 5", len(paths))
	}
	for _, reason := range []string{"crawl-delay-wait", "origin-paused"} {
		recs := politeRecords(t, h, reason)
		if len(recs) != 1 || recs[0]["decision"] != audit.DecisionReported || recs[0]["status"] != nil {
			t.Fatalf("%s audit records: %v", reason, recs)
		}
	}
}

func TestPoliteConcurrencyLimitReleasedAtEnd(t *testing.T) {
	secondWaitsForFirst(t, nil, nil)
}

// secondWaitsForFirst checks, with politeness.max_concurrency 1, that a
// request to an origin waits while another one is in flight there and
// goes once that one ends (its slot released at the end); between, when
// not nil, runs while the first is in flight. load is the harness's
// configuration source (Deps.Load).
func secondWaitsForFirst(t *testing.T, load func() (config.Config, error), between func(h *harness)) {
	t.Helper()
	clk := enforcetest.NewClock(politeT0)
	unblock := make(chan struct{})
	o := newStampOrigin(t, "User-agent: *\nAllow: /\n", clk, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-unblock:
			case <-time.After(testTimeout):
			}
		}
		w.Write([]byte("ok"))
	})
	h := newHarness(t, harnessOpts{clock: clk, load: load, config: func(c *config.Config) { c.Politeness.MaxConcurrency = 1 }})
	h.get(t, o.URL+"/warm") // fetches robots.txt; its slot is released at the end
	out := make(chan getResult, 2)
	h.getAsync(t, o.URL+"/slow", out)
	testsupport.WaitFor(t, "slow request at the origin", func() bool { p, _ := o.seen(); return len(p) == 2 })
	if between != nil {
		between(h)
	}
	h.getAsync(t, o.URL+"/next", out)
	testsupport.WaitFor(t, "next waiting for a slot", func() bool { return clk.Waiters() == 1 })
	if p, _ := o.seen(); len(p) != 2 {
		t.Fatalf("second request reached the origin while the first was in flight: %v", p)
	}
	close(unblock)
	for range 2 {
		if r := <-out; r.status != 200 {
			t.Fatalf("%s: %d %s", r.path, r.status, r.body)
		}
	}
	if p, _ := o.seen(); strings.Join(p, ",") != "/warm,/slow,/next" {
		t.Fatalf("origin saw %v", p)
	}
}

// TestPoliteMITMPacingAndPause checks that requests inside a MITM session
// are paced and paused like plain-HTTP ones.
func TestPoliteMITMPacingAndPause(t *testing.T) {
	clk := enforcetest.NewClock(politeT0)
	var mu sync.Mutex
	var seen []string
	o := &tlsOrigin{}
	o.Server = quietTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nCrawl-delay: 5\n")
			return
		}
		mu.Lock()
		seen = append(seen, r.URL.Path+"@"+clk.Now().Sub(politeT0).String())
		mu.Unlock()
		if r.URL.Path == "/busy" {
			w.Header().Set("Retry-After", "30")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(o.Close)
	cfg := mitmConfig(t, o)
	ab := &memAudit{}
	srv, addr := startServer(t, cfg, enforce.Config{Clock: clk}, Deps{Auditor: audit.New(ab), Clock: clk})
	p := newHTTPSProxy(t, srv, addr, ab)
	c := p.client(p.ca)

	if resp, body := get(t, c, o.URL+"/a"); resp.StatusCode != 200 {
		t.Fatalf("/a: %d %s", resp.StatusCode, body)
	}
	done := make(chan int, 1)
	busy, _ := http.NewRequest(http.MethodGet, o.URL+"/busy", nil)
	busy.Header.Set("User-Agent", "TestBot/1.0")
	go func() {
		resp, err := c.Do(busy)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	testsupport.WaitFor(t, "/busy waiting for its slot", func() bool { return clk.Waiters() == 1 })
	clk.Advance(5 * time.Second)
	if s := <-done; s != 503 {
		t.Fatalf("/busy: %d, want the origin's 503", s)
	}
	resp, _ := get(t, c, o.URL+"/b")
	if resp.StatusCode != 503 || resp.Header.Get(answer.HeaderDecision) != "origin-paused" || resp.Header.Get("Retry-After") != "30" {
		t.Fatalf("paused origin over MITM: %d %q Retry-After %q", resp.StatusCode, resp.Header.Get(answer.HeaderDecision), resp.Header.Get("Retry-After"))
	}
	mu.Lock()
	got := strings.Join(seen, ",")
	mu.Unlock()
	if got != "/a@0s,/busy@5s" {
		t.Fatalf("origin saw %s, want /a@0s,/busy@5s", got)
	}
}

// TestPoliteConcurrencyKeptAcrossReload: a reload (here one that changes
// another politeness setting) keeps counting the requests in flight
// against politeness.max_concurrency: a second request to the origin
// waits for the first to end instead of joining it.
func TestPoliteConcurrencyKeptAcrossReload(t *testing.T) {
	src := &swappable{}
	secondWaitsForFirst(t, src.load, func(h *harness) {
		next := h.srv.live.Load().cfg
		next.Politeness.MaxQueueWait *= 2
		src.set(next, nil)
		if res, err := h.srv.Reload("test"); err != nil || res.Result != ReloadOK {
			t.Fatalf("reload: %+v %v", res, err)
		}
	})
}
