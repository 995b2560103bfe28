package enforce

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/robots"
)

const testRobots = "User-agent: *\nDisallow: /private\n"

// testOrigin is an httptest origin on 127.0.0.1 that counts the requests
// for its robots.txt (redirect hops included) and for other paths.
type testOrigin struct {
	srv    *httptest.Server
	robots atomic.Int64 // requests for /robots.txt
	other  atomic.Int64 // requests for anything else
	h      atomic.Pointer[http.HandlerFunc]
}

// newOrigin starts an origin whose /robots.txt is answered by h (change
// it with set).
func newOrigin(t testing.TB, h http.HandlerFunc) *testOrigin {
	t.Helper()
	o := &testOrigin{}
	o.set(h)
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			o.robots.Add(1)
		} else {
			o.other.Add(1)
		}
		(*o.h.Load())(w, r)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *testOrigin) set(h http.HandlerFunc) { o.h.Store(&h) }

func (o *testOrigin) url(path string) *url.URL {
	u, err := url.Parse(o.srv.URL + path)
	if err != nil {
		panic(err)
	}
	return u
}

// serve returns a handler answering code with body and extra headers
// (name, value pairs).
func serve(code int, body string, hdr ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

// redirects returns a handler that redirects /robots.txt to /r1, /r1 to
// /r2, ... /r(n-1) to /rn, and serves testRobots at /rn.
func redirects(n, code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		i := 0
		if r.URL.Path != "/robots.txt" {
			fmt.Sscanf(r.URL.Path, "/r%d", &i)
		}
		if i < n {
			http.Redirect(w, r, fmt.Sprintf("/r%d", i+1), code)
			return
		}
		fmt.Fprint(w, testRobots)
	}
}

// blocking returns a handler that blocks until the test ends.
func blocking(t testing.TB) http.HandlerFunc {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) }) // runs before the server's Close
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}
}

// refusedOrigin returns an origin on 127.0.0.1 where nothing listens.
func refusedOrigin(t testing.TB) string { return "http://" + testsupport.ClosedAddr(t) }

// statusCase is one row of the RFC 9309 §2.3.1 status table, checked
// both at the fetcher and through Decide (on /private/x, which testRobots
// disallows).
type statusCase struct {
	name       string
	handler    func(t testing.TB) http.HandlerFunc // nil: connection refused
	wantStatus Status
	wantHTTP   int
	wantErr    string // substring of FetchResult.Err
	wantFinal  string // suffix of FinalURL
	wantAllow  bool
	wantReason Reason
}

func statusCases() []statusCase {
	fixed := func(h http.HandlerFunc) func(testing.TB) http.HandlerFunc {
		return func(testing.TB) http.HandlerFunc { return h }
	}
	return append([]statusCase{
		{"200", fixed(serve(200, testRobots)), StatusOK, 200, "", "/robots.txt", false, ReasonDisallowed},
		{"301-301-200", fixed(redirects(2, 301)), StatusOK, 200, "", "/r2", false, ReasonDisallowed},
		{"5 redirects", fixed(redirects(5, 302)), StatusOK, 200, "", "/r5", false, ReasonDisallowed},
		{"6 redirects", fixed(redirects(6, 301)), StatusUnavailable, 301, "too many redirects", "/r5", true, ReasonRobotsUnavailable},

		{"404", fixed(serve(404, "nope")), StatusUnavailable, 404, "404", "", true, ReasonRobotsUnavailable},
		{"401", fixed(serve(401, "")), StatusUnavailable, 401, "401", "", true, ReasonRobotsUnavailable},
		{"403", fixed(serve(403, "")), StatusUnavailable, 403, "403", "", true, ReasonRobotsUnavailable},
		{"410", fixed(serve(410, "")), StatusUnavailable, 410, "410", "", true, ReasonRobotsUnavailable},
		{"429", fixed(serve(429, "")), StatusUnreachable, 429, "429", "", false, ReasonRobotsUnreachable},
		{"500", fixed(serve(500, testRobots)), StatusUnreachable, 500, "500", "", false, ReasonRobotsUnreachable},
		{"503", fixed(serve(503, "")), StatusUnreachable, 503, "503", "", false, ReasonRobotsUnreachable},
		{"timeout", blocking, StatusUnreachable, 0, "timeout", "", false, ReasonOriginUnreachable},
		{"connection refused", nil, StatusUnreachable, 0, "refused", "", false, ReasonOriginUnreachable},
	}, edgeStatusCases()...)
}

// start returns the origin for c.
func (c statusCase) start(t testing.TB) (origin string, o *testOrigin) {
	if c.handler == nil {
		return refusedOrigin(t), nil
	}
	o = newOrigin(t, c.handler(t))
	return o.srv.URL, o
}

