package proxy

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// TestTDMRepFetchNotPoisonedByDesync: tdmrep.json goes through the
// policy transport as robots.txt does. A client smuggles a request in
// the body of an allowed GET; the origin answers it late (a 404: "no
// tdmrep.json") on the same keep-alive connection. The re-fetch of
// tdmrep.json after its copy expired (robots.txt's has not) must not
// read that answer: the reserved URL is still refused and never reaches
// the origin. With the proxied requests' transport it read the 404.
func TestTDMRepFetchNotPoisonedByDesync(t *testing.T) {
	o := newDesyncOrigin(t, "User-agent: *\nAllow: /\n")
	o.files = map[string]string{"/.well-known/tdmrep.json": `[{"location": "/private", "tdm-reservation": 1}]`}
	clk := enforcetest.NewClock(politeT0)
	h := newHarness(t, harnessOpts{clock: clk, config: func(c *config.Config) {
		c.Robots.TTL = time.Hour
		c.Robots.MinTTL = time.Minute
		tdmEnforce(c)
	}})
	base := "http://" + o.ln.Addr().String()
	o.smuggleGet(t, h.addr)
	if n := o.hitsOf("/.well-known/tdmrep.json"); n != 1 {
		t.Fatalf("%d tdmrep.json fetches, want 1", n)
	}
	clk.Advance(2 * time.Minute) // tdmrep.json (max-age=60) expired, robots.txt (robots.ttl 1h) not
	resp, body := h.get(t, base+"/private")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "tdm-reserved" {
		t.Errorf("GET /private after the desync: %d %q, want 403 tdm-reserved", resp.StatusCode, body)
	}
	o.checkRefetched(t, "/.well-known/tdmrep.json")
}

// TestTDMRepPolicyNoHeaderInjection: a tdm-policy holding CR LF, from the
// origin's file, adds no line to robotsgate's refusal and no header to
// its answers.
func TestTDMRepPolicyNoHeaderInjection(t *testing.T) {
	o := newTDMOrigin(t, 0, `[{"location": "/a", "tdm-reservation": 1, "tdm-policy": "https://p.example/\r\nX-Injected: 1"}]`, false)
	e := startUsageProxy(t, tdmEnforce)
	r := startUsageProxy(t, func(c *config.Config) { c.Purposes = aipref.SetOf(aipref.TrainAI) })
	for _, p := range []*usageProxy{e, r} {
		resp, body := get(t, p.client(nil), o.URL+"/a")
		if resp.Header.Get("X-Injected") != "" || strings.ContainsAny(resp.Header.Get(HeaderTDM), "\r\n") || strings.Contains(body, "\nX-Injected") ||
			!strings.HasPrefix(resp.Header.Get(HeaderTDM), "1; source=tdmrep.json") {
			t.Fatalf("%d %v\n%s", resp.StatusCode, resp.Header, body)
		}
	}
}

// TestTDMRepEnforceReadsWholeDocuments: under tdmrep.mode enforce a bound
// crawler's Range is removed (the meta scan must see the whole head); in
// report mode, or for a crawler TDMRep does not bind, it is kept.
func TestTDMRepEnforceReadsWholeDocuments(t *testing.T) {
	o := newTDMOrigin(t, 404, "", false)
	for _, tc := range []struct {
		name   string
		mutate func(*config.Config)
		want   string
	}{
		{"enforce", tdmEnforce, "range="},
		{"report", func(c *config.Config) { c.Purposes = aipref.SetOf(aipref.TrainAI) }, "range=bytes=0-3"},
		{"not bound", func(c *config.Config) {
			tdmEnforce(c)
			c.Purposes = aipref.SetOf(aipref.Search)
		}, "range=bytes=0-3"},
	} {
		p := startUsageProxy(t, tc.mutate)
		if _, body := get(t, p.client(nil), o.URL+"/echo-range", "Range", "bytes=0-3"); body != tc.want {
			t.Errorf("%s: origin saw %q, want %q", tc.name, body, tc.want)
		}
	}
}

// TestTDMRepDefaultPurposes: by default TDMRep binds train-ai, ai-use and
// ai-input, declared in the configuration or in the purposes header.
func TestTDMRepDefaultPurposes(t *testing.T) {
	o := newTDMOrigin(t, 0, tdmThreeGroups, false)
	for _, p := range []aipref.Purpose{aipref.TrainAI, aipref.AIUse, aipref.AIInput} {
		px := startUsageProxy(t, func(c *config.Config) {
			c.Purposes = aipref.SetOf(p)
			c.TDMRep.Mode = config.TDMRepEnforce
		})
		if resp, _ := get(t, px.client(nil), o.URL+"/directory-a/x"); resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "tdm-reserved" {
			t.Errorf("%s: %d %v", p, resp.StatusCode, resp.Header)
		}
	}
	px := startUsageProxy(t, func(c *config.Config) {
		c.Purposes = aipref.SetOf(aipref.Search)
		c.AllowAgentOverride = true
		c.TDMRep.Mode = config.TDMRepEnforce
	})
	if resp, _ := get(t, px.client(nil), o.URL+"/directory-a/x", "X-Robots-Purpose", "search, ai-use"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("purposes header ai-use: %d", resp.StatusCode)
	}
	if resp, _ := get(t, px.client(nil), o.URL+"/directory-a/x"); resp.StatusCode != 200 {
		t.Errorf("search: %d", resp.StatusCode)
	}
}

// TestTDMRepSiteException: under an operator's allow exception (written
// permission, e.g. a TDM licence) a reservation is annotated, never
// refused.
func TestTDMRepSiteException(t *testing.T) {
	o := newTDMOrigin(t, 0, tdmThreeGroups, false)
	p := startUsageProxy(t, func(c *config.Config) {
		tdmEnforce(c)
		c.Sites = []config.Site{{Match: "127.0.0.1", Policy: config.SitePolicyAllow, Note: "TDM licence 42"}}
	})
	for _, tc := range []struct{ path, header string }{
		{"/directory-a/x", "1; source=tdmrep.json"},
		{"/hdr-1", `1; source=header; policy="` + tdmPolicy + `"`},
	} {
		if resp, _ := get(t, p.client(nil), o.URL+tc.path); resp.StatusCode != 200 || resp.Header.Get(HeaderTDM) != tc.header {
			t.Errorf("%s: %d %v", tc.path, resp.StatusCode, resp.Header)
		}
	}
}

// TestTDMRepReload: a reload that turns tdmrep.mode to enforce applies to
// the next request.
func TestTDMRepReload(t *testing.T) {
	o := newTDMOrigin(t, 0, tdmThreeGroups, false)
	src := &swappable{}
	h := newHarness(t, harnessOpts{load: src.load, config: func(c *config.Config) { c.Purposes = aipref.SetOf(aipref.TrainAI) }})
	if resp, _ := h.get(t, o.URL+"/directory-a/x"); resp.StatusCode != 200 || resp.Header.Get(HeaderTDM) != "1; source=tdmrep.json" {
		t.Fatalf("report: %d %v", resp.StatusCode, resp.Header)
	}
	next := h.srv.live.Load().cfg
	next.TDMRep.Mode = config.TDMRepEnforce
	src.set(next, nil)
	if res, err := h.srv.Reload("test"); err != nil || res.Result != ReloadOK || strings.Join(res.Changed, ",") != "tdmrep.mode" {
		t.Fatalf("reload: %+v %v", res, err)
	}
	if resp, _ := h.get(t, o.URL+"/directory-a/x"); resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "tdm-reserved" {
		t.Fatalf("enforce after the reload: %d %v", resp.StatusCode, resp.Header)
	}
}
