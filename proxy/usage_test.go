package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// attachExample is the example robots.txt of draft-ietf-aipref-attach.
const attachExample = "User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n"

// usageOrigin is an origin serving robots and a few responses that state
// usage preferences themselves; it counts hits and keeps the last
// request's header.
type usageOrigin struct {
	*httptest.Server
	originLog
}

func newUsageOrigin(t *testing.T, robots string) *usageOrigin {
	t.Helper()
	o := &usageOrigin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.sawHeader(r)
		h := w.Header()
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, robots)
			return
		case "/cu-n":
			h.Set("Content-Usage", "train-ai=n, search=y")
		case "/cu-y":
			h.Set("Content-Usage", "train-ai=y")
		case "/noai.html":
			h.Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, `<html><head><meta name="robots" content="noai"></head><body>origin body</body></html>`)
			return
		case "/noimageai.png":
			h.Set("Content-Type", "image/png")
			h.Set("X-Robots-Tag", "noimageai")
		case "/noimageai.html":
			h.Set("Content-Type", "text/html")
			h.Set("X-Robots-Tag", "noimageai")
		case "/spoof":
			h.Set(HeaderUsage, "train-ai=y")
		}
		io.WriteString(w, "origin body "+r.URL.Path)
	}))
	t.Cleanup(o.Close)
	return o
}

// usageProxy is a running robotsgate for the usage tests.
type usageProxy struct {
	srv   *Server
	addr  string
	audit *memAudit
}

func startUsageProxy(t *testing.T, mutate func(*config.Config)) *usageProxy {
	t.Helper()
	cfg := testConfig(t)
	cfg.Audit = config.AuditAll
	if mutate != nil {
		mutate(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ab := &memAudit{}
	srv, addr := startServer(t, cfg, enforce.Config{}, Deps{Auditor: audit.New(ab)})
	return &usageProxy{srv: srv, addr: addr, audit: ab}
}

// client returns a client of the proxy with optional proxy credentials.
func (p *usageProxy) client(user *url.Userinfo) *http.Client {
	u := &url.URL{Scheme: "http", Host: p.addr, User: user}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), DisableKeepAlives: true}, Timeout: testTimeout}
}

// records returns the audit records for the URL u.
func (p *usageProxy) records(t *testing.T, u string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range p.audit.Records(t) {
		if r["url"] == u {
			out = append(out, r)
		}
	}
	return out
}

// usageField returns rec's usage verdict for purpose.
func usageField(rec map[string]any, purpose string) map[string]any {
	u, _ := rec["usage"].(map[string]any)
	v, _ := u[purpose].(map[string]any)
	return v
}

// getUsageRefusal gets u with c, asking for the JSON refusal; the test
// fails unless the answer is a 403 usage-disallowed refusal by rule (the
// X-Robotsgate-Rule value). It returns the decoded refusal and the body.
func getUsageRefusal(t *testing.T, c *http.Client, u, rule string) (answer.RefusalBody, string) {
	t.Helper()
	resp, body := get(t, c, u, "Accept", "application/json")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "usage-disallowed" ||
		resp.Header.Get(answer.HeaderRule) != rule {
		t.Fatalf("%s: %d %v %s", u, resp.StatusCode, resp.Header, body)
	}
	var j answer.RefusalBody
	if err := json.Unmarshal([]byte(body), &j); err != nil {
		t.Fatal(err)
	}
	return j, body
}

