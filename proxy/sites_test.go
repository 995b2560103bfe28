package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// hostOrigin is an origin on 127.0.0.1 that many host names reach (the
// proxy's transport dials every name to it: namedTransport), counting the
// requests of each Host, /robots.txt included.
type hostOrigin struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int // by Host header, every path
}

func newHostOrigin(t *testing.T, robots string) *hostOrigin {
	o := &hostOrigin{hits: make(map[string]int)}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.hits[r.Host]++
		o.mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, robots)
			return
		}
		fmt.Fprintf(w, "page %s", r.URL.Path)
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *hostOrigin) hitsOf(host string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[host]
}

// port is the origin's port.
func (o *hostOrigin) port() string {
	_, p, _ := net.SplitHostPort(o.Listener.Addr().String())
	return p
}

// namedTransport returns a transport built by newTr (NewTransport,
// NewPolicyTransport) that dials every host name to 127.0.0.1, on the
// port asked for.
func namedTransport(t *testing.T, newTr func(config.Config) (*http.Transport, error)) func(config.Config) *http.Transport {
	return func(cfg config.Config) *http.Transport {
		tr, err := newTr(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var d net.Dialer
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			return d.DialContext(ctx, network, "127.0.0.1:"+port)
		}
		return tr
	}
}

// loopbackLookup resolves every host name to 127.0.0.1.
func loopbackLookup(context.Context, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// partnerSites are the exceptions of the site tests.
func partnerSites() []config.Site {
	return []config.Site{
		{Match: "*.partner.test", Policy: config.SitePolicyDeny},
		{Match: "api.partner.test", Policy: config.SitePolicyAllow, Note: "written permission, ticket 7"},
		{Match: "tie.test", Policy: config.SitePolicyAllow, Note: "ticket 8"},
		{Match: "tie.test", Policy: config.SitePolicyDeny},
	}
}

// TestSiteDenyFetchesNothing: a deny exception refuses with 403
// site-denied before anything is fetched from the site, robots.txt
// included, and the refusal names the exception (403 body, audit).
func TestSiteDenyFetchesNothing(t *testing.T) {
	o := newHostOrigin(t, privateRobots)
	h := newHarness(t, harnessOpts{transport: namedTransport(t, NewTransport), policyTransport: namedTransport(t, NewPolicyTransport), lookup: loopbackLookup, config: func(c *config.Config) { c.Sites = partnerSites() }})
	for _, host := range []string{"www.partner.test", "tie.test"} { // wildcard; deny beats allow at equal specificity
		for _, path := range []string{"/page", "/robots.txt"} {
			resp, body := h.get(t, "http://"+host+":"+o.port()+path, "Accept", "application/json")
			var b answer.RefusalBody
			if err := json.Unmarshal([]byte(body), &b); err != nil {
				t.Fatalf("%s%s: %d %q", host, path, resp.StatusCode, body)
			}
			if resp.StatusCode != http.StatusForbidden || b.Reason != string(answer.ReasonSiteDenied) || b.Site == "" {
				t.Errorf("%s%s: %d %+v, want 403 site-denied naming the site", host, path, resp.StatusCode, b)
			}
		}
		if n := o.hitsOf(host + ":" + o.port()); n != 0 {
			t.Errorf("%s: the origin saw %d requests (robots.txt included), want 0", host, n)
		}
	}
	rec := h.audit.Find(t, string(answer.ReasonSiteDenied))
	if rec["decision"] != "blocked" || rec["site"] == nil || rec["status"] != float64(403) {
		t.Errorf("audit record: %v", rec)
	}
}

// TestSiteAllowForwardsDisallowed: an allow exception (more specific
// than a wildcard deny) forwards a URL robots.txt disallows, audited as
// allowed with reason site-exception, the note and what robots.txt said.
func TestSiteAllowForwardsDisallowed(t *testing.T) {
	o := newHostOrigin(t, privateRobots)
	h := newHarness(t, harnessOpts{transport: namedTransport(t, NewTransport), policyTransport: namedTransport(t, NewPolicyTransport), lookup: loopbackLookup, config: func(c *config.Config) { c.Sites = partnerSites() }})
	u := "http://api.partner.test:" + o.port() + "/private/x"
	resp, body := h.get(t, u)
	if resp.StatusCode != http.StatusOK || body != "page /private/x" {
		t.Fatalf("allowed site: %d %q", resp.StatusCode, body)
	}
	rec := h.audit.Find(t, string(answer.ReasonSiteException))
	if rec["decision"] != "allowed" || rec["site"] != "api.partner.test" || rec["site_note"] != "written permission, ticket 7" ||
		rec["rule"] != "Disallow: /private" || !strings.Contains(rec["detail"].(string), "robots.txt refuses") {
		t.Errorf("audit record: %v", rec)
	}
	// /v1/decision shows the same.
	w := httptest.NewRecorder()
	h.srv.admin.ServeHTTP(w, httptest.NewRequest("GET", "http://localhost/v1/decision?url="+url.QueryEscape(u)+"&agent=TestBot", nil))
	var d answer.DecisionJSON
	if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil || !d.Allowed || d.Reason != string(answer.ReasonSiteException) || d.SiteNote == "" {
		t.Errorf("/v1/decision: %v %s", err, w.Body)
	}
	w = httptest.NewRecorder()
	h.srv.admin.ServeHTTP(w, httptest.NewRequest("GET", "http://localhost/v1/decision?url="+url.QueryEscape("http://x.partner.test/"), nil))
	if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil || d.Allowed || d.Reason != string(answer.ReasonSiteDenied) || d.Site != "*.partner.test" {
		t.Errorf("/v1/decision of a denied site: %v %s", err, w.Body)
	}
}

// TestSiteCrawlDelayStricter: a site's crawl_delay is a floor on
// robots.txt's Crawl-delay.
func TestSiteCrawlDelayStricter(t *testing.T) {
	clk := enforcetest.NewClock(politeT0)
	o := newStampOrigin(t, "User-agent: *\nCrawl-delay: 1\n", clk, nil)
	h := newHarness(t, harnessOpts{clock: clk, config: func(c *config.Config) {
		c.Sites = []config.Site{{Match: "127.0.0.1", CrawlDelay: 5 * time.Second}}
	}})
	if resp, _ := h.get(t, o.URL+"/p0"); resp.StatusCode != 200 {
		t.Fatalf("first request: %d", resp.StatusCode)
	}
	out := make(chan getResult, 1)
	h.getAsync(t, o.URL+"/p1", out)
	testsupport.WaitFor(t, "the request waiting for its slot", func() bool { return clk.Waiters() == 1 })
	clk.Advance(time.Second) // robots.txt's delay: not enough
	clk.Advance(4 * time.Second)
	if r := <-out; r.status != 200 {
		t.Fatalf("second request: %d %s", r.status, r.body)
	}
	if _, times := o.seen(); !times[1].Equal(politeT0.Add(5 * time.Second)) {
		t.Errorf("second request at %v, want 5s", times[1].Sub(politeT0))
	}
}

// TestSiteExceptionsInsideMITM: inside an MITM session a deny exception
// refuses without any fetch, and an allow one forwards a disallowed URL.
func TestSiteExceptionsInsideMITM(t *testing.T) {
	o := newTLSOrigin(t, privateRobots)
	cfg := mitmConfig(t, o)
	host := "127.0.0.1:" + fmt.Sprint(o.port(t))
	cfg.Sites = []config.Site{{Match: "https://" + host, Policy: config.SitePolicyAllow, Note: "ticket 9"}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p := startHTTPSProxy(t, cfg)
	c := p.client(p.ca)
	resp, body := get(t, c, "https://"+host+"/private/y")
	if resp.StatusCode != http.StatusOK || p.audit.Find(t, string(answer.ReasonSiteException))["site_note"] != "ticket 9" {
		t.Fatalf("allowed inside MITM: %d %q", resp.StatusCode, body)
	}

	o2 := newTLSOrigin(t, privateRobots)
	cfg = mitmConfig(t, o2)
	cfg.Sites = []config.Site{{Match: "127.0.0.1", Policy: config.SitePolicyDeny}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p = startHTTPSProxy(t, cfg)
	c = p.client(p.ca)
	resp, _ = get(t, c, "https://127.0.0.1:"+fmt.Sprint(o2.port(t))+"/page")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonSiteDenied) {
		t.Fatalf("denied inside MITM: %d %v", resp.StatusCode, resp.Header)
	}
	if n := o2.hit("/robots.txt") + o2.hit("/page"); n != 0 {
		t.Errorf("the denied origin saw %d requests", n)
	}
}

// TestSiteTunnelAndReportMode: in tunnel mode a deny exception refuses
// the CONNECT without fetching anything; in report mode it refuses
// nothing: the request is audited as reported and forwarded, robots.txt
// still not fetched.
func TestSiteTunnelAndReportMode(t *testing.T) {
	o := newHostOrigin(t, privateRobots)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) {
		c.HTTPS.Mode = config.HTTPSModeTunnel
		c.Agent = "TestBot"
		c.HTTPS.AllowedPorts = []int{443, mustAtoi(t, o.port())}
		c.Sites = []config.Site{{Match: "127.0.0.1", Policy: config.SitePolicyDeny}}
	}})
	resp, _, _ := rawConnect(t, h.addr, "127.0.0.1:"+o.port())
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonSiteDenied) {
		t.Fatalf("CONNECT to a denied site in tunnel mode: %d %v", resp.StatusCode, resp.Header)
	}
	if n := o.hitsOf("127.0.0.1:" + o.port()); n != 0 {
		t.Fatalf("tunnel mode: the denied origin saw %d requests", n)
	}

	h = newHarness(t, harnessOpts{config: func(c *config.Config) {
		c.Mode = config.ModeReport
		c.Sites = []config.Site{{Match: "127.0.0.1", Policy: config.SitePolicyDeny}}
	}})
	if resp, body := h.get(t, o.URL+"/page"); resp.StatusCode != 200 || body != "page /page" {
		t.Fatalf("report mode: %d %q", resp.StatusCode, body)
	}
	if rec := h.audit.Find(t, string(answer.ReasonSiteDenied)); rec["decision"] != "reported" {
		t.Errorf("report mode audit: %v", rec)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if n := o.hits[o.Listener.Addr().String()]; n != 1 {
		t.Errorf("the origin saw %d requests in report mode, want 1 (the page, no robots.txt)", n)
	}
}

func mustAtoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
