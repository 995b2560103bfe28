package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// agentRules closes /private to BadBot and leaves everything open to
// every other agent, GoodBot included.
const agentRules = "User-agent: BadBot\nDisallow: /private\n\nUser-agent: GoodBot\nAllow: /\n\nUser-agent: *\nAllow: /\n"

// TestCrawlerUserAgentSelectsItsGroup: a crawler's browser-shaped
// User-Agent is decided by the crawler's own group, and a plain browser's
// by "*" only.
func TestCrawlerUserAgentSelectsItsGroup(t *testing.T) {
	o := newOrigin(t, robotsBody("User-agent: BadBot\nDisallow: /private\n\nUser-agent: Mozilla\nAllow: /\n\nUser-agent: *\nDisallow: /\n"), nil)
	h := newHarness(t, harnessOpts{})
	for _, c := range []struct {
		ua, path  string
		want      int
		wantAgent string
	}{
		{"Mozilla/5.0 (compatible; BadBot/2.1; +http://badbot.example/bot)", "/private/x", 403, "BadBot"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; BadBot/2.1; +http://badbot.example) Chrome/124.0.0.0 Safari/537.36", "/private/x", 403, "BadBot"},
		{"Mozilla/5.0 (compatible; BadBot/2.1)", "/public", 200, ""},
		// A browser never gets the group written for "Mozilla": only "*".
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36", "/public", 403, "*"},
	} {
		resp, _ := h.get(t, o.URL+c.path, "User-Agent", c.ua)
		if resp.StatusCode != c.want {
			t.Errorf("UA %q %s: %d, want %d", c.ua, c.path, resp.StatusCode, c.want)
			continue
		}
		if c.want == 403 && resp.Header.Get(answer.HeaderAgent) != c.wantAgent {
			t.Errorf("UA %q: agent %q, want %q", c.ua, resp.Header.Get(answer.HeaderAgent), c.wantAgent)
		}
	}
}

// TestConfiguredAgentRefusesOverride: with an agent configured, the
// override header cannot pick another group; it is stripped, and its use
// is audited even for an allowed request at audit level "blocked". The
// operator can allow overrides explicitly.
func TestConfiguredAgentRefusesOverride(t *testing.T) {
	o := newOrigin(t, robotsBody(agentRules), nil)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.Agent = "BadBot" }})

	resp, body := h.get(t, o.URL+"/private/a", "X-Robots-Agent", "GoodBot")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderAgent) != "BadBot" {
		t.Fatalf("override GoodBot against agent BadBot: %d agent %q %q", resp.StatusCode, resp.Header.Get(answer.HeaderAgent), body)
	}
	if o.hits.Load() != 0 {
		t.Fatalf("the origin saw the disallowed request")
	}
	recs := h.audit.Records(t)
	if len(recs) != 1 || recs[0]["decision"] != audit.DecisionBlocked || recs[0]["agent"] != "BadBot" || recs[0]["agent_override_refused"] != "GoodBot" {
		t.Fatalf("audit records: %v", recs)
	}

	// Allowed, still audited; the header never reaches the origin, in any
	// spelling or number of lines.
	q, _ := http.NewRequest(http.MethodGet, o.URL+"/public", nil)
	q.Header["X-Robots-Agent"] = []string{"GoodBot/1.0", "OtherBot"}
	q.Header.Set("User-Agent", "GoodBot/1.0")
	if resp, err := h.client.Do(q); err != nil || resp.StatusCode != 200 {
		t.Fatalf("allowed request: %v %v", resp, err)
	} else {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if v := o.header().Values("X-Robots-Agent"); len(v) != 0 {
		t.Fatalf("origin saw X-Robots-Agent %q", v)
	}
	recs = h.audit.Records(t)
	if len(recs) != 2 || recs[1]["decision"] != audit.DecisionAllowed || recs[1]["agent_override_refused"] != "GoodBot/1.0, OtherBot" {
		t.Fatalf("audit of the refused override on an allowed request: %v", recs)
	}

	// Naming the configured agent itself is no refusal: nothing to audit.
	h.get(t, o.URL+"/public", "X-Robots-Agent", "badbot")
	if n := len(h.audit.Records(t)); n != 2 {
		t.Fatalf("%d audit records after an override naming the configured agent, want 2", n)
	}

	// Explicitly allowed: the header picks the group.
	h = newHarness(t, harnessOpts{config: func(c *config.Config) { c.Agent, c.AllowAgentOverride = "BadBot", true }})
	if resp, body := h.get(t, o.URL+"/private/b", "X-Robots-Agent", "GoodBot"); resp.StatusCode != 200 {
		t.Fatalf("allow_agent_override: %d %q", resp.StatusCode, body)
	}
	if recs := h.audit.Records(t); len(recs) != 0 {
		t.Fatalf("allowed override audited: %v", recs)
	}
}

