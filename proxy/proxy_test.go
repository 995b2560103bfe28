package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// origin is an httptest origin server counting what reaches it.
type origin struct {
	*httptest.Server
	robotsHits atomic.Int64 // GET /robots.txt
	hits       atomic.Int64 // everything else
	mu         sync.Mutex
	lastHeader http.Header
}

// newOrigin starts an origin whose /robots.txt is served by robotsTxt and
// every other path by page (default: "page <path>").
func newOrigin(t *testing.T, robotsTxt, page http.HandlerFunc) *origin {
	t.Helper()
	o := &origin{}
	if page == nil {
		page = func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "page %s", r.URL.Path) }
	}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			o.robotsHits.Add(1)
			robotsTxt(w, r)
			return
		}
		o.hits.Add(1)
		o.mu.Lock()
		o.lastHeader = r.Header.Clone()
		o.mu.Unlock()
		page(w, r)
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *origin) header() http.Header {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lastHeader
}

// robotsBody serves body as robots.txt.
func robotsBody(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }
}

// robotsStatus answers robots.txt with status.
func robotsStatus(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", status) }
}

// harness is a running Server with its audit log and a client using it.
type harness struct {
	srv    *Server
	addr   string
	audit  *memAudit
	client *http.Client
}

type harnessOpts struct {
	config func(*config.Config)
	clock  enforce.Clock
	hooks  enforce.Hooks
}

// newHarness starts a Server on 127.0.0.1 with the default configuration
// (changed by opts.config) and the real enforce stack.
func newHarness(t *testing.T, opts harnessOpts) *harness {
	t.Helper()
	cfg := testConfig(t)
	cfg.Robots.FetchTimeout = 5 * time.Second
	if opts.config != nil {
		opts.config(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	ma := &memAudit{}
	srv, addr := startServer(t, cfg, enforce.Config{
		Clock:        opts.clock,
		Hooks:        opts.hooks,
		TTL:          cfg.Robots.TTL,
		MinTTL:       cfg.Robots.MinTTL,
		RetryMin:     cfg.Robots.RetryMin,
		RetryMax:     cfg.Robots.RetryMax,
		FetchTimeout: cfg.Robots.FetchTimeout,
	}, Deps{Auditor: audit.New(ma), Clock: opts.clock})
	ctr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr}), DisableCompression: true}
	t.Cleanup(ctr.CloseIdleConnections)
	return &harness{
		srv:    srv,
		addr:   addr,
		audit:  ma,
		client: &http.Client{Transport: ctr, Timeout: testTimeout},
	}
}

// get sends a GET for u through the proxy with the given headers
// (name, value pairs) and User-Agent TestBot/1.0 unless they set one, and
// returns the response with its body read.
func (h *harness) get(t *testing.T, u string, headers ...string) (*http.Response, string) {
	t.Helper()
	return get(t, h.client, u, headers...)
}

const privateRobots = "User-agent: *\nDisallow: /private\n"

func TestAllowedPassesBodyIntact(t *testing.T) {
	big := make([]byte, 1<<20)
	rand.Read(big)
	o := newOrigin(t, robotsBody(privateRobots), func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(big)
		case "/echo":
			h := sha256.New()
			n, _ := io.Copy(h, r.Body)
			fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
		default:
			w.Header().Set("X-Origin", "yes")
			io.WriteString(w, "hello")
		}
	})
	h := newHarness(t, harnessOpts{})

	resp, body := h.get(t, o.URL+"/public")
	if resp.StatusCode != 200 || body != "hello" || resp.Header.Get("X-Origin") != "yes" {
		t.Fatalf("allowed: got %d %q (X-Origin %q), want 200 hello", resp.StatusCode, body, resp.Header.Get("X-Origin"))
	}
	if d := resp.Header.Get(HeaderDecision); d != "" {
		t.Errorf("allowed response has %s: %q", HeaderDecision, d)
	}

	resp, body = h.get(t, o.URL+"/big")
	if resp.StatusCode != 200 || !bytes.Equal([]byte(body), big) {
		t.Fatalf("1 MiB download: status %d, %d bytes, equal=%v", resp.StatusCode, len(body), bytes.Equal([]byte(body), big))
	}

	// A 1 MiB request body reaches the origin intact.
	presp, err := h.client.Post(o.URL+"/echo", "application/octet-stream", bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := io.ReadAll(presp.Body)
	presp.Body.Close()
	if want := fmt.Sprintf("%d %x", len(big), sha256.Sum256(big)); string(pb) != want {
		t.Fatalf("1 MiB upload: origin saw %q, want %q", pb, want)
	}
	if n := o.robotsHits.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1 (cached)", n)
	}
	if recs := h.audit.records(t); len(recs) != 0 {
		t.Errorf("audit=blocked wrote %d records for allowed requests: %v", len(recs), recs)
	}
}

