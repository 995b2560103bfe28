package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// newPolicyOrigin starts an HTTPS origin whose robots.txt allows every
// path and names its /license.xml when license is set, serving tdmrep.json
// (404 when tdm is "") and license.
func newPolicyOrigin(t *testing.T, tdm, license string) *httptest.Server {
	t.Helper()
	o := quietTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			if license != "" {
				io.WriteString(w, "License: https://"+r.Host+"/license.xml\n\n")
			}
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/.well-known/tdmrep.json":
			if tdm == "" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, tdm)
		case "/license.xml":
			w.Header().Set("Content-Type", "application/rsl+xml")
			io.WriteString(w, license)
		default:
			io.WriteString(w, "page "+r.URL.Path)
		}
	}))
	t.Cleanup(o.Close)
	return o
}

// tunnelPolicyConfig is tunnel mode for the crawler TestBot declaring
// train-ai, with TDMRep and licenses enforced, CONNECT allowed to o.
func tunnelPolicyConfig(t *testing.T, o *httptest.Server) config.Config {
	t.Helper()
	cfg := testConfig(t)
	u, _ := url.Parse(o.URL)
	port, _ := strconv.Atoi(u.Port())
	cfg.HTTPS.Mode = config.HTTPSModeTunnel
	cfg.HTTPS.AllowedPorts = []int{port}
	cfg.HTTPS.UpstreamRoots = []string{writeCertPEM(t, o.Certificate())}
	cfg.Purposes = aipref.SetOf(aipref.TrainAI)
	cfg.TDMRep.Mode = config.TDMRepEnforce
	cfg.License.Mode = config.LicenseEnforce
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// prohibitRSL prohibits ai-train on the url pattern of its content.
func prohibitRSL(pattern string) string {
	return `<rsl xmlns="https://rslstandard.org/rsl"><content url="` + pattern + `">
    <license><prohibits type="usage">ai-train</prohibits></license></content></rsl>`
}

// TestTunnelModeSiteWidePolicies: in tunnel mode a tdmrep.json or an RSL
// license that covers every URL of the site for the declared purpose
// refuses the CONNECT as mitm mode refuses each request (same reason,
// header and audit record); one that covers only some paths opens the
// tunnel as tunnel-unenforced.
func TestTunnelModeSiteWidePolicies(t *testing.T) {
	for _, tc := range []struct {
		name, tdm, license string
		reason             string // "" for an open tunnel
		header             string // the policy header of the refusal
	}{
		{name: "tdmrep star", tdm: `[{"location":"*","tdm-reservation":1}]`, reason: "tdm-reserved", header: HeaderTDM},
		{name: "tdmrep slash", tdm: `[{"location":"/","tdm-reservation":1}]`, reason: "tdm-reserved", header: HeaderTDM},
		{name: "tdmrep slash star after reserved rule", tdm: `[{"location":"/a","tdm-reservation":1},{"location":"/*","tdm-reservation":1}]`,
			reason: "tdm-reserved", header: HeaderTDM},
		{name: "tdmrep some paths", tdm: `[{"location":"/private","tdm-reservation":1}]`},
		{name: "tdmrep open path first", tdm: `[{"location":"/public","tdm-reservation":0},{"location":"*","tdm-reservation":1}]`},
		{name: "tdmrep anchored root", tdm: `[{"location":"/$","tdm-reservation":1}]`},
		{name: "license slash", license: prohibitRSL("/"), reason: "license-prohibited", header: HeaderLicense},
		{name: "license slash star", license: prohibitRSL("/*"), reason: "license-prohibited", header: HeaderLicense},
		{name: "license needs a token", license: serverRSL("https://ls.example/"), reason: "license-required", header: HeaderLicense},
		{name: "license some paths", license: articlesRSL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newPolicyOrigin(t, tc.tdm, tc.license)
			p := startHTTPSProxy(t, tunnelPolicyConfig(t, o))
			resp, body, c := p.rawConnect(t, o.Listener.Addr().String())
			if c != nil {
				defer c.Close()
			}
			if tc.reason == "" {
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("CONNECT: %d %s %q, want an open tunnel", resp.StatusCode, resp.Header.Get(answer.HeaderDecision), body)
				}
				p.audit.Find(t, string(answer.ReasonTunnelUnenforced))
				return
			}
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != tc.reason || resp.Header.Get(tc.header) == "" {
				t.Fatalf("CONNECT: %d %s %s=%q %q", resp.StatusCode, resp.Header.Get(answer.HeaderDecision), tc.header, resp.Header.Get(tc.header), body)
			}
			rec := p.audit.Find(t, tc.reason)
			if rec["decision"] != audit.DecisionBlocked || rec["method"] != http.MethodConnect {
				t.Fatalf("audit record: %v", rec)
			}
		})
	}
}