// TestUsageAttachExampleThroughProxy: the attach draft's example, for a
// crawler declaring train-ai.
func TestUsageAttachExampleThroughProxy(t *testing.T) {
	o := newUsageOrigin(t, attachExample)
	p := startUsageProxy(t, func(c *config.Config) { c.Purposes = aipref.SetOf(aipref.TrainAI) })
	c := p.client(nil)

	j, body := getUsageRefusal(t, c, o.URL+"/test", "Content-Usage: train-ai=n; line 4")
	tu := j.Usage["train-ai"]
	if j.Decision != "blocked" || j.Reason != "usage-disallowed" || j.Rule != "Content-Usage: train-ai=n" || j.Line != 4 || j.Detail != "purpose train-ai disallowed" ||
		strings.Join(j.Purposes, ",") != "train-ai" || strings.Join(j.UsageDisallowed, ",") != "train-ai" ||
		tu != (enforce.PurposeUsage{Pref: "disallowed", Source: "content-usage", Rule: "Content-Usage: train-ai=n", Line: 4}) {
		t.Fatalf("/test JSON body: %s", body)
	}
	_, text := get(t, c, o.URL+"/test")
	for _, want := range []string{"purposes: train-ai\n", "usage:    train-ai disallowed (Content-Usage: train-ai=n, line 4)\n", "reason:   usage-disallowed"} {
		if !strings.Contains(text, want) {
			t.Errorf("/test text body lacks %q:\n%s", want, text)
		}
	}
	if n := o.hit("/test"); n != 0 {
		t.Fatalf("the origin saw /test %d times", n)
	}
	recs := p.records(t, o.URL+"/test")
	if len(recs) != 2 {
		t.Fatalf("audit records for /test: %v", recs)
	}
	rec := recs[0]
	if rec["reason"] != "usage-disallowed" || rec["decision"] != audit.DecisionBlocked || fmt.Sprint(rec["purposes"]) != "[train-ai]" ||
		fmt.Sprint(rec["usage_disallowed"]) != "[train-ai]" || rec["rule"] != "Content-Usage: train-ai=n" || rec["line"] != 4.0 {
		t.Fatalf("audit record: %v", rec)
	}
	if v := usageField(rec, "train-ai"); v["pref"] != "disallowed" || v["source"] != "content-usage" || v["line"] != 4.0 {
		t.Fatalf("audit usage: %v", rec["usage"])
	}

	resp, body := get(t, c, o.URL+"/ai-ok/test")
	if resp.StatusCode != 200 || body != "origin body /ai-ok/test" || resp.Header.Get(HeaderUsage) != "train-ai=y" {
		t.Fatalf("/ai-ok/test: %d %q usage %q", resp.StatusCode, body, resp.Header.Get(HeaderUsage))
	}
	resp, _ = get(t, c, o.URL+"/never/test")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "disallowed" || resp.Header.Get(answer.HeaderRule) != "Disallow: /never/; line 3" {
		t.Fatalf("/never/test: %d %v", resp.StatusCode, resp.Header)
	}
	if rec := p.records(t, o.URL+"/never/test")[0]; rec["usage"] != nil {
		t.Fatalf("a disallowed URL has no usage verdict: %v", rec)
	}

	m := testsupport.Exposition(p.srv.metrics.Handler())
	assertMetrics(t, m, map[string]float64{
		`robotsgate_decisions_total{decision="blocked",reason="usage-disallowed"}`:                     2,
		`robotsgate_usage_verdicts_total{pref="disallowed",purpose="train-ai",source="content-usage"}`: 2,
		`robotsgate_usage_verdicts_total{pref="allowed",purpose="train-ai",source="content-usage"}`:    1,
	})
}

