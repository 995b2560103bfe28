package proxy

import (
	"crypto/x509"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

func TestTunnelMode(t *testing.T) {
	closed := newTLSOrigin(t, "User-agent: *\nDisallow: /\n")
	partly := newTLSOrigin(t, "User-agent: *\nDisallow: /private\n")
	cfg := mitmConfig(t, closed, partly)
	cfg.HTTPS.Mode = config.HTTPSModeTunnel
	p := startHTTPSProxy(t, cfg)
	if p.ca != nil {
		t.Fatal("tunnel mode loaded a CA")
	}

	// Fully disallowed host: CONNECT refused with a real 403.
	resp, body, _ := p.rawConnect(t, closed.Listener.Addr().String())
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonSiteDisallowed) {
		t.Fatalf("closed site: %d %s %q", resp.StatusCode, resp.Header.Get(answer.HeaderDecision), body)
	}
	if closed.hit("/robots.txt") != 1 {
		t.Fatalf("closed site robots.txt fetched %d times", closed.hit("/robots.txt"))
	}

	// Partly disallowed host: tunnelled (the client talks TLS with the
	// origin itself, so paths are not enforced) and audited as such.
	roots := x509.NewCertPool()
	roots.AddCert(partly.Certificate())
	resp, body = get(t, p.client(roots), partly.URL+"/private/x")
	if resp.StatusCode != 200 || body != "hello from /private/x" {
		t.Fatalf("partly disallowed site through the tunnel: %d %q", resp.StatusCode, body)
	}
	if resp.TLS.PeerCertificates[0].Equal(partly.Certificate()) == false {
		t.Fatal("tunnel: the client did not see the origin's own certificate")
	}
	rec := p.audit.Find(t, string(answer.ReasonTunnelUnenforced))
	if rec["decision"] != audit.DecisionAllowed || rec["method"] != http.MethodConnect || rec["agent"] != "TestBot" {
		t.Fatalf("tunnel audit record: %v", rec)
	}
	p.audit.Find(t, string(answer.ReasonSiteDisallowed))
	assertMetrics(t, testsupport.Exposition(p.srv.metrics.Handler()), map[string]float64{ // counted once each
		`robotsgate_decisions_total{decision="blocked",reason="site-disallowed"}`:   1,
		`robotsgate_decisions_total{decision="allowed",reason="tunnel-unenforced"}`: 1,
	})
}

func TestTunnelModeUnreachableRobots(t *testing.T) {
	// An origin whose robots.txt answers 503: everything disallowed, so
	// the CONNECT is refused.
	o := quietTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer o.Close()
	cfg := testConfig(t)
	u, _ := url.Parse(o.URL)
	port, _ := strconv.Atoi(u.Port())
	cfg.HTTPS.Mode = config.HTTPSModeTunnel
	cfg.HTTPS.AllowedPorts = []int{port}
	cfg.HTTPS.UpstreamRoots = []string{writeCertPEM(t, o.Certificate())}
	p := startHTTPSProxy(t, cfg)
	resp, body, _ := p.rawConnect(t, u.Host)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != string(enforce.ReasonRobotsUnreachable) {
		t.Fatalf("unreachable robots.txt: %d %q", resp.StatusCode, body)
	}
}

func TestTunnelModeAgentAndReport(t *testing.T) {
	// Closed to ClosedBot only.
	o := newTLSOrigin(t, "User-agent: ClosedBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
	cfg := mitmConfig(t, o)
	cfg.HTTPS.Mode = config.HTTPSModeTunnel
	p := startHTTPSProxy(t, cfg)
	target := o.Listener.Addr().String()

	// The CONNECT's User-Agent (TestBot) may tunnel; the override header
	// on the CONNECT names ClosedBot, which may not.
	if resp, body, _ := p.rawConnect(t, target); resp.StatusCode != 200 {
		t.Fatalf("TestBot: %d %q", resp.StatusCode, body)
	}
	resp, body, _ := p.rawConnect(t, target, "X-Robots-Agent: ClosedBot/2.0")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderAgent) != "ClosedBot" {
		t.Fatalf("ClosedBot: %d %s %q", resp.StatusCode, resp.Header.Get(answer.HeaderAgent), body)
	}

	// Report mode: the closed site is audited as reported and tunnelled.
	cfg.Mode = config.ModeReport
	p = startHTTPSProxy(t, cfg)
	if resp, body, _ := p.rawConnect(t, target, "X-Robots-Agent: ClosedBot"); resp.StatusCode != 200 {
		t.Fatalf("report mode: %d %q", resp.StatusCode, body)
	}
	rec := p.audit.Find(t, string(answer.ReasonSiteDisallowed))
	if rec["decision"] != audit.DecisionReported {
		t.Fatalf("report-mode audit record: %v", rec)
	}
}

// TestTunnelModeWarnsWithoutAgent: tunnel mode without a configured
// agent warns at start (CONNECTs often carry no User-Agent).
func TestTunnelModeWarnsWithoutAgent(t *testing.T) {
	for _, agent := range []string{"", "ExampleBot"} {
		logs := &memAudit{}
		cfg := testConfig(t)
		cfg.HTTPS.Mode = config.HTTPSModeTunnel
		cfg.Agent = agent
		if _, err := buildServer(t, cfg, enforce.Config{}, Deps{Log: zerolog.New(logs)}); err != nil {
			t.Fatal(err)
		}
		warned := strings.Contains(logs.String(), `"level":"warn"`) && strings.Contains(logs.String(), "no agent is configured")
		if warned != (agent == "") {
			t.Errorf("agent %q: warned %v; log:\n%s", agent, warned, logs)
		}
	}
}
