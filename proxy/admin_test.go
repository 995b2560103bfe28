package proxy

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/admin"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// adminDo sends method path to the admin API at base with an optional
// bearer token and decodes a JSON answer into out (when not nil).
func adminDo(t *testing.T, method, base, path, token string, out any) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return resp.StatusCode, string(b)
}

func TestAdminDecisionMatchesProxy(t *testing.T) {
	o := newOpsOrigin(t)
	p := startOpsProxy(t, nil)
	base := "http://" + p.addr

	// What the proxy answers ...
	code, body, hdr := opsGet(t, p.client(nil), o.URL+"/private/x", "Accept", "application/json", "User-Agent", "GoodBot/1.0")
	if code != http.StatusForbidden {
		t.Fatalf("proxy: %d %s", code, body)
	}
	var refused map[string]any
	if err := json.Unmarshal([]byte(body), &refused); err != nil {
		t.Fatal(err)
	}
	// ... and what the admin API says it would do.
	var d answer.DecisionJSON
	q := "/v1/decision?url=" + url.QueryEscape(o.URL+"/private/x") + "&agent=GoodBot"
	if code, b := adminDo(t, "GET", base, q, "", &d); code != 200 {
		t.Fatalf("decision: %d %s", code, b)
	}
	if d.Allowed || d.Reason != "disallowed" || d.Rule != "Disallow: /private" || d.Line != 2 ||
		d.Group != "*" || d.Agent != "GoodBot" || d.Robots == nil || d.Robots.Status != "ok" || d.Robots.HTTPStatus != 200 {
		t.Errorf("decision = %+v", d)
	}
	for k, v := range map[string]any{"reason": d.Reason, "decision": d.Decision, "rule": d.Rule, "line": float64(d.Line), "group": d.Group, "agent": d.Agent, "origin": d.Origin, "url": d.URL} {
		if refused[k] != v {
			t.Errorf("403 %s = %v, admin says %v", k, refused[k], v)
		}
	}
	if hdr.Get(answer.HeaderRule) != "Disallow: /private; line 2" {
		t.Errorf("403 rule header %q", hdr.Get(answer.HeaderRule))
	}

	// The agent's own group; a whole User-Agent is reduced to its token.
	q = "/v1/decision?url=" + url.QueryEscape(o.URL+"/ok") + "&agent=" + url.QueryEscape("SlowBot/2.0 (+http://x)")
	if code, b := adminDo(t, "GET", base, q, "", &d); code != 200 || d.Allowed || d.Group != "slowbot" && d.Group != "SlowBot" || d.CrawlDelayS != 2 {
		t.Errorf("SlowBot decision: %d %+v %s", code, d, b)
	}
	q = "/v1/decision?url=" + url.QueryEscape(o.URL+"/ok")
	if code, _ := adminDo(t, "GET", base, q, "", &d); code != 200 || !d.Allowed || d.Reason != "allowed" || d.Agent != "*" {
		t.Errorf("no agent: %d %+v", code, d)
	}
	if n := o.hit("/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1 (admin decisions share the cache)", n)
	}

	for _, bad := range []string{
		"/v1/decision",
		"/v1/decision?url=" + url.QueryEscape("/relative"),
		"/v1/decision?url=" + url.QueryEscape("ftp://x/y"),
		"/v1/decision?url=%zz",
		"/v1/robots",
		"/v1/robots?origin=ftp://example.com", // a bare host is accepted: both http and https
	} {
		code, b := adminDo(t, "GET", base, bad, "", nil)
		var e struct{ Error string }
		if code != http.StatusBadRequest || json.Unmarshal([]byte(b), &e) != nil || e.Error == "" {
			t.Errorf("GET %s: %d %s, want 400 with a JSON error", bad, code, b)
		}
	}
	if code, _ := adminDo(t, "POST", base, "/v1/decision?url=x", "", nil); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /v1/decision: %d, want 405", code)
	}
	if code, _ := adminDo(t, "GET", base, "/nope", "", nil); code != http.StatusNotFound {
		t.Errorf("GET /nope: %d, want 404", code)
	}
}