// TestUsageWithoutPurposeReportsOnly: with no purpose declared, usage is
// reported on the response and in the audit, never refused; report mode
// reports a usage refusal without refusing.
func TestUsageWithoutPurposeReportsOnly(t *testing.T) {
	o := newUsageOrigin(t, attachExample)
	p := startUsageProxy(t, nil)
	resp, body := get(t, p.client(nil), o.URL+"/test")
	if resp.StatusCode != 200 || body != "origin body /test" || resp.Header.Get(HeaderUsage) != "train-ai=n" {
		t.Fatalf("/test without purposes: %d %q usage %q", resp.StatusCode, body, resp.Header.Get(HeaderUsage))
	}
	rec := p.records(t, o.URL+"/test")[0]
	if rec["reason"] != "allowed" || rec["purposes"] != nil || usageField(rec, "train-ai")["pref"] != "disallowed" {
		t.Fatalf("audit record: %v", rec)
	}
	// An origin cannot answer for robotsgate.
	if resp, _ := get(t, p.client(nil), o.URL+"/spoof"); resp.Header.Get(HeaderUsage) != "train-ai=n" {
		t.Fatalf("/spoof: %s %q", HeaderUsage, resp.Header.Get(HeaderUsage))
	}

	r := startUsageProxy(t, func(c *config.Config) { c.Purposes = aipref.SetOf(aipref.TrainAI); c.Mode = config.ModeReport })
	resp, body = get(t, r.client(nil), o.URL+"/test")
	if resp.StatusCode != 200 || body != "origin body /test" || resp.Header.Get(answer.HeaderDecision) != "report-only; usage-disallowed" {
		t.Fatalf("report mode: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if rec := r.records(t, o.URL+"/test")[0]; rec["decision"] != audit.DecisionReported || rec["reason"] != "usage-disallowed" {
		t.Fatalf("report mode audit: %v", rec)
	}
}

// writeCredentials writes a credentials file and returns its path.
func writeCredentials(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestUsagePerUserIdentity: each user of the credentials file is decided
// with its own agent and purposes; neither header widens them unless the
// operator allows overrides, and both are stripped.
func TestUsagePerUserIdentity(t *testing.T) {
	o := newUsageOrigin(t, attachExample+"\nUser-agent: BobBot\nAllow: /\nDisallow: /bob-closed\n")
	creds := writeCredentials(t, "# fleet\nalice:pw1 purposes=train-ai\nbob:pw2\tagent=BobBot purposes=search\n")
	alice, bob := url.UserPassword("alice", "pw1"), url.UserPassword("bob", "pw2")
	p := startUsageProxy(t, func(c *config.Config) { c.Auth.CredentialsFile = creds })

	if resp, _ := get(t, p.client(alice), o.URL+"/test"); resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "usage-disallowed" {
		t.Fatalf("alice /test: %d %v", resp.StatusCode, resp.Header)
	}
	// BobBot's group states no usage preference (the * group's lines are not its).
	resp, _ := get(t, p.client(bob), o.URL+"/test")
	if resp.StatusCode != 200 || resp.Header.Get(HeaderUsage) != "" {
		t.Fatalf("bob /test: %d %v", resp.StatusCode, resp.Header)
	}
	if rec := p.records(t, o.URL+"/test"); len(rec) != 2 || rec[1]["agent"] != "BobBot" || fmt.Sprint(rec[1]["purposes"]) != "[search]" ||
		usageField(rec[1], "search")["pref"] != "unknown" {
		t.Fatalf("bob's audit record: %v", rec)
	}
	if resp, _ := get(t, p.client(bob), o.URL+"/bob-closed"); resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderAgent) != "BobBot" {
		t.Fatalf("bob's agent: %d %v", resp.StatusCode, resp.Header)
	}

	// Headers cannot widen: alice declaring search is refused, audited,
	// and the header does not reach the origin.
	resp, _ = get(t, p.client(alice), o.URL+"/test", "X-Robots-Purpose", "search", "X-Robots-Agent", "Other")
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("alice with a purposes header: %d", resp.StatusCode)
	}
	rec := p.records(t, o.URL+"/test")[2]
	if rec["purposes_override_refused"] != "search" || fmt.Sprint(rec["purposes"]) != "[train-ai]" {
		t.Fatalf("refused purposes override not audited: %v", rec)
	}
	get(t, p.client(bob), o.URL+"/ok", "X-Robots-Purpose", "train-ai", "X-Robots-Agent", "Other")
	if h := o.lastHeader(); h.Get("X-Robots-Purpose") != "" || h.Get("X-Robots-Agent") != "" {
		t.Fatalf("override headers reached the origin: %v", h)
	}
	if rec := p.records(t, o.URL+"/ok")[0]; rec["agent"] != "BobBot" || rec["agent_override_refused"] != "Other" || rec["purposes_override_refused"] != "train-ai" {
		t.Fatalf("bob's refused overrides: %v", rec)
	}

	// With allow_agent_override the header replaces the user's purposes;
	// an unknown purpose is a 400.
	q := startUsageProxy(t, func(c *config.Config) { c.Auth.CredentialsFile = creds; c.AllowAgentOverride = true })
	if resp, _ := get(t, q.client(alice), o.URL+"/test", "X-Robots-Purpose", "search"); resp.StatusCode != 200 {
		t.Fatalf("allowed override to search: %d", resp.StatusCode)
	}
	if resp, _ := get(t, q.client(alice), o.URL+"/test", "X-Robots-Purpose", "search, train-ai"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("allowed override to train-ai: %d", resp.StatusCode)
	}
	resp, body := get(t, q.client(bob), o.URL+"/test", "X-Robots-Purpose", "train_ai")
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get(answer.HeaderDecision) != "invalid-purpose" || !strings.Contains(body, "train-ai, search, ai-input") {
		t.Fatalf("unknown purpose in the header: %d %s", resp.StatusCode, body)
	}
}

