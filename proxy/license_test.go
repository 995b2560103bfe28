package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// articlesRSL is rsl.md's worked example: everything permitted site-wide,
// AI training prohibited under /articles/.
const articlesRSL = `<?xml version="1.0" encoding="UTF-8"?>
<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/"><license><permits type="usage">all</permits></license></content>
  <content url="/articles/"><license><prohibits type="usage">ai-train</prohibits></license></content>
</rsl>`

// serverRSL is rsl.md's CAP example: a free license that needs a token
// of a License Server.
func serverRSL(server string) string {
	return `<rsl xmlns="https://rslstandard.org/rsl"><content url="/" server="` + server + `">
    <license><permits type="usage">all</permits></license></content></rsl>`
}

// licenseOrigin serves a robots.txt whose License line names its
// /license.xml, that license, and pages; it records every request's
// path and Authorization header.
type licenseOrigin struct {
	*httptest.Server
	license string
	mu      sync.Mutex
	hits    map[string]int
	auth    map[string]string // path → the Authorization of its last request
}

func newLicenseOrigin(t *testing.T, license string) *licenseOrigin {
	return startLicenseOrigin(t, license, false)
}

// startLicenseOrigin starts a licenseOrigin, over TLS when tls is set.
func startLicenseOrigin(t *testing.T, license string, tls bool) *licenseOrigin {
	t.Helper()
	o := &licenseOrigin{license: license, hits: map[string]int{}, auth: map[string]string{}}
	scheme, start := "http://", httptest.NewServer
	if tls {
		scheme, start = "https://", quietTLSServer
	}
	o.Server = start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.hits[r.URL.Path]++
		o.auth[r.URL.Path] = r.Header.Get("Authorization")
		o.mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "License: "+scheme+r.Host+"/license.xml\n\nUser-agent: *\nAllow: /\nContent-Usage: train-ai=y\n")
		case "/license.xml":
			w.Header().Set("Content-Type", "application/rsl+xml")
			o.mu.Lock()
			lic := o.license
			o.mu.Unlock()
			io.WriteString(w, lic)
		case "/spoof":
			w.Header().Set(HeaderLicense, "permitted")
			io.WriteString(w, "page")
		default:
			io.WriteString(w, "page "+r.URL.Path)
		}
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *licenseOrigin) hit(path string) (int, string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[path], o.auth[path]
}

// licenseEnforce is a train-ai crawler under license.mode enforce.
func licenseEnforce(c *config.Config) {
	c.Purposes = aipref.SetOf(aipref.TrainAI)
	c.License.Mode = config.LicenseEnforce
}