func TestHTTPFetcherStatusTable(t *testing.T) {
	for _, c := range statusCases() {
		t.Run(c.name, func(t *testing.T) {
			origin, _ := c.start(t)
			f := &HTTPFetcher{MaxRedirects: testRedirects, Timeout: 300 * time.Millisecond}
			r := f.Fetch(context.Background(), origin)
			if r.Status != c.wantStatus || r.HTTPStatus != c.wantHTTP {
				t.Fatalf("Fetch = %s/%d (%s), want %s/%d", r.Status, r.HTTPStatus, r.Err, c.wantStatus, c.wantHTTP)
			}
			if !strings.Contains(r.Err, c.wantErr) || (c.wantErr == "") != (r.Err == "") {
				t.Errorf("Err = %q, want it to contain %q", r.Err, c.wantErr)
			}
			if !strings.HasSuffix(r.FinalURL, c.wantFinal) || !strings.HasPrefix(r.FinalURL, origin) {
				t.Errorf("FinalURL = %q, want %s...%s", r.FinalURL, origin, c.wantFinal)
			}
			if c.wantStatus == StatusOK && string(r.Body) != testRobots {
				t.Errorf("Body = %q", r.Body)
			}
			if c.wantStatus != StatusOK && r.Body != nil {
				t.Errorf("Body = %q for a failure", r.Body)
			}
		})
	}
}

func TestDecideStatusTable(t *testing.T) {
	for _, c := range statusCases() {
		t.Run(c.name, func(t *testing.T) {
			origin, o := c.start(t)
			e := newTestEnforcer(t, Config{
				Fetcher:      &HTTPFetcher{MaxRedirects: testRedirects, Timeout: time.Minute},
				FetchTimeout: 300 * time.Millisecond,
			}, nil)
			u, _ := url.Parse(origin + "/private/x?y=1")
			d := e.Decide(context.Background(), u, "", DecideOptions{})
			if d.Allowed != c.wantAllow || d.Reason != c.wantReason {
				t.Fatalf("Decide = %v/%s (%s), want %v/%s", d.Allowed, d.Reason, d.Detail, c.wantAllow, c.wantReason)
			}
			if d.RobotsStatus != c.wantStatus || d.RobotsHTTPStatus != c.wantHTTP || d.Origin != origin || d.URL != u.String() {
				t.Errorf("Decision = %+v", d)
			}
			switch d.Reason {
			case ReasonDisallowed:
				if d.Rule != "Disallow: /private" || d.Line != 2 || d.Group != "*" || d.Detail != "" {
					t.Errorf("rule fields = %q line %d group %q detail %q", d.Rule, d.Line, d.Group, d.Detail)
				}
			case ReasonRobotsUnreachable, ReasonOriginUnreachable:
				if !strings.Contains(d.Detail, "reach") || !strings.Contains(d.Detail, c.wantErr) ||
					!strings.Contains(d.Detail, "tried again in") || d.RetryAfter <= 0 {
					t.Errorf("Detail = %q", d.Detail)
				}
			case ReasonRobotsUnavailable:
				if !strings.Contains(d.Detail, "no robots.txt") {
					t.Errorf("Detail = %q", d.Detail)
				}
			}
			// A second decision comes from the cache (failures are retried
			// with backoff, not on every request).
			if o != nil {
				n := o.robots.Load()
				e.Decide(context.Background(), u, "", DecideOptions{})
				if o.robots.Load() != n {
					t.Errorf("second Decide fetched again")
				}
				if o.other.Load() != 0 && c.wantFinal == "" {
					t.Errorf("origin saw %d non-robots requests", o.other.Load())
				}
			}
		})
	}
}

func TestHTTPFetcherCrossHostRedirect(t *testing.T) {
	b := newOrigin(t, serve(200, "User-agent: *\nDisallow: /from-b\n"))
	a := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") != "testbot/1" {
			t.Errorf("User-Agent = %q", r.Header.Get("User-Agent"))
		}
		http.Redirect(w, r, b.srv.URL+"/robots.txt", http.StatusMovedPermanently)
	})
	f := &HTTPFetcher{MaxRedirects: testRedirects, UserAgent: "testbot/1"}
	r := f.Fetch(context.Background(), a.srv.URL)
	if r.Status != StatusOK || r.FinalURL != b.srv.URL+"/robots.txt" || !strings.Contains(string(r.Body), "/from-b") {
		t.Fatalf("Fetch = %+v", r)
	}
	if a.robots.Load() != 1 || b.robots.Load() != 1 {
		t.Errorf("hits a=%d b=%d", a.robots.Load(), b.robots.Load())
	}
	e := newTestEnforcer(t, Config{Fetcher: f}, nil)
	if d := e.Decide(context.Background(), a.url("/from-b/x"), "", DecideOptions{}); d.Allowed || d.Rule != "Disallow: /from-b" {
		t.Errorf("Decide = %+v", d)
	}
}

