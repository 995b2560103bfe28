package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// signalHeaders are the usage headers a signal origin sends, by path.
var signalHeaders = map[string][][2]string{
	"/cs-reference": {{"Content-Signal", "search=yes, use=reference"}},
	"/cs-full":      {{"Content-Signal", "search=yes, use=full"}},
	"/cs-two-lines": {{"Content-Signal", "use=full"}, {"Content-Signal", "use=immediate"}},
	"/cs-input-n":   {{"Content-Signal", "ai-input=no"}},
	"/cu-ai-use-n":  {{"Content-Usage", "ai-use=n"}},
	"/cu-train-n":   {{"Content-Usage", "train-ai=n, ai-use=n"}, {"X-Robots-Tag", "noai"}},
}

// newSignalOrigin starts an origin (TLS when tls is set) serving robots
// and, on the paths of signalHeaders, those headers; it counts hits.
func newSignalOrigin(t *testing.T, robots string, tls bool) *tlsOrigin {
	t.Helper()
	o := &tlsOrigin{robots: robots}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, kv := range signalHeaders[r.URL.Path] {
			w.Header().Add(kv[0], kv[1])
		}
		o.serve(w, r)
	})
	o.Server = startTestServer(t, h, tls)
	return o
}

// aiUseRobots states ai-use (draft-ietf-aipref-vocab-08) for every path
// but /search-only/, where only search is stated.
const aiUseRobots = "User-agent: *\nAllow: /\nContent-Usage: ai-use=n\nContent-Usage: /search-only/ search=y\n"

// TestUsageAIUseThroughProxy: a crawler declaring ai-use is refused by
// Content-Usage ai-use=n before the request leaves, allowed where only
// search is stated, and held to Content Signals' ai-input as well; a
// search crawler is held to its search preference only.
func TestUsageAIUseThroughProxy(t *testing.T) {
	o := newSignalOrigin(t, aiUseRobots, false)
	p := startUsageProxy(t, func(c *config.Config) { c.Purposes = aipref.SetOf(aipref.AIUse) })
	c := p.client(nil)

	resp, body := get(t, c, o.URL+"/x", "Accept", "application/json")
	var j answer.RefusalBody
	if err := json.Unmarshal([]byte(body), &j); err != nil || resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "usage-disallowed" ||
		resp.Header.Get(answer.HeaderRule) != "Content-Usage: ai-use=n; line 3" || j.Detail != "purpose ai-use disallowed" ||
		strings.Join(j.UsageDisallowed, ",") != "ai-use" || j.Usage["ai-use"].Pref != "disallowed" {
		t.Fatalf("ai-use /x: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if o.hit("/x") != 0 {
		t.Fatal("the origin saw /x")
	}
	rec := p.records(t, o.URL+"/x")[0]
	if fmt.Sprint(rec["purposes"]) != "[ai-use]" || fmt.Sprint(rec["usage_disallowed"]) != "[ai-use]" || usageField(rec, "ai-use")["pref"] != "disallowed" ||
		usageField(rec, "ai-use")["source"] != "content-usage" {
		t.Fatalf("audit record: %v", rec)
	}
	resp, body = get(t, c, o.URL+"/search-only/x")
	if resp.StatusCode != 200 || body != "hello from /search-only/x" || resp.Header.Get(HeaderUsage) != "search=y" {
		t.Fatalf("ai-use /search-only/x: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	// The purposes header declares ai-use too (when the operator lets it).
	h := startUsageProxy(t, func(c *config.Config) { c.AllowAgentOverride = true })
	if resp, _ := get(t, h.client(nil), o.URL+"/x", "X-Robots-Purpose", "ai-use"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("purposes header ai-use: %d", resp.StatusCode)
	}
	if resp, _ := get(t, h.client(nil), o.URL+"/x", "X-Robots-Purpose", "search"); resp.StatusCode != 200 {
		t.Fatalf("purposes header search: %d", resp.StatusCode)
	}
	// Held to both vocabularies: Content-Usage ai-use binds an ai-input
	// crawler, Content-Signal ai-input binds an ai-use crawler.
	in := startUsageProxy(t, func(c *config.Config) { c.Purposes = aipref.SetOf(aipref.AIInput) })
	if resp, body := get(t, in.client(nil), o.URL+"/x"); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "purpose ai-input disallowed") {
		t.Fatalf("ai-input /x: %d %s", resp.StatusCode, body)
	}
	cs := newSignalOrigin(t, "User-agent: *\nContent-Signal: search=yes, ai-input=no\n", false)
	resp, _ = get(t, c, cs.URL+"/x")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderRule) != "Content-Signal: search=yes, ai-input=no; line 2" {
		t.Fatalf("ai-use against Content-Signal ai-input=no: %d %v", resp.StatusCode, resp.Header)
	}

	// Search overrides: train-ai=n and ai-use=n, in robots.txt and in the
	// response (noai included), never refuse a search crawler.
	s := startUsageProxy(t, func(c *config.Config) {
		c.Purposes = aipref.SetOf(aipref.Search)
		c.Usage.Response = config.UsageResponseEnforce
	})
	so := newSignalOrigin(t, "User-agent: *\nContent-Usage: train-ai=n, ai-use=n\nContent-Signal: ai-train=no, ai-input=no\n", false)
	for _, path := range []string{"/x", "/cu-train-n"} {
		resp, body := get(t, s.client(nil), so.URL+path)
		if resp.StatusCode != 200 || body != "hello from "+path || resp.Header.Get(HeaderUsage) != "train-ai=n, ai-input=n, ai-use=n" {
			t.Fatalf("search %s: %d %q %v", path, resp.StatusCode, body, resp.Header)
		}
		if rec := s.records(t, so.URL+path)[0]; rec["reason"] != "allowed" || usageField(rec, "search")["pref"] != "unknown" {
			t.Fatalf("search %s audit: %v", path, rec)
		}
	}

	// The response's own Content-Usage ai-use=n, enforced.
	e := startUsageProxy(t, func(c *config.Config) {
		c.Purposes = aipref.SetOf(aipref.AIUse)
		c.Usage.Response = config.UsageResponseEnforce
	})
	open := newSignalOrigin(t, "User-agent: *\nAllow: /\n", false)
	for path, want := range map[string]string{"/cu-ai-use-n": "Content-Usage: ai-use=n", "/cs-input-n": "Content-Signal: ai-input=no"} {
		resp, body := get(t, e.client(nil), open.URL+path)
		if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "hello from") || !strings.Contains(body, want) ||
			!strings.Contains(body, "purpose ai-use disallowed by the response") {
			t.Fatalf("ai-use %s: %d %s", path, resp.StatusCode, body)
		}
	}
}