func TestResponseStreamedNotBuffered(t *testing.T) {
	firstSeen := make(chan struct{})
	o := newOrigin(t, robotsBody(privateRobots), func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		// The rest comes only after the client has read the first chunk:
		// a proxy that buffers whole bodies never delivers it.
		select {
		case <-firstSeen:
		case <-time.After(testTimeout):
		}
		io.WriteString(w, "second\n")
	})
	h := newHarness(t, harnessOpts{})
	req, _ := http.NewRequest(http.MethodGet, o.URL+"/stream", nil)
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "first\n" {
		t.Fatalf("first chunk: %q, %v", line, err)
	}
	close(firstSeen)
	rest, _ := io.ReadAll(br)
	if string(rest) != "second\n" {
		t.Fatalf("rest: %q", rest)
	}
}

func TestDisallowedNeverLeaves(t *testing.T) {
	o := newOrigin(t, robotsBody("# comment\nUser-agent: *\nDisallow: /private\n"), nil)
	h := newHarness(t, harnessOpts{})

	resp, body := h.get(t, o.URL+"/private/x?q=1")
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status %d, want 403; body %q", resp.StatusCode, body)
	}
	if n := o.hits.Load(); n != 0 {
		t.Fatalf("origin saw %d requests, want 0", n)
	}
	if got := resp.Header.Get(HeaderDecision); got != "disallowed" {
		t.Errorf("%s = %q, want disallowed", HeaderDecision, got)
	}
	if got := resp.Header.Get(HeaderRule); got != "Disallow: /private; line 3" {
		t.Errorf("%s = %q", HeaderRule, got)
	}
	if got := resp.Header.Get(HeaderAgent); got != "TestBot" {
		t.Errorf("%s = %q, want TestBot", HeaderAgent, got)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want text/plain", ct)
	}
	for _, want := range []string{"agent:    TestBot", "Disallow: /private (line 3)", o.URL + "/private/x?q=1", "disallowed"} {
		if !strings.Contains(body, want) {
			t.Errorf("403 body lacks %q:\n%s", want, body)
		}
	}

	// The client's own /robots.txt is always allowed, even under Disallow: /.
	o2 := newOrigin(t, robotsBody("User-agent: *\nDisallow: /\n"), nil)
	resp, body = h.get(t, o2.URL+"/robots.txt")
	if resp.StatusCode != 200 || !strings.Contains(body, "Disallow: /") {
		t.Fatalf("client GET /robots.txt: %d %q", resp.StatusCode, body)
	}
	resp, _ = h.get(t, o2.URL+"/")
	if resp.StatusCode != http.StatusForbidden || o2.hits.Load() != 0 {
		t.Fatalf("Disallow: / let / through: %d, origin hits %d", resp.StatusCode, o2.hits.Load())
	}
}