// TestUsagePerUserIdentityInMITM: the requests inside an MITM session are
// decided with the identity of the user who sent the CONNECT.
func TestUsagePerUserIdentityInMITM(t *testing.T) {
	origin := newTLSOrigin(t, attachExample)
	cfg := mitmConfig(t, origin)
	cfg.Auth.CredentialsFile = writeCredentials(t, "alice:pw1 purposes=train-ai agent=AliceBot\n")
	p := startHTTPSProxy(t, cfg)
	c := p.client(p.ca)
	c.Transport.(*http.Transport).Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: p.url.Host, User: url.UserPassword("alice", "pw1")})
	resp, body := get(t, c, origin.URL+"/test")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "usage-disallowed" || resp.Header.Get(answer.HeaderAgent) != "AliceBot" {
		t.Fatalf("alice in MITM: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if resp, _ := get(t, c, origin.URL+"/ai-ok/test"); resp.StatusCode != 200 {
		t.Fatalf("alice /ai-ok/test in MITM: %d", resp.StatusCode)
	}
	if origin.hit("/test") != 0 {
		t.Fatal("the origin saw /test")
	}
}

// TestUsageResponseHeader: a Content-Usage response header that
// disallows a declared purpose is annotated and audited, or refused in
// enforce mode; without purposes it is only annotated.
func TestUsageResponseHeader(t *testing.T) {
	o := newUsageOrigin(t, "User-agent: *\nAllow: /\n")
	p := startUsageProxy(t, func(c *config.Config) { c.Purposes = aipref.SetOf(aipref.TrainAI) })
	resp, body := get(t, p.client(nil), o.URL+"/cu-n")
	if resp.StatusCode != 200 || body != "origin body /cu-n" || resp.Header.Get(HeaderUsage) != "train-ai=n, search=y" {
		t.Fatalf("annotate: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	recs := p.records(t, o.URL+"/cu-n")
	if len(recs) != 2 || recs[1]["decision"] != audit.DecisionReported || recs[1]["reason"] != "usage-disallowed" ||
		usageField(recs[1], "train-ai")["source"] != "content-usage-header" || recs[1]["rule"] != "Content-Usage: train-ai=n, search=y" {
		t.Fatalf("annotate audit: %v", recs)
	}
	if resp, _ := get(t, p.client(nil), o.URL+"/cu-y"); resp.StatusCode != 200 || resp.Header.Get(HeaderUsage) != "train-ai=y" {
		t.Fatalf("/cu-y: %d %v", resp.StatusCode, resp.Header)
	}

	e := startUsageProxy(t, func(c *config.Config) {
		c.Purposes = aipref.SetOf(aipref.TrainAI)
		c.Usage.Response = config.UsageResponseEnforce
	})
	resp, body = get(t, e.client(nil), o.URL+"/cu-n")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "usage-disallowed" || strings.Contains(body, "origin body") ||
		!strings.Contains(body, "purpose train-ai disallowed by the response") {
		t.Fatalf("enforce: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if rec := e.records(t, o.URL+"/cu-n"); rec[len(rec)-1]["decision"] != audit.DecisionBlocked || rec[len(rec)-1]["status"] != 403.0 {
		t.Fatalf("enforce audit: %v", rec)
	}
	if resp, _ := get(t, e.client(nil), o.URL+"/cu-y"); resp.StatusCode != 200 {
		t.Fatalf("enforce /cu-y: %d", resp.StatusCode)
	}

	n := startUsageProxy(t, func(c *config.Config) { c.Usage.Response = config.UsageResponseEnforce })
	if resp, _ := get(t, n.client(nil), o.URL+"/cu-n"); resp.StatusCode != 200 || resp.Header.Get(HeaderUsage) != "train-ai=n, search=y" {
		t.Fatalf("enforce without purposes: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestUsageRobotTags: noai in meta robots refuses an HTML response in
// enforce mode (even with robot_tags off, whose scan it then makes);
// noimageai counts only for images.
func TestUsageRobotTags(t *testing.T) {
	o := newUsageOrigin(t, "User-agent: *\nAllow: /\n")
	for _, tags := range []config.RobotTagsMode{config.RobotTagsAnnotate, config.RobotTagsOff} {
		p := startUsageProxy(t, func(c *config.Config) {
			c.Purposes = aipref.SetOf(aipref.TrainAI)
			c.Usage.Response = config.UsageResponseEnforce
			c.RobotTags.Mode = tags
		})
		resp, body := get(t, p.client(nil), o.URL+"/noai.html")
		if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "origin body") || !strings.Contains(body, "meta robots: noai") {
			t.Fatalf("robot_tags %s, noai meta: %d %s", tags, resp.StatusCode, body)
		}
		resp, body = get(t, p.client(nil), o.URL+"/noimageai.png")
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "X-Robots-Tag: noimageai") {
			t.Fatalf("robot_tags %s, noimageai png: %d %s", tags, resp.StatusCode, body)
		}
		resp, body = get(t, p.client(nil), o.URL+"/noimageai.html")
		if resp.StatusCode != 200 || resp.Header.Get(HeaderUsage) != "" || body != "origin body /noimageai.html" {
			t.Fatalf("robot_tags %s, noimageai html: %d %v", tags, resp.StatusCode, resp.Header)
		}
	}
}

// TestAdminDecisionPurpose: /v1/decision decides for the purpose
// parameter, and names the allowed values for a bad one.
func TestAdminDecisionPurpose(t *testing.T) {
	o := newUsageOrigin(t, attachExample)
	p := startUsageProxy(t, nil)
	ask := func(q string) (int, map[string]any) { return askDecision(t, p.addr, o.URL+"/test", q) }
	code, m := ask("&agent=MyBot&purpose=train-ai,search")
	if code != 200 || m["reason"] != "usage-disallowed" || m["line"] != 4.0 || usageField(m, "train-ai")["pref"] != "disallowed" ||
		usageField(m, "search")["pref"] != "unknown" || len(m["purposes"].([]any)) != 2 {
		t.Fatalf("purpose=train-ai,search: %d %v", code, m)
	}
	if code, m := ask(""); code != 200 || m["allowed"] != true || usageField(m, "train-ai")["pref"] != "disallowed" {
		t.Fatalf("no purpose: %d %v", code, m)
	}
	if code, m := ask("&purpose=training"); code != http.StatusBadRequest || !strings.Contains(m["error"].(string), "train-ai, search, ai-input") {
		t.Fatalf("bad purpose: %d %v", code, m)
	}
}

// TestIsImageMatchesMediaType: isImage's shortcut for media types that
// cannot be an image's agrees with parsing them, for spellings that
// lower-casing and trimming change.
func TestIsImageMatchesMediaType(t *testing.T) {
	for _, ct := range []string{"", " ", "image/png", "IMAGE/PNG", " \t image/gif; q=1", "Image/webp", "\u0130MAGE/png",
		"\u00a0image/png", "text/html", "application/json", ";image/png", "image", "images/png", "i", "imagex/png",
		"\u212amage/png", "\x85image/png"} {
		mt, _, err := mime.ParseMediaType(ct)
		want := err == nil && strings.HasPrefix(mt, "image/")
		resp := &http.Response{Header: http.Header{"Content-Type": {ct}}}
		if got := isImage(resp); got != want {
			t.Errorf("isImage(%q) = %v, want %v", ct, got, want)
		}
	}
}