// TestUsageTrainAIHeldToBothVocabularies: Content-Usage train-ai=y does
// not lift Content Signals' ai-train=no: the most restrictive wins.
func TestUsageTrainAIHeldToBothVocabularies(t *testing.T) {
	o := newSignalOrigin(t, "User-agent: *\nContent-Signal: search=yes, ai-train=no\nContent-Usage: /ok/ train-ai=y\n", false)
	p := startUsageProxy(t, func(c *config.Config) { c.Purposes = aipref.SetOf(aipref.TrainAI) })
	resp, body := get(t, p.client(nil), o.URL+"/ok/x")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderRule) != "Content-Signal: search=yes, ai-train=no; line 2" {
		t.Fatalf("train-ai /ok/x: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if o.hit("/ok/x") != 0 {
		t.Fatal("the origin saw /ok/x")
	}
}

// contentUseRobots states Cloudflare's managed content-use level.
const contentUseRobots = "User-agent: *\nContent-Signal: search=yes,ai-train=no,use=reference\nAllow: /\n"

// TestUsageContentUseThroughProxy: content_use full is refused by a
// site's use=reference before the request leaves (robots.txt) or after
// the response (Content-Signal header, usage.response enforce), allowed
// by use=full; unset, the level is only reported.
func TestUsageContentUseThroughProxy(t *testing.T) {
	ref := newSignalOrigin(t, contentUseRobots, false)
	full := newSignalOrigin(t, strings.Replace(contentUseRobots, "use=reference", "use=full", 1), false)
	p := startUsageProxy(t, func(c *config.Config) {
		c.ContentUse = aipref.UseFull
		c.Usage.Response = config.UsageResponseEnforce
	})
	c := p.client(nil)
	j, body := getUsageRefusal(t, c, ref.URL+"/x", "Content-Signal: search=yes,ai-train=no,use=reference; line 2")
	if j.Detail != "content use full is above the site's level reference" || j.ContentUse != "full" || !j.ContentUseDisallowed ||
		j.SiteUse == nil || *j.SiteUse != (enforce.SiteUseShown{Level: "reference", Source: "content-signal", Rule: "Content-Signal: search=yes,ai-train=no,use=reference", Line: 2}) {
		t.Fatalf("use=reference JSON body: %s", body)
	}
	_, text := get(t, c, ref.URL+"/x")
	if want := "use:      full declared; site reference (Content-Signal: search=yes,ai-train=no,use=reference, line 2)\n"; !strings.Contains(text, want) {
		t.Errorf("text body lacks %q:\n%s", want, text)
	}
	if ref.hit("/x") != 0 {
		t.Fatal("the origin saw /x")
	}
	rec := p.records(t, ref.URL+"/x")[0]
	su, _ := rec["site_use"].(map[string]any)
	if rec["reason"] != "usage-disallowed" || rec["content_use"] != "full" || rec["content_use_disallowed"] != true ||
		su["level"] != "reference" || su["line"] != 2.0 || rec["line"] != 2.0 {
		t.Fatalf("audit record: %v", rec)
	}
	resp, body := get(t, c, full.URL+"/x")
	if resp.StatusCode != 200 || body != "hello from /x" || resp.Header.Get(HeaderUsage) != "train-ai=n, search=y, use=full" {
		t.Fatalf("use=full: %d %q %v", resp.StatusCode, body, resp.Header)
	}

	// The response header: refused after the response, allowed at full;
	// several field lines combine to the lowest level.
	open := newSignalOrigin(t, "User-agent: *\nAllow: /\n", false)
	for path, want := range map[string]int{"/cs-reference": 403, "/cs-full": 200, "/cs-two-lines": 403} {
		resp, body := get(t, c, open.URL+path)
		if resp.StatusCode != want || want == 403 && (strings.Contains(body, "hello from") || !strings.Contains(body, "by the response")) {
			t.Fatalf("header %s: %d, want %d: %s", path, resp.StatusCode, want, body)
		}
	}
	if rec := p.records(t, open.URL+"/cs-reference"); rec[len(rec)-1]["decision"] != audit.DecisionBlocked || rec[len(rec)-1]["content_use_disallowed"] != true {
		t.Fatalf("header refusal audit: %v", rec)
	}

	// Annotate mode reports the header refusal and forwards.
	a := startUsageProxy(t, func(c *config.Config) { c.ContentUse = aipref.UseFull })
	resp, body = get(t, a.client(nil), open.URL+"/cs-reference")
	if resp.StatusCode != 200 || body != "hello from /cs-reference" || resp.Header.Get(HeaderUsage) != "search=y, use=reference" {
		t.Fatalf("annotate: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if rec := a.records(t, open.URL+"/cs-reference"); rec[len(rec)-1]["decision"] != audit.DecisionReported || rec[len(rec)-1]["reason"] != "usage-disallowed" {
		t.Fatalf("annotate audit: %v", rec)
	}

	// Unset: reported on the response and in the audit, never refused.
	n := startUsageProxy(t, nil)
	resp, _ = get(t, n.client(nil), ref.URL+"/y")
	if resp.StatusCode != 200 || resp.Header.Get(HeaderUsage) != "train-ai=n, search=y, use=reference" {
		t.Fatalf("unset: %d %v", resp.StatusCode, resp.Header)
	}
	if rec := n.records(t, ref.URL+"/y")[0]; rec["reason"] != "allowed" || rec["site_use"] == nil || rec["content_use"] != nil {
		t.Fatalf("unset audit: %v", rec)
	}

	m := testsupport.Exposition(p.srv.metrics.Handler())
	assertMetrics(t, m, map[string]float64{
		`robotsgate_usage_verdicts_total{pref="disallowed",purpose="content-use",source="content-signal"}`:        2,
		`robotsgate_usage_verdicts_total{pref="allowed",purpose="content-use",source="content-signal"}`:           1,
		`robotsgate_usage_verdicts_total{pref="disallowed",purpose="content-use",source="content-signal-header"}`: 2,
	})
	if strings.Contains(m, "127.0.0.1") {
		t.Error("a usage metric carries an origin")
	}
}

// TestUsageContentUsePerUserAndAdmin: a credentials file's content_use=
// replaces the configured one for that user; /v1/decision reports the
// site's level and decides for its content_use parameter.
func TestUsageContentUsePerUserAndAdmin(t *testing.T) {
	o := newSignalOrigin(t, contentUseRobots, false)
	creds := writeCredentials(t, "alice:pw1 content_use=full\nbob:pw2 content_use=reference purposes=ai-use\n")
	p := startUsageProxy(t, func(c *config.Config) { c.Auth.CredentialsFile = creds })
	if resp, _ := get(t, p.client(url.UserPassword("alice", "pw1")), o.URL+"/x"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("alice (full): %d", resp.StatusCode)
	}
	if resp, _ := get(t, p.client(url.UserPassword("bob", "pw2")), o.URL+"/x"); resp.StatusCode != 200 {
		t.Fatalf("bob (reference): %d", resp.StatusCode)
	}

	ask := func(q string) (int, map[string]any) { return askDecision(t, p.addr, o.URL+"/x", q) }
	code, m := ask("")
	if su, _ := m["site_use"].(map[string]any); code != 200 || m["allowed"] != true || su["level"] != "reference" {
		t.Fatalf("no content_use: %d %v", code, m)
	}
	if code, m := ask("&content_use=full&purpose=ai-use"); code != 200 || m["reason"] != "usage-disallowed" || m["content_use_disallowed"] != true ||
		usageField(m, "ai-use")["pref"] != "unknown" {
		t.Fatalf("content_use=full: %d %v", code, m)
	}
	if code, m := ask("&content_use=Full"); code != http.StatusBadRequest || !strings.Contains(m["error"].(string), "immediate, reference, full") {
		t.Fatalf("bad content_use: %d %v", code, m)
	}
	if code, m := ask("&purpose=ai-usage"); code != http.StatusBadRequest || !strings.Contains(m["error"].(string), "train-ai, search, ai-input, ai-use") {
		t.Fatalf("bad purpose: %d %v", code, m)
	}
}

// TestUsageSignalsInMITM: the same refusals inside an MITM session.
func TestUsageSignalsInMITM(t *testing.T) {
	ai := newSignalOrigin(t, aiUseRobots, true)
	ref := newSignalOrigin(t, contentUseRobots, true)
	full := newSignalOrigin(t, strings.Replace(contentUseRobots, "use=reference", "use=full", 1), true)
	cfg := mitmConfig(t, ai, ref, full)
	cfg.Purposes = aipref.SetOf(aipref.AIUse)
	cfg.ContentUse = aipref.UseFull
	cfg.Usage.Response = config.UsageResponseEnforce
	p := startHTTPSProxy(t, cfg)
	c := p.client(p.ca)
	for _, tt := range []struct {
		o      *tlsOrigin
		path   string
		status int
		rule   string
	}{
		{ai, "/x", 403, "Content-Usage: ai-use=n; line 3"},
		{ai, "/search-only/x", 200, ""}, // only search stated, and no content-use level
		{ref, "/x", 403, "Content-Signal: search=yes,ai-train=no,use=reference; line 2"},
		{full, "/x", 200, ""},
		{full, "/cs-reference", 403, "Content-Signal: search=yes, use=reference"},
		{full, "/cs-full", 200, ""},
	} {
		resp, body := get(t, c, tt.o.URL+tt.path)
		if resp.StatusCode != tt.status || tt.rule != "" && resp.Header.Get(answer.HeaderRule) != tt.rule {
			t.Errorf("%s%s in MITM: %d %v %s, want %d %q", tt.o.URL, tt.path, resp.StatusCode, resp.Header, body, tt.status, tt.rule)
		}
		if tt.status == 403 && strings.Contains(body, "hello from") {
			t.Errorf("%s: the origin's body reached the client", tt.path)
		}
	}
	if ai.hit("/x") != 0 || ref.hit("/x") != 0 {
		t.Error("an origin saw a URL refused before the request leaves")
	}

	// A search crawler in MITM: train-ai=n and ai-use=n, in robots.txt and
	// in the response, refuse nothing.
	so := newSignalOrigin(t, "User-agent: *\nContent-Usage: train-ai=n, ai-use=n\n", true)
	scfg := mitmConfig(t, so)
	scfg.Purposes = aipref.SetOf(aipref.Search)
	scfg.Usage.Response = config.UsageResponseEnforce
	sp := startHTTPSProxy(t, scfg)
	for _, path := range []string{"/x", "/cu-train-n"} {
		if resp, body := get(t, sp.client(sp.ca), so.URL+path); resp.StatusCode != 200 || body != "hello from "+path {
			t.Errorf("search %s in MITM: %d %s", path, resp.StatusCode, body)
		}
	}
}