func TestAdminRobotsAndPurge(t *testing.T) {
	o := newOpsOrigin(t)
	const token = "s3cret-token"
	p := startOpsProxy(t, func(c *config.Config) { c.AdminToken = token })
	base := "http://" + p.addr
	q := "/v1/robots?origin=" + url.QueryEscape(o.URL)

	if code, b := adminDo(t, "GET", base, q, "", nil); code != http.StatusNotFound {
		t.Fatalf("not cached yet: %d %s", code, b)
	}
	if code, _, _ := opsGet(t, p.client(nil), o.URL+"/private/x"); code != 403 {
		t.Fatalf("proxy: %d", code)
	}
	var e admin.EntryJSON
	// Loopback admin with a token: reading needs no token.
	if code, b := adminDo(t, "GET", base, q+"/some/path", "", &e); code != 200 {
		t.Fatalf("robots: %d %s", code, b)
	}
	if e.Origin != o.URL || e.Status != "ok" || e.HTTPStatus != 200 || !e.Fresh || e.Bytes != len(opsRobots) ||
		e.FetchedAt.IsZero() || !e.Expires.After(e.FetchedAt) || len(e.Sitemaps) != 1 || e.Sitemaps[0] != "http://example.test/sitemap.xml" {
		t.Errorf("entry = %+v", e)
	}
	if len(e.Groups) != 2 || e.Groups[0].Agents[0] != "*" || len(e.Groups[0].Rules) != 1 ||
		e.Groups[0].Rules[0] != (admin.RuleJSON{Rule: "Disallow: /private", Pattern: "/private", Line: 2}) ||
		e.Groups[1].CrawlDelayS != 2 {
		t.Errorf("groups = %+v", e.Groups)
	}

	// DELETE needs the token whenever one is set.
	if code, _ := adminDo(t, "DELETE", base, q, "", nil); code != http.StatusUnauthorized {
		t.Errorf("DELETE without token: %d, want 401", code)
	}
	if code, _ := adminDo(t, "DELETE", base, q, "wrong", nil); code != http.StatusUnauthorized {
		t.Errorf("DELETE with a wrong token: %d, want 401", code)
	}
	var pj struct {
		Origin    string `json:"origin"`
		Purged    bool   `json:"purged"`
		WasCached bool   `json:"was_cached"`
	}
	if code, b := adminDo(t, "DELETE", base, q, token, &pj); code != 200 || !pj.Purged || !pj.WasCached || pj.Origin != o.URL {
		t.Fatalf("DELETE: %d %s", code, b)
	}
	if code, _ := adminDo(t, "GET", base, q, "", nil); code != http.StatusNotFound {
		t.Errorf("after purge: %d, want 404", code)
	}
	// The purge forces a re-fetch: the origin sees a second robots.txt request.
	if code, _, _ := opsGet(t, p.client(nil), o.URL+"/ok"); code != 200 {
		t.Fatalf("proxy after purge: %d", code)
	}
	if n := o.hit("/robots.txt"); n != 2 {
		t.Errorf("robots.txt fetched %d times, want 2 (purge must force a re-fetch)", n)
	}
	// fetch=1 fetches when nothing is cached.
	adminDo(t, "DELETE", base, q, token, nil)
	if code, b := adminDo(t, "GET", base, q+"&fetch=1", "", &e); code != 200 || e.Status != "ok" {
		t.Errorf("fetch=1: %d %s", code, b)
	}
	if n := o.hit("/robots.txt"); n != 3 {
		t.Errorf("robots.txt fetched %d times, want 3", n)
	}
}