func TestRefusalJSON(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), nil)
	h := newHarness(t, harnessOpts{})
	resp, body := h.get(t, o.URL+"/private", "Accept", "text/html;q=0.9, application/json")
	if resp.StatusCode != 403 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var got struct {
		Status   int    `json:"status"`
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
		URL      string `json:"url"`
		Origin   string `json:"origin"`
		Agent    string `json:"agent"`
		Group    string `json:"group"`
		Rule     string `json:"rule"`
		Line     int    `json:"line"`
		Robots   struct {
			Status     string `json:"status"`
			HTTPStatus int    `json:"http_status"`
		} `json:"robots"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, body)
	}
	if got.Status != 403 || got.Decision != "blocked" || got.Reason != "disallowed" || got.URL != o.URL+"/private" || got.Origin != o.URL ||
		got.Agent != "TestBot" || got.Group != "*" || got.Rule != "Disallow: /private" || got.Line != 2 ||
		got.Robots.Status != "ok" || got.Robots.HTTPStatus != 200 {
		t.Fatalf("JSON refusal: %+v", got)
	}
}

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
			if got := resp.Header.Get(HeaderDecision); got != tc.wantWhy {
				t.Errorf("%s = %q, want %q", HeaderDecision, got, tc.wantWhy)
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
		if resp.StatusCode != 502 || resp.Header.Get(HeaderDecision) != "origin-unreachable" {
			t.Fatalf("refused origin: %d %q\n%s", resp.StatusCode, resp.Header.Get(HeaderDecision), body)
		}
		recs := h.audit.records(t)
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
	waitUntil(t, "the re-fetch after the TTL", func() bool {
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
	waitUntil(t, "the failed re-fetch", func() bool {
		en, ok := h.srv.enf.Cached(context.Background(), o.URL)
		return ok && en.Result.Status == enforce.StatusUnreachable
	})
	if n := o.robotsHits.Load(); n != 3 {
		t.Fatalf("re-fetch after expiry: %d fetches, want 3", n)
	}
	resp, _ = h.get(t, o.URL+"/private")
	if resp.StatusCode != 403 || resp.Header.Get(HeaderDecision) != "disallowed" {
		t.Fatalf("stale copy: /private %d %q", resp.StatusCode, resp.Header.Get(HeaderDecision))
	}
	recs := h.audit.records(t)
	last := recs[len(recs)-1]
	if last["robots_stale"] != true || last["robots_status"] != "unreachable" || last["robots_http_status"] != 503.0 {
		t.Fatalf("stale audit record: %v", last)
	}
}

func TestAgentSelection(t *testing.T) {
	const rules = "User-agent: mybot\nDisallow: /a\n\nUser-agent: otherbot\nDisallow: /b\n\nUser-agent: *\nDisallow: /c\n"
	o := newOrigin(t, robotsBody(rules), nil)
	type req struct {
		path, ua, header string
		want             int
		wantAgent        string
	}
	cases := []struct {
		name   string
		config func(*config.Config)
		reqs   []req
	}{
		{"from User-Agent", nil, []req{
			{"/b", "OtherBot/2.1 (+http://x)", "", 403, "OtherBot"},
			{"/b", "Mozilla/5.0 (compatible; OtherBot/2.1; +http://x)", "", 403, "OtherBot"},
			{"/a", "OtherBot/2.1 (+http://x)", "", 200, ""},
			{"/c", "Unknown/1.0", "", 403, "Unknown"},
			{"/c", "", "", 403, "*"},
		}},
		{"configured agent wins over User-Agent", func(c *config.Config) { c.Agent = "MyBot" }, []req{
			{"/a", "OtherBot/2.1", "", 403, "MyBot"},
			{"/b", "OtherBot/2.1", "", 200, ""},
		}},
		{"header overrides both when allowed", func(c *config.Config) { c.Agent, c.AllowAgentOverride = "MyBot", true }, []req{
			{"/b", "MyBot/1.0", "otherbot", 403, "otherbot"},
			{"/a", "MyBot/1.0", "OtherBot/3", 200, ""},
		}},
		{"configured agent refuses the header", func(c *config.Config) { c.Agent = "MyBot" }, []req{
			{"/a", "OtherBot/1.0", "otherbot", 403, "MyBot"},
			{"/b", "MyBot/1.0", "otherbot", 200, ""},
		}},
		{"custom header name", func(c *config.Config) { c.AgentHeader = "X-Crawler" }, []req{
			{"/a", "OtherBot", "mybot", 403, "mybot"},
		}},
		{"header disabled", func(c *config.Config) { c.AgentHeader = "-" }, []req{
			{"/a", "OtherBot", "mybot", 200, ""},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{config: tc.config})
			hdr := h.srv.cfg.AgentHeader
			if hdr == "-" {
				hdr = "X-Robots-Agent"
			}
			for _, r := range tc.reqs {
				q, _ := http.NewRequest(http.MethodGet, o.URL+r.path, nil)
				q.Header.Set("User-Agent", r.ua)
				if r.header != "" {
					q.Header.Set(hdr, r.header)
				}
				resp, err := h.client.Do(q)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != r.want {
					t.Errorf("%s UA=%q %s=%q: %d, want %d", r.path, r.ua, hdr, r.header, resp.StatusCode, r.want)
					continue
				}
				if r.want == 403 {
					if got := resp.Header.Get(HeaderAgent); got != r.wantAgent {
						t.Errorf("%s: agent %q, want %q", r.path, got, r.wantAgent)
					}
					continue
				}
				// Forwarded: the override header never reaches the origin
				// (unless the override is disabled).
				seen := o.header().Get(hdr)
				if h.srv.agents.header != "" && seen != "" {
					t.Errorf("%s: origin saw %s: %q", r.path, hdr, seen)
				}
				if h.srv.agents.header == "" && seen != r.header {
					t.Errorf("%s: override disabled, origin saw %s: %q, want it untouched", r.path, hdr, seen)
				}
			}
		})
	}
}

func TestReportMode(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), nil)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.Mode = ModeReport }})
	resp, body := h.get(t, o.URL+"/private/x")
	if resp.StatusCode != 200 || body != "page /private/x" {
		t.Fatalf("report mode: %d %q, want the origin's page", resp.StatusCode, body)
	}
	if o.hits.Load() != 1 {
		t.Fatalf("origin hits %d, want 1", o.hits.Load())
	}
	if got := resp.Header.Get(HeaderDecision); got != "report-only; disallowed" {
		t.Errorf("%s = %q", HeaderDecision, got)
	}
	h.get(t, o.URL+"/public")
	recs := h.audit.records(t)
	if len(recs) != 1 {
		t.Fatalf("audit records %v, want exactly the would-be block", recs)
	}
	if r := recs[0]; r["decision"] != "reported" || r["mode"] != "report" || r["reason"] != "disallowed" {
		t.Fatalf("report record: %v", r)
	}
}

func TestAuditRecordContent(t *testing.T) {
	o := newOrigin(t, robotsBody("User-agent: testbot\nAllow: /\nDisallow: /secret\n"), nil)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.Audit = AuditAll }})
	h.get(t, o.URL+"/open")
	h.get(t, o.URL+"/secret/1", "User-Agent", "TestBot/9")
	recs := h.audit.records(t)
	if len(recs) != 2 {
		t.Fatalf("audit=all: %d records, want 2: %v", len(recs), recs)
	}
	if recs[0]["decision"] != "allowed" || recs[0]["reason"] != "allowed" {
		t.Errorf("allowed record: %v", recs[0])
	}
	r := recs[1]
	ts, err := time.Parse(time.RFC3339Nano, fmt.Sprint(r["time"]))
	if err != nil || time.Since(ts) > time.Hour {
		t.Errorf("time %v: %v", r["time"], err)
	}
	client, _ := r["client"].(string)
	if host, _, err := net.SplitHostPort(client); err != nil || host != "127.0.0.1" {
		t.Errorf("client %q", client)
	}
	want := map[string]any{
		"decision": "blocked", "reason": "disallowed", "mode": "enforce", "method": "GET",
		"url": o.URL + "/secret/1", "origin": o.URL, "agent": "TestBot", "group": "testbot",
		"rule": "Disallow: /secret", "line": 3.0, "robots_status": "ok", "robots_http_status": 200.0,
		"status": 403.0,
	}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("record[%q] = %v, want %v", k, r[k], v)
		}
	}
	if age, ok := r["robots_age_s"].(float64); !ok || age < 0 {
		t.Errorf("robots_age_s = %v", r["robots_age_s"])
	}
}

func TestUpstreamErrorIs502(t *testing.T) {
	// robots.txt comes from a live origin; the page request fails because
	// the origin hangs up without answering.
	o := newOrigin(t, robotsBody(privateRobots), func(w http.ResponseWriter, r *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.Close()
		}
	})
	h := newHarness(t, harnessOpts{})
	resp, body := h.get(t, o.URL+"/x")
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "forwarding to "+o.URL+" failed: EOF") ||
		resp.Header.Get(HeaderDecision) != string(ReasonUpstreamError) {
		t.Fatalf("got %d %q, want 502", resp.StatusCode, body)
	}
}

func TestHealthz(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	resp, err := http.Get("http://" + h.addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok\n" {
		t.Fatalf("healthz: %d %q", resp.StatusCode, b)
	}
}

func TestShutdownWaitsForInFlight(t *testing.T) {
	arrived := make(chan struct{})
	release := make(chan struct{})
	o := newOrigin(t, robotsBody(privateRobots), func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		select {
		case <-release:
		case <-time.After(testTimeout):
		}
		io.WriteString(w, "done")
	})
	srv, err := buildServer(t, testConfig(t), enforce.Config{}, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: ln.Addr().String()})}}

	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := client.Get(o.URL + "/slow")
		if err != nil {
			got <- result{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- result{string(b), err}
	}()
	<-arrived
	shut := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	go func() { shut <- srv.Shutdown(ctx) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) while a request was in flight", err)
	case r := <-got:
		t.Fatalf("request finished before release: %+v", r)
	case <-served: // Serve returns at once; Shutdown still waits
	}
	close(release)
	if r := <-got; r.err != nil || r.body != "done" {
		t.Fatalf("in-flight request: %+v", r)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}