func TestHTTPFetcherOversizedBody(t *testing.T) {
	const limit = 4 << 10
	body := "User-agent: *\nDisallow: /early\n" + strings.Repeat("# padding\n", limit/10) + "Disallow: /late\n"
	o := newOrigin(t, serve(200, body, "Cache-Control", "public, max-age=\"120\""))
	f := &HTTPFetcher{MaxRedirects: testRedirects, MaxBytes: limit}
	r := f.Fetch(context.Background(), o.srv.URL)
	if r.Status != StatusOK || !r.Truncated || len(r.Body) != limit || r.MaxAge != 2*time.Minute || !r.HasMaxAge {
		t.Fatalf("Fetch: status %s truncated %v len %d max-age %v", r.Status, r.Truncated, len(r.Body), r.MaxAge)
	}
	e := newTestEnforcer(t, Config{Fetcher: f, MaxBytes: limit}, nil)
	if d := e.Decide(context.Background(), o.url("/early/x"), "", DecideOptions{}); d.Allowed {
		t.Errorf("/early allowed: %+v", d)
	}
	if d := e.Decide(context.Background(), o.url("/late/x"), "", DecideOptions{}); !d.Allowed {
		t.Errorf("/late (past the limit) disallowed: %+v", d)
	}
}

func TestHTTPFetcherDefaultLimit(t *testing.T) {
	body := "User-agent: *\nDisallow: /early\n" + strings.Repeat("#", robots.DefaultMaxBytes) + "\nDisallow: /late\n"
	o := newOrigin(t, serve(200, body))
	r := (&HTTPFetcher{MaxRedirects: testRedirects}).Fetch(context.Background(), o.srv.URL)
	if r.Status != StatusOK || !r.Truncated || len(r.Body) != robots.DefaultMaxBytes {
		t.Fatalf("Fetch: status %s truncated %v len %d", r.Status, r.Truncated, len(r.Body))
	}
	e := newTestEnforcer(t, Config{Fetcher: &HTTPFetcher{MaxRedirects: testRedirects}}, nil)
	if d := e.Decide(context.Background(), o.url("/early"), "", DecideOptions{}); d.Allowed {
		t.Errorf("/early allowed")
	}
	if d := e.Decide(context.Background(), o.url("/late"), "", DecideOptions{}); !d.Allowed {
		t.Errorf("/late disallowed")
	}
}

func TestHTTPFetcherCallerContext(t *testing.T) {
	o := newOrigin(t, blocking(t))
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan FetchResult, 1)
	go func() { res <- (&HTTPFetcher{MaxRedirects: testRedirects}).Fetch(ctx, o.srv.URL) }()
	cancel()
	select {
	case r := <-res:
		if r.Status != StatusUnreachable || r.Err == "" {
			t.Errorf("Fetch = %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Fetch ignored its context")
	}
}

func TestMaxAge(t *testing.T) {
	tests := []struct {
		h    []string
		want time.Duration
	}{
		{nil, 0},
		{[]string{"max-age=60"}, time.Minute},
		{[]string{"public, Max-Age=3600"}, time.Hour},
		{[]string{"no-cache", "max-age=\"5\""}, 5 * time.Second},
		{[]string{"s-maxage=10, max-age=20"}, 20 * time.Second},
		{[]string{"max-age=-1"}, 0},
		{[]string{"max-age=abc"}, 0},
		{[]string{"max-age=99999999999999999999"}, 0},
		{[]string{"max-age=9999999999999"}, time.Duration(1<<63-1) / time.Second * time.Second},
	}
	for _, tt := range tests {
		h := http.Header{}
		for _, v := range tt.h {
			h.Add("Cache-Control", v)
		}
		if got, ok := maxAge(h); got != tt.want || ok != (tt.want != 0) {
			t.Errorf("maxAge(%q) = %v, want %v", tt.h, got, tt.want)
		}
	}
}

// newTestEnforcer returns an Enforcer on cfg with a fake clock (set in
// cfg.Clock unless given) and a test logger.
func newTestEnforcer(t testing.TB, cfg Config, clock *enforcetest.Clock) *Enforcer {
	t.Helper()
	if cfg.Clock == nil {
		if clock == nil {
			clock = enforcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		}
		cfg.Clock = clock
	}
	e, err := New(filled(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return e
}