// TestOverrideWithoutConfiguredAgent: without a configured agent the
// header is honoured (the User-Agent it replaces is the client's choice
// too); an override naming no valid token decides by "*" only, never by
// the User-Agent's group.
func TestOverrideWithoutConfiguredAgent(t *testing.T) {
	o := newOrigin(t, robotsBody("User-agent: BadBot\nDisallow: /private\n\nUser-agent: GoodBot\nAllow: /\n\nUser-agent: *\nDisallow: /private\n"), nil)
	h := newHarness(t, harnessOpts{})
	if resp, _ := h.get(t, o.URL+"/private/a", "User-Agent", "BadBot/1.0", "X-Robots-Agent", "GoodBot"); resp.StatusCode != 200 {
		t.Fatalf("override GoodBot: %d, want 200", resp.StatusCode)
	}
	resp, _ := h.get(t, o.URL+"/private/a", "User-Agent", "GoodBot/1.0", "X-Robots-Agent", "ツ")
	if resp.StatusCode != 403 || resp.Header.Get(answer.HeaderAgent) != "*" {
		t.Fatalf("override naming no token: %d agent %q, want 403 by *", resp.StatusCode, resp.Header.Get(answer.HeaderAgent))
	}
	for _, r := range h.audit.Records(t) {
		if _, ok := r["agent_override_refused"]; ok {
			t.Fatalf("override refused without a configured agent: %v", r)
		}
	}
}

// TestHTTPSConfiguredAgentRefusesOverride: inside MITM the CONNECT's
// override and the request's own are refused against a configured agent,
// and audited; in tunnel mode too.
func TestHTTPSConfiguredAgentRefusesOverride(t *testing.T) {
	origin := newTLSOrigin(t, agentRules)
	cfg := mitmConfig(t, origin)
	cfg.Audit, cfg.Agent = config.AuditBlocked, "BadBot"
	p := startHTTPSProxy(t, cfg)

	c := p.client(p.ca)
	c.Transport.(*http.Transport).ProxyConnectHeader.Set("X-Robots-Agent", "GoodBot")
	resp, body := get(t, c, origin.URL+"/private/b")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderAgent) != "BadBot" {
		t.Fatalf("CONNECT override: %d agent %q %q", resp.StatusCode, resp.Header.Get(answer.HeaderAgent), body)
	}
	if resp, _ := get(t, c, origin.URL+"/private/c", "X-Robots-Agent", "GoodBot"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("request override inside MITM: %d, want 403", resp.StatusCode)
	}
	if resp, _ := get(t, c, origin.URL+"/public"); resp.StatusCode != 200 {
		t.Fatalf("public page: %d", resp.StatusCode)
	}
	if n := origin.hit("/private/b") + origin.hit("/private/c"); n != 0 {
		t.Fatalf("origin saw %d disallowed requests", n)
	}
	recs := p.audit.Records(t)
	if len(recs) != 3 {
		t.Fatalf("want 3 audit records (two blocked, one allowed with a refused override), got %v", recs)
	}
	for i, want := range []string{audit.DecisionBlocked, audit.DecisionBlocked, audit.DecisionAllowed} {
		if recs[i]["decision"] != want || recs[i]["agent"] != "BadBot" || recs[i]["agent_override_refused"] != "GoodBot" {
			t.Errorf("record %d: %v", i, recs[i])
		}
	}

	// Tunnel mode: a site closed to the configured agent stays closed.
	closed := newTLSOrigin(t, "User-agent: BadBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
	cfg = mitmConfig(t, closed)
	cfg.HTTPS.Mode, cfg.Agent = config.HTTPSModeTunnel, "BadBot"
	p = startHTTPSProxy(t, cfg)
	resp, body, _ = p.rawConnect(t, closed.Listener.Addr().String(), "X-Robots-Agent: GoodBot")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderAgent) != "BadBot" {
		t.Fatalf("tunnel CONNECT override: %d agent %q %q", resp.StatusCode, resp.Header.Get(answer.HeaderAgent), body)
	}
	if rec := p.audit.Find(t, "site-disallowed"); rec["agent_override_refused"] != "GoodBot" {
		t.Fatalf("tunnel audit record: %v", rec)
	}
	if !strings.Contains(body, "BadBot") {
		t.Fatalf("refusal body does not name the agent: %q", body)
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
					if got := resp.Header.Get(answer.HeaderAgent); got != r.wantAgent {
						t.Errorf("%s: agent %q, want %q", r.path, got, r.wantAgent)
					}
					continue
				}
				// Forwarded: the override header never reaches the origin
				// (unless the override is disabled).
				seen := o.header().Get(hdr)
				if h.srv.live.Load().agents.Header != "" && seen != "" {
					t.Errorf("%s: origin saw %s: %q", r.path, hdr, seen)
				}
				if h.srv.live.Load().agents.Header == "" && seen != r.header {
					t.Errorf("%s: override disabled, origin saw %s: %q, want it untouched", r.path, hdr, seen)
				}
			}
		})
	}
}