func TestAdminTokenBeyondLoopback(t *testing.T) {
	const token = "tok-123"
	// The admin API is configured on a wildcard address (which makes it
	// "beyond loopback") but, in the test, served on a loopback listener.
	p := startOpsProxy(t, func(c *config.Config) { c.AdminListen = "0.0.0.0:9310"; c.AdminToken = token })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.srv.ServeAdmin(ln)
	base := "http://" + ln.Addr().String()

	for _, path := range []string{"/healthz", "/readyz"} {
		if code, b := adminDo(t, "GET", base, path, "", nil); code != 200 {
			t.Errorf("%s without token: %d %s, want 200", path, code, b)
		}
	}
	for _, path := range []string{"/metrics", "/v1/decision?url=http%3A%2F%2F127.0.0.1%3A1%2F", "/v1/robots?origin=http%3A%2F%2Fexample.test"} {
		code, _ := adminDo(t, "GET", base, path, "", nil)
		if code != http.StatusUnauthorized {
			t.Errorf("%s without token: %d, want 401", path, code)
		}
		if code, _ := adminDo(t, "GET", base, path, "nope", nil); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong token: %d, want 401", path, code)
		}
	}
	if code, b := adminDo(t, "GET", base, "/metrics", token, nil); code != 200 || !strings.Contains(b, "robotsgate_decisions_total") {
		t.Errorf("/metrics with token: %d", code)
	}
	// With admin_listen set, the proxy port no longer serves the admin API.
	if code, _ := adminDo(t, "GET", "http://"+p.addr, "/metrics", token, nil); code != http.StatusNotFound {
		t.Errorf("proxy port /metrics with admin_listen set: %d, want 404", code)
	}
	if code, _ := adminDo(t, "GET", "http://"+p.addr, "/healthz", "", nil); code != 200 {
		t.Errorf("proxy port /healthz: %d, want 200", code)
	}
}

func TestAdminReadiness(t *testing.T) {
	p := startOpsProxy(t, nil)
	base := "http://" + p.addr
	if code, b := adminDo(t, "GET", base, "/readyz", "", nil); code != 200 || b != "ready\n" {
		t.Fatalf("readyz: %d %q", code, b)
	}
	p.auditor.Close()
	if code, b := adminDo(t, "GET", base, "/readyz", "", nil); code != http.StatusServiceUnavailable || !strings.Contains(b, "audit log closed") {
		t.Errorf("readyz with the audit log closed: %d %q", code, b)
	}
	if code, _ := adminDo(t, "GET", base, "/healthz", "", nil); code != 200 {
		t.Errorf("healthz: %d", code)
	}

	// A Server that does not listen yet is not ready.
	rec := httptest.NewRecorder()
	a := admin.New(admin.Config{Ready: func() error { return errors.New("not listening yet") }})
	a.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost/readyz", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("readyz before listening: %d", rec.Code)
	}
}

// TestAdminPurgeNeedsToken: without admin_token, DELETE (purge) is
// refused with 403 even on loopback; reads still work.
func TestAdminPurgeNeedsToken(t *testing.T) {
	o := newOpsOrigin(t)
	p := startOpsProxy(t, nil) // loopback, no token
	base := "http://" + p.addr
	q := "/v1/robots?origin=" + url.QueryEscape(o.URL)
	if code, _, _ := opsGet(t, p.client(nil), o.URL+"/ok"); code != 200 {
		t.Fatalf("proxy: %d", code)
	}
	code, b := adminDo(t, "DELETE", base, q, "", nil)
	if code != http.StatusForbidden || !strings.Contains(b, "set admin_token") {
		t.Fatalf("DELETE without a configured token: %d %s, want 403 naming admin_token", code, b)
	}
	if code, b := adminDo(t, "GET", base, q, "", nil); code != 200 {
		t.Errorf("the entry is gone or unreadable after the refused purge: %d %s", code, b)
	}
}

// Admin decisions are not proxied requests: they move no decision or
// cache-lookup counter.
func TestAdminDecisionNotCounted(t *testing.T) {
	o := newOpsOrigin(t)
	p := startOpsProxy(t, nil)
	base := "http://" + p.addr
	for i := 0; i < 3; i++ {
		var d answer.DecisionJSON
		q := "/v1/decision?url=" + url.QueryEscape(o.URL+"/private/x") + "&agent=GoodBot"
		if code, b := adminDo(t, "GET", base, q, "", &d); code != 200 || d.Allowed {
			t.Fatalf("decision: %d %s", code, b)
		}
	}
	assertMetrics(t, p.scrape(t), map[string]float64{
		`robotsgate_robots_cache_lookups_total{result="hit"}`:                0,
		`robotsgate_robots_cache_lookups_total{result="miss"}`:               0,
		`robotsgate_decisions_total{decision="blocked",reason="disallowed"}`: 0,
		`robotsgate_robots_fetches_total{status_class="2xx"}`:                1, // real traffic to the origin
	})
}