// TestLicenseProhibitedRefused: a use the license prohibits is refused
// with 403 license-prohibited naming the license before the request
// leaves; a permitted one goes, annotated; the license is fetched once.
func TestLicenseProhibitedRefused(t *testing.T) {
	o := newLicenseOrigin(t, articlesRSL)
	p := startUsageProxy(t, licenseEnforce)
	c := p.client(nil)
	lic := o.URL + "/license.xml"

	resp, body := get(t, c, o.URL+"/articles/x")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "license-prohibited" ||
		!strings.Contains(body, lic) || !strings.Contains(body, "ai-train") {
		t.Fatalf("prohibited: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	if got := resp.Header.Get(HeaderLicense); got != `prohibited; use=ai-train; license="`+lic+`"` {
		t.Fatalf("%s on the 403: %q", HeaderLicense, got)
	}
	resp, body = get(t, c, o.URL+"/articles/y", "Accept", "application/json")
	var j answer.RefusalBody
	if err := json.Unmarshal([]byte(body), &j); err != nil || j.Reason != "license-prohibited" || j.License == nil ||
		j.License.License != lic || j.License.Content != "/articles/" || j.License.State != "prohibited" {
		t.Fatalf("JSON refusal: %v %s", err, body)
	}
	// Another spelling of the path is refused too.
	if resp, _ := get(t, c, o.URL+"/%61rticles/z"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("spelling: %d", resp.StatusCode)
	}
	for _, path := range []string{"/articles/x", "/articles/y", "/%61rticles/z", "/articles/z"} {
		if n, _ := o.hit(path); n != 0 {
			t.Fatalf("the origin saw %s", path)
		}
	}
	rec := p.records(t, o.URL+"/articles/x")
	if len(rec) != 2 || rec[1]["decision"] != audit.DecisionBlocked || rec[1]["reason"] != "license-prohibited" {
		t.Fatalf("audit: %v", rec)
	}
	if l, _ := rec[1]["license"].(map[string]any); l["state"] != "prohibited" || l["use"] != "ai-train" || l["license"] != lic {
		t.Fatalf("audit license: %v", rec[1])
	}

	resp, _ = get(t, c, o.URL+"/news/1")
	if resp.StatusCode != 200 || resp.Header.Get(HeaderLicense) != `permitted; license="`+lic+`"` {
		t.Fatalf("permitted: %d %v", resp.StatusCode, resp.Header)
	}
	// The license itself is always fetchable; an origin's own header is replaced.
	if resp, _ := get(t, c, lic); resp.StatusCode != 200 {
		t.Fatalf("license itself: %d", resp.StatusCode)
	}
	if resp, _ := get(t, c, o.URL+"/spoof"); resp.Header.Get(HeaderLicense) != `permitted; license="`+lic+`"` {
		t.Fatalf("spoofed header: %v", resp.Header)
	}
	if n, auth := o.hit("/license.xml"); n != 2 || auth != "" { // robotsgate's fetch, and the client's own
		t.Fatalf("license fetched %d times, Authorization %q", n, auth)
	}
}

// TestLicenseSearchPermitted: the same license lets a search crawler
// through /articles/.
func TestLicenseSearchPermitted(t *testing.T) {
	o := newLicenseOrigin(t, articlesRSL)
	p := startUsageProxy(t, func(c *config.Config) {
		licenseEnforce(c)
		c.Purposes = aipref.SetOf(aipref.Search)
	})
	if resp, body := get(t, p.client(nil), o.URL+"/articles/x"); resp.StatusCode != 200 || body != "page /articles/x" {
		t.Fatalf("search: %d %s", resp.StatusCode, body)
	}
}

// TestLicenseReportAnnotates: in license.mode report (the default) a
// prohibited use goes through, annotated and audited as reported.
func TestLicenseReportAnnotates(t *testing.T) {
	o := newLicenseOrigin(t, articlesRSL)
	p := startUsageProxy(t, func(c *config.Config) { c.Purposes = aipref.SetOf(aipref.TrainAI) })
	resp, _ := get(t, p.client(nil), o.URL+"/articles/x")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get(HeaderLicense), "prohibited; use=ai-train;") {
		t.Fatalf("report: %d %v", resp.StatusCode, resp.Header)
	}
	if n, _ := o.hit("/articles/x"); n != 1 {
		t.Fatalf("origin hits %d", n)
	}
	rec := p.records(t, o.URL+"/articles/x")
	if len(rec) < 2 || rec[1]["decision"] != audit.DecisionReported || rec[1]["reason"] != "license-prohibited" {
		t.Fatalf("audit: %v", rec)
	}
	// license.mode off reads nothing.
	off := newLicenseOrigin(t, articlesRSL)
	q := startUsageProxy(t, func(c *config.Config) { licenseEnforce(c); c.License.Mode = config.LicenseOff })
	if resp, _ := get(t, q.client(nil), off.URL+"/articles/x"); resp.StatusCode != 200 || resp.Header.Get(HeaderLicense) != "" {
		t.Fatalf("off: %d %v", resp.StatusCode, resp.Header)
	}
	if n, _ := off.hit("/license.xml"); n != 0 {
		t.Fatal("license fetched with license.mode off")
	}
}