// TestTunnelModeSiteWideReport: tdmrep.mode report, or mode report,
// audits a site-wide reservation as reported and opens the tunnel.
func TestTunnelModeSiteWideReport(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*config.Config)
	}{
		{"tdmrep.mode report", func(c *config.Config) { c.TDMRep.Mode = config.TDMRepReport }},
		{"mode report", func(c *config.Config) { c.Mode = config.ModeReport }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newPolicyOrigin(t, `[{"location":"*","tdm-reservation":1}]`, "")
			cfg := tunnelPolicyConfig(t, o)
			tc.set(&cfg)
			p := startHTTPSProxy(t, cfg)
			resp, body, c := p.rawConnect(t, o.Listener.Addr().String())
			if c != nil {
				defer c.Close()
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("CONNECT: %d %q", resp.StatusCode, body)
			}
			if rec := p.audit.Find(t, "tdm-reserved"); rec["decision"] != audit.DecisionReported {
				t.Fatalf("audit record: %v", rec)
			}
		})
	}
}

// TestTunnelModeWarnsPolicyGaps: tunnel mode with license or TDMRep
// enforced (globally or for a credential) logs one warning naming them,
// at start and at each reload; mitm mode, or nothing enforced, none.
func TestTunnelModeWarnsPolicyGaps(t *testing.T) {
	creds := writeCredentials(t, "strict:pw1 license=enforce\n")
	for _, tc := range []struct {
		name string
		set  func(*config.Config)
		want string // "" for no warning
	}{
		{"license enforce", func(c *config.Config) { c.License.Mode = config.LicenseEnforce }, "RSL licenses"},
		{"tdmrep enforce", func(c *config.Config) { c.TDMRep.Mode = config.TDMRepEnforce }, "TDMRep"},
		{"credential license enforce", func(c *config.Config) { c.Auth.CredentialsFile = creds }, "RSL licenses"},
		{"nothing enforced", func(*config.Config) {}, ""},
		{"mitm mode", func(c *config.Config) {
			c.HTTPS.Mode = config.HTTPSModeMITM
			c.License.Mode, c.TDMRep.Mode = config.LicenseEnforce, config.TDMRepEnforce
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &memAudit{}
			cfg := testConfig(t)
			cfg.HTTPS.Mode, cfg.Agent = config.HTTPSModeTunnel, "TestBot"
			cfg.License.Mode, cfg.TDMRep.Mode = config.LicenseReport, config.TDMRepReport
			tc.set(&cfg)
			srv, err := buildServer(t, cfg, enforce.Config{}, Deps{Log: zerolog.New(logs), Load: func() (config.Config, error) { return cfg, nil }})
			if err != nil {
				t.Fatal(err)
			}
			const gap = "cannot be checked inside a tunnel"
			if n := strings.Count(logs.String(), gap); n != map[bool]int{true: 1, false: 0}[tc.want != ""] {
				t.Fatalf("%d warnings at start; log:\n%s", n, logs)
			}
			if tc.want == "" {
				return
			}
			if !strings.Contains(logs.String(), tc.want) {
				t.Fatalf("the warning does not name %s; log:\n%s", tc.want, logs)
			}
			if _, err := srv.Reload("test"); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(logs.String(), gap); n != 2 {
				t.Fatalf("%d warnings after a reload, want 2; log:\n%s", n, logs)
			}
		})
	}
}
