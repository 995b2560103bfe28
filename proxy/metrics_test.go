package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/metrics"
)

// opsRobots is the robots.txt of the ops tests' origin.
const opsRobots = "User-agent: *\nDisallow: /private\n\nUser-agent: SlowBot\nCrawl-delay: 2\nDisallow: /\n\nSitemap: http://example.test/sitemap.xml\n"

// opsOrigin is a loopback origin that counts hits per path and keeps the
// headers of the last request.
type opsOrigin struct {
	*httptest.Server
	originLog
}

func newOpsOrigin(t *testing.T) *opsOrigin {
	o := &opsOrigin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.sawHeader(r)
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, opsRobots)
		case "/busy": // asks crawlers to back off
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/boom": // no response at all: an upstream error
			if hj, ok := w.(http.Hijacker); ok {
				c, _, _ := hj.Hijack()
				c.Close()
			}
		default:
			io.WriteString(w, "hello "+r.URL.Path)
		}
	}))
	t.Cleanup(o.Close)
	return o
}

// opsProxy is a whole robotsgate Server on a loopback port.
type opsProxy struct {
	srv       *Server
	addr      string // host:port of the proxy
	url       *url.URL
	metrics   *metrics.Metrics
	auditor   *audit.Auditor
	auditPath string
	logs      *memAudit // operator log, debug level
}

