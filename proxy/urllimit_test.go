package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// A URL longer than max_url_bytes is answered 414 before it is decided:
// robots.txt is not even fetched, the origin sees nothing, and the refusal
// is audited with the URL cut short. Path, query, host and userinfo all
// count; a URL of exactly the limit is decided as usual.
func TestLongURLAnswered414(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), nil)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.MaxURLBytes = 4096; c.Audit = config.AuditAll }})
	host := strings.TrimPrefix(o.URL, "http://")
	pad := func(prefix string, n int) string { return prefix + strings.Repeat("a", n-len(prefix)) }

	for _, target := range []string{
		pad(o.URL+"/public/", 4097),
		pad(o.URL+"/public?q=", 4097),
		pad(o.URL+"/caf\xc3\xa9/", 4097-4), // two raw octets count as %C3%A9
		"http://" + strings.Repeat("u", 4100) + ":pw@" + host + "/public",
	} {
		resp, body := rawProxyGet(t, h.addr, target, host)
		if resp.StatusCode != http.StatusRequestURITooLong || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonURLTooLong) {
			t.Fatalf("URL of %d bytes: %d %s %q", len(target), resp.StatusCode, resp.Header.Get(answer.HeaderDecision), body)
		}
	}
	if n := o.robotsHits.Load() + o.hits.Load(); n != 0 {
		t.Fatalf("origin got %d requests for URLs too long", n)
	}
	rec := h.audit.Find(t, string(answer.ReasonURLTooLong))
	if u := rec["url"].(string); rec["decision"] != audit.DecisionBlocked || len(u) > auditURLBytes+10 || !strings.HasPrefix(u, o.URL+"/public/aaa") {
		t.Fatalf("audit record: %v", rec)
	}
	if rec["status"] != float64(http.StatusRequestURITooLong) {
		t.Fatalf("audit record status: %v", rec["status"])
	}

	// At the limit: decided, allowed or refused by robots.txt.
	resp, body := rawProxyGet(t, h.addr, pad(o.URL+"/public/", 4096), host)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "page /public/") {
		t.Fatalf("URL at the limit: %d %.40q", resp.StatusCode, body)
	}
	resp, _ = rawProxyGet(t, h.addr, pad(o.URL+"/private/", 4096), host)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("disallowed URL at the limit: %d", resp.StatusCode)
	}
}

// Inside an MITM session too, a URL too long is answered 414 and never
// reaches the origin.
func TestLongURLAnswered414InMITM(t *testing.T) {
	origin := newTLSOrigin(t, "User-agent: *\nDisallow: /private\n")
	cfg := mitmConfig(t, origin)
	cfg.MaxURLBytes = 2048
	p := startHTTPSProxy(t, cfg)
	c := p.client(p.ca)

	long := origin.URL + "/public/" + strings.Repeat("b", 2048)
	resp, body := get(t, c, long)
	if resp.StatusCode != http.StatusRequestURITooLong || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonURLTooLong) {
		t.Fatalf("long URL in MITM: %d %s %q", resp.StatusCode, resp.Header.Get(answer.HeaderDecision), body)
	}
	if n := origin.hit(strings.TrimPrefix(long, origin.URL)); n != 0 {
		t.Fatalf("origin saw the long URL %d times", n)
	}
	if rec := p.audit.Find(t, string(answer.ReasonURLTooLong)); !strings.HasPrefix(rec["url"].(string), "https://127.0.0.1:") {
		t.Fatalf("audit record: %v", rec)
	}
	resp, _ = get(t, c, origin.URL+"/public/short")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("short URL after: %d", resp.StatusCode)
	}
}