// TestLicenseTokenOnlyToItsServer: a configured token is sent, as
// Authorization: License, only to an origin whose license names its
// License Server (in any spelling), never to another origin, nor on the
// license fetch, nor in clear text; an origin whose server has no token
// is refused license-required; a client's own Authorization is kept.
func TestLicenseTokenOnlyToItsServer(t *testing.T) {
	a := startLicenseOrigin(t, serverRSL("https://LS.example:443/api"), true)
	b := startLicenseOrigin(t, serverRSL("https://other.example"), true)
	plain := startLicenseOrigin(t, articlesRSL, true)
	clear := startLicenseOrigin(t, serverRSL("https://ls.example"), false)
	cfg := mitmConfig(t, &tlsOrigin{Server: a.Server}, &tlsOrigin{Server: b.Server}, &tlsOrigin{Server: plain.Server})
	licenseEnforce(&cfg)
	cfg.License.Tokens = []string{"HTTPS://ls.EXAMPLE/=tok-a", "https://third.example=tok-3"}
	p := startHTTPSProxy(t, cfg)
	c := p.client(p.ca)
	if resp, _ := get(t, c, a.URL+"/page"); resp.StatusCode != 200 || resp.Header.Get(HeaderLicense) != `required; use=ai-train; license="`+a.URL+`/license.xml"; token=sent` {
		t.Fatalf("a: %d %v", resp.StatusCode, resp.Header)
	}
	if _, auth := a.hit("/page"); auth != "License tok-a" {
		t.Fatalf("a saw Authorization %q", auth)
	}
	if _, auth := a.hit("/license.xml"); auth != "" {
		t.Fatalf("the license fetch carried Authorization %q", auth)
	}
	resp, body := get(t, c, b.URL+"/page")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "license-required" ||
		!strings.Contains(body, "https://other.example") || strings.Contains(body, "tok-") {
		t.Fatalf("b: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	if n, _ := b.hit("/page"); n != 0 {
		t.Fatal("b saw a refused request")
	}
	get(t, c, plain.URL+"/news/1")
	if n, auth := plain.hit("/news/1"); n != 1 || auth != "" {
		t.Fatalf("an origin without a server got %d requests, Authorization %q", n, auth)
	}
	// The same server over plain http: the token is never sent in clear text.
	resp, body = get(t, c, clear.URL+"/page")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "license-required" || !strings.Contains(body, "only over https") {
		t.Fatalf("clear text: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	if n, _ := clear.hit("/page"); n != 0 {
		t.Fatal("the plain-http origin saw the request")
	}
	// The client's own Authorization is neither replaced nor refused.
	if resp, _ := get(t, c, b.URL+"/own", "Authorization", "License mine"); resp.StatusCode != 200 {
		t.Fatalf("client token: %d", resp.StatusCode)
	}
	if _, auth := b.hit("/own"); auth != "License mine" {
		t.Fatalf("b /own saw %q", auth)
	}
	for _, r := range p.audit.Records(t) {
		if b, _ := json.Marshal(r); strings.Contains(string(b), "tok-") {
			t.Fatalf("a token in the audit log: %s", b)
		}
	}
}

// TestLicenseUnknownAndPerUser: an unreadable license is annotated
// unknown, refused with usage.unknown deny; a user's license= overrides
// the configured mode.
func TestLicenseUnknownAndPerUser(t *testing.T) {
	o := newLicenseOrigin(t, `<html>not a license</html>`)
	p := startUsageProxy(t, func(c *config.Config) { licenseEnforce(c); c.Usage.Unknown = config.UsageUnknownDeny })
	if resp, _ := get(t, p.client(nil), o.URL+"/a"); resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "license-unknown" {
		t.Fatalf("deny: %d %v", resp.StatusCode, resp.Header)
	}
	q := startUsageProxy(t, licenseEnforce)
	if resp, _ := get(t, q.client(nil), o.URL+"/b"); resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get(HeaderLicense), "unknown") {
		t.Fatalf("allow: %d %v", resp.StatusCode, resp.Header)
	}

	art := newLicenseOrigin(t, articlesRSL)
	creds := writeCredentials(t, "strict:pw1 license=enforce\nlax:pw2 license=report\n")
	r := startUsageProxy(t, func(c *config.Config) {
		c.Purposes = aipref.SetOf(aipref.TrainAI)
		c.Auth.CredentialsFile = creds
	})
	if resp, _ := get(t, r.client(url.UserPassword("strict", "pw1")), art.URL+"/articles/1"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("strict: %d", resp.StatusCode)
	}
	if resp, _ := get(t, r.client(url.UserPassword("lax", "pw2")), art.URL+"/articles/1"); resp.StatusCode != 200 {
		t.Fatalf("lax: %d", resp.StatusCode)
	}
}

// TestLicenseAdminDecision: /v1/decision shows the license verdict.
func TestLicenseAdminDecision(t *testing.T) {
	o := newLicenseOrigin(t, articlesRSL)
	p := startUsageProxy(t, licenseEnforce)
	c := &http.Client{Timeout: testTimeout}
	for purpose, allowed := range map[string]bool{"train-ai": false, "search": true} {
		resp, err := c.Get("http://" + p.addr + "/v1/decision?purpose=" + purpose + "&url=" + url.QueryEscape(o.URL+"/articles/x"))
		if err != nil {
			t.Fatal(err)
		}
		var j answer.DecisionJSON
		err = json.NewDecoder(resp.Body).Decode(&j)
		resp.Body.Close()
		if err != nil || j.Allowed != allowed || j.License == nil || (!allowed && j.Reason != "license-prohibited") {
			t.Fatalf("%s: %v %+v", purpose, err, j)
		}
	}
	// Metrics: verdicts by state and fetches by status class, never by origin.
	get(t, p.client(nil), o.URL+"/articles/x")
	get(t, p.client(nil), o.URL+"/news")
	rr := httptest.NewRecorder()
	p.srv.metrics.Handler().ServeHTTP(rr, httptest.NewRequest("GET", "/metrics", nil))
	m := rr.Body.String()
	for _, want := range []string{
		`robotsgate_decisions_total{decision="blocked",reason="license-prohibited"} 1`,
		`robotsgate_license_verdicts_total{state="prohibited"} 1`,
		`robotsgate_license_verdicts_total{state="permitted"} 1`,
		`robotsgate_license_verdicts_total{state="unknown"} 0`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(m, o.URL) || strings.Contains(m, "license.xml") {
		t.Error("a metric names the origin or the license")
	}
}

// TestLicenseMITM: inside an MITM session, over real TLS, a prohibited
// use is refused before it leaves and the token goes to the origin whose
// license names its server.
func TestLicenseMITM(t *testing.T) {
	o := startLicenseOrigin(t, serverRSL("https://ls.example"), true)
	cfg := mitmConfig(t, &tlsOrigin{Server: o.Server})
	licenseEnforce(&cfg)
	cfg.License.Tokens = []string{"https://ls.example=tok-tls"}
	p := startHTTPSProxy(t, cfg)
	c := p.client(p.ca)
	if resp, _ := get(t, c, o.URL+"/page"); resp.StatusCode != 200 || !strings.HasSuffix(resp.Header.Get(HeaderLicense), "token=sent") {
		t.Fatalf("MITM token: %d %v", resp.StatusCode, resp.Header)
	}
	if _, auth := o.hit("/page"); auth != "License tok-tls" {
		t.Fatalf("origin saw %q", auth)
	}
	o.mu.Lock()
	o.license = articlesRSL
	o.mu.Unlock()
	q := startHTTPSProxy(t, cfg) // a fresh cache reads the new license
	if resp, _ := get(t, q.client(q.ca), o.URL+"/articles/1"); resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "license-prohibited" {
		t.Fatalf("MITM prohibited: %d %v", resp.StatusCode, resp.Header)
	}
	if n, _ := o.hit("/articles/1"); n != 0 {
		t.Fatal("the origin saw a prohibited request")
	}
}

// TestLicenseTokenReport: in report mode a request whose License Server
// has no token goes, without one.
func TestLicenseTokenReport(t *testing.T) {
	b := startLicenseOrigin(t, serverRSL("https://other.example"), true)
	cfg := mitmConfig(t, &tlsOrigin{Server: b.Server})
	cfg.Purposes = aipref.SetOf(aipref.TrainAI)
	cfg.License.Tokens = []string{"https://ls.example=tok-a"}
	q := startHTTPSProxy(t, cfg)
	if resp, _ := get(t, q.client(q.ca), b.URL+"/report"); resp.StatusCode != 200 || !strings.HasSuffix(resp.Header.Get(HeaderLicense), "token=missing") {
		t.Fatalf("report b: %d %v", resp.StatusCode, resp.Header)
	}
	if _, auth := b.hit("/report"); auth != "" {
		t.Fatalf("b got %q", auth)
	}
}