// startOpsProxy starts a Server for the test configuration changed by
// mutate (the audit log goes to a temp file unless mutate sets it), with
// metrics and a debug-level operator log, and stops it at cleanup.
func startOpsProxy(t *testing.T, mutate func(*config.Config), deps ...func(*Deps)) *opsProxy {
	t.Helper()
	cfg := testConfig(t)
	cfg.Listen = "127.0.0.1:0"
	cfg.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl")
	if mutate != nil {
		mutate(&cfg)
	}
	p := &opsProxy{metrics: NewMetrics(), auditPath: cfg.AuditLog, logs: &memAudit{}}
	store := enforce.NewMemoryStore(cfg.Robots.MaxEntries, int64(cfg.Robots.MaxCacheMB)<<20)
	p.metrics.CacheEntriesFunc(store.Len)
	log := zerolog.New(p.logs).Level(zerolog.DebugLevel)
	aw, err := audit.Open(cfg.AuditLog, audit.Rotation{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p.auditor = audit.New(aw)
	d := Deps{Auditor: p.auditor, Log: log, Metrics: p.metrics}
	for _, f := range deps {
		f(&d)
	}
	p.srv, p.addr = startServer(t, cfg, enforce.Config{Store: store, Log: log, Hooks: p.metrics.EnforceHooks()}, d)
	p.url = &url.URL{Scheme: "http", Host: p.addr}
	// Serve registers its http.Server synchronously before accepting;
	// wait until the server is ready so that tests can use /readyz.
	testsupport.WaitFor(t, "the proxy to be ready", func() bool { return p.srv.ready() == nil })
	return p
}

// client returns an HTTP client using the proxy, with optional Basic
// proxy credentials.
func (p *opsProxy) client(userinfo *url.Userinfo) *http.Client {
	u := *p.url
	u.User = userinfo
	return &http.Client{
		Transport: &http.Transport{Proxy: http.ProxyURL(&u), DisableKeepAlives: true},
		Timeout:   10 * time.Second,
	}
}

// opsGet GETs u with c (headers as name, value pairs) and returns the
// status, body and header.
func opsGet(t *testing.T, c *http.Client, u string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	resp, body := do(t, c, newGet(t, u, hdr...))
	return resp.StatusCode, body, resp.Header
}

// scrape returns the metrics exposition of the Server's /metrics
// (requested from the proxy port directly, as Prometheus would).
func (p *opsProxy) scrape(t *testing.T) string {
	t.Helper()
	code, body, _ := opsGet(t, http.DefaultClient, "http://"+p.addr+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	return body
}

// assertMetrics checks the value of every series of want (see
// [testsupport.MetricValue]) in an exposition.
func assertMetrics(t *testing.T, exposition string, want map[string]float64) {
	t.Helper()
	for series, w := range want {
		if v := testsupport.MetricValue(t, exposition, series); v != w {
			t.Errorf("%s = %v, want %v", series, v, w)
		}
	}
}

func TestMetricsMoveWithProxiedRequests(t *testing.T) {
	o := newOpsOrigin(t)
	p := startOpsProxy(t, nil)

	before := p.scrape(t)
	for _, s := range []string{
		`robotsgate_decisions_total{decision="blocked",reason="disallowed"}`,
		`robotsgate_decisions_total{decision="allowed",reason="allowed"}`,
		`robotsgate_robots_fetches_total{status_class="2xx"}`,
		`robotsgate_robots_cache_lookups_total{result="hit"}`,
		`robotsgate_upstream_errors_total`,
		`robotsgate_robots_cache_entries`,
		`robotsgate_paused_origins`,
		`robotsgate_queued_requests`,
		`robotsgate_inflight_requests`,
		`robotsgate_robots_fetch_duration_seconds_count`,
	} {
		if v := testsupport.MetricValue(t, before, s); v != 0 {
			t.Errorf("before any request: %s = %v, want 0 (present)", s, v)
		}
	}
	for _, s := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if testsupport.MetricValue(t, before, s) < 0 {
			t.Errorf("%s missing: Go/process collectors not registered", s)
		}
	}

	c := p.client(nil)
	if code, body, _ := opsGet(t, c, o.URL+"/ok"); code != 200 || body != "hello /ok" {
		t.Fatalf("allowed: %d %q", code, body)
	}
	if code, _, _ := opsGet(t, c, o.URL+"/private/x"); code != http.StatusForbidden {
		t.Fatalf("disallowed: %d", code)
	}
	if code, _, _ := opsGet(t, c, o.URL+"/private/y"); code != http.StatusForbidden {
		t.Fatalf("disallowed: %d", code)
	}
	if code, _, _ := opsGet(t, c, o.URL+"/boom"); code != http.StatusBadGateway {
		t.Fatalf("/boom: %d, want 502", code)
	}

	after := p.scrape(t)
	want := map[string]float64{
		`robotsgate_decisions_total{decision="allowed",reason="allowed"}`:    2, // /ok, /boom
		`robotsgate_decisions_total{decision="blocked",reason="disallowed"}`: 2,
		`robotsgate_robots_fetches_total{status_class="2xx"}`:                1,
		`robotsgate_robots_fetches_total{status_class="error"}`:              0,
		`robotsgate_robots_cache_lookups_total{result="miss"}`:               1,
		`robotsgate_robots_cache_lookups_total{result="hit"}`:                3,
		`robotsgate_robots_fetch_duration_seconds_count`:                     1,
		`robotsgate_robots_cache_entries`:                                    1,
		`robotsgate_upstream_errors_total`:                                   1,
		`robotsgate_inflight_requests`:                                       0,
	}
	assertMetrics(t, after, want)
	if o.hit("/private/x") != 0 || o.hit("/robots.txt") != 1 {
		t.Errorf("origin hits: %v", o.hits)
	}
}

func TestMetricsQueuedAndPaused(t *testing.T) {
	o := newOpsOrigin(t)
	clk := enforcetest.NewClock(time.Now())
	p := startOpsProxy(t, func(c *config.Config) { c.Politeness.DefaultCrawlDelay = 10 * time.Second },
		func(d *Deps) { d.Clock = clk })
	c := p.client(nil)
	if code, _, _ := opsGet(t, c, o.URL+"/a"); code != 200 {
		t.Fatalf("first request: %d", code)
	}
	// The second request waits 10 s (fake clock) for its crawl-delay slot.
	done := make(chan int, 1)
	go func() {
		resp, err := c.Get(o.URL + "/b")
		if err != nil {
			done <- -1
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	testsupport.WaitFor(t, "the second request to wait for its slot", func() bool { return clk.Waiters() != 0 })
	m := p.scrape(t)
	if v := testsupport.MetricValue(t, m, "robotsgate_queued_requests"); v != 1 {
		t.Errorf("queued while waiting = %v, want 1", v)
	}
	if v := testsupport.MetricValue(t, m, "robotsgate_inflight_requests"); v != 1 {
		t.Errorf("in flight while waiting = %v, want 1", v)
	}
	clk.Advance(10 * time.Second)
	if code := <-done; code != 200 {
		t.Fatalf("second request: %d", code)
	}
	m = p.scrape(t)
	if v := testsupport.MetricValue(t, m, "robotsgate_queued_requests"); v != 0 {
		t.Errorf("queued after = %v, want 0", v)
	}
	if v := testsupport.MetricValue(t, m, "robotsgate_inflight_requests"); v != 0 {
		t.Errorf("in flight after = %v, want 0", v)
	}

	// A 503 with Retry-After pauses the origin; the next request is refused.
	o2 := newOpsOrigin(t)
	p2 := startOpsProxy(t, nil)
	c2 := p2.client(nil)
	if code, _, _ := opsGet(t, c2, o2.URL+"/busy"); code != http.StatusServiceUnavailable {
		t.Fatalf("/busy: %d", code)
	}
	if code, _, _ := opsGet(t, c2, o2.URL+"/ok"); code != http.StatusServiceUnavailable {
		t.Fatalf("request to a paused origin: %d, want 503", code)
	}
	m = p2.scrape(t)
	if v := testsupport.MetricValue(t, m, "robotsgate_paused_origins"); v != 1 {
		t.Errorf("paused origins = %v, want 1", v)
	}
	if v := testsupport.MetricValue(t, m, `robotsgate_decisions_total{decision="blocked",reason="origin-paused"}`); v != 1 {
		t.Errorf("origin-paused decisions = %v, want 1", v)
	}
	if o2.hit("/ok") != 0 {
		t.Error("the paused origin was contacted")
	}
}
