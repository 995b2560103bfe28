package proxy

import (
	"encoding/base64"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// rawConnectAuth sends a CONNECT for target with an optional
// Proxy-Authorization value and returns the proxy's response.
func rawConnectAuth(t *testing.T, proxyAddr, target, auth string) *http.Response {
	t.Helper()
	var hdr []string
	if auth != "" {
		hdr = append(hdr, "Proxy-Authorization: "+auth)
	}
	resp, _, _ := rawConnect(t, proxyAddr, target, hdr...)
	return resp
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

func TestProxyAuth(t *testing.T) {
	o := newOpsOrigin(t)
	dir := t.TempDir()
	credFile := filepath.Join(dir, "credentials")
	if err := os.WriteFile(credFile, []byte("# crawler fleet\n\ncarol:from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startOpsProxy(t, func(c *config.Config) {
		c.Auth.Credentials = []string{"alice:pa:ss w0rd"} // the password may hold colons and spaces
		c.Auth.CredentialsFile = credFile
		c.Audit = config.AuditAll
	})

	// No credentials: 407 with a challenge; the origin sees nothing.
	code, _, hdr := opsGet(t, p.client(nil), o.URL+"/ok")
	if code != http.StatusProxyAuthRequired || hdr.Get("Proxy-Authenticate") != `Basic realm="robotsgate"` {
		t.Fatalf("no credentials: %d, Proxy-Authenticate %q", code, hdr.Get("Proxy-Authenticate"))
	}
	if ps := hdr.Get(answer.HeaderProxyStatus); !strings.HasPrefix(ps, "robotsgate;error=http_request_denied") {
		t.Errorf("no credentials: Proxy-Status %q", ps)
	}
	// Wrong password, unknown user: 407.
	for _, u := range []*url.Userinfo{url.UserPassword("alice", "wrong"), url.UserPassword("mallory", "pa:ss w0rd"), url.UserPassword("alice", "pa:ss w0r")} {
		if code, _, _ := opsGet(t, p.client(u), o.URL+"/ok"); code != http.StatusProxyAuthRequired {
			t.Errorf("%s: %d, want 407", u.Username(), code)
		}
	}
	if n := o.hit("/ok") + o.hit("/robots.txt"); n != 0 {
		t.Fatalf("refused requests reached the origin %d times", n)
	}
	// Right credentials (config and file): forwarded, without the header.
	for _, u := range []*url.Userinfo{url.UserPassword("alice", "pa:ss w0rd"), url.UserPassword("carol", "from-file")} {
		code, body, _ := opsGet(t, p.client(u), o.URL+"/ok")
		if code != 200 || body != "hello /ok" {
			t.Fatalf("%s: %d %q", u.Username(), code, body)
		}
		if v := o.lastHeader().Get("Proxy-Authorization"); v != "" {
			t.Errorf("Proxy-Authorization forwarded to the origin: %q", v)
		}
	}
	// A disallowed URL with credentials is still refused by robots.txt.
	if code, _, _ := opsGet(t, p.client(url.UserPassword("carol", "from-file")), o.URL+"/private/x"); code != http.StatusForbidden {
		t.Errorf("disallowed with credentials: %d", code)
	}

	// CONNECT: 407 without or with wrong credentials ...
	for _, auth := range []string{"", basic("alice", "nope"), "Bearer x", "Basic !!!"} {
		resp := rawConnectAuth(t, p.addr, "127.0.0.1:443", auth)
		if resp.StatusCode != http.StatusProxyAuthRequired || resp.Header.Get("Proxy-Authenticate") == "" {
			t.Errorf("CONNECT with %q: %d, want 407 with a challenge", auth, resp.StatusCode)
		}
	}
	// ... and past access control with them (then refused by the port
	// allow-list: port 1 is not 443).
	resp := rawConnectAuth(t, p.addr, "127.0.0.1:1", basic("alice", "pa:ss w0rd"))
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "port-forbidden" {
		t.Errorf("CONNECT with credentials: %d %q, want 403 port-forbidden", resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
	}
	// Only the CONNECT that passed access control was decided (and counted).
	if v := testsupport.MetricValue(t, p.scrape(t), `robotsgate_decisions_total{decision="blocked",reason="port-forbidden"}`); v != 1 {
		t.Errorf("port-forbidden decisions = %v, want 1", v)
	}

	// Admin requests to the proxy port need no proxy credentials.
	if code, _ := adminDo(t, "GET", "http://"+p.addr, "/healthz", "", nil); code != 200 {
		t.Errorf("healthz with proxy auth on: %d", code)
	}

	// Credentials appear neither in the audit log nor in operator logs.
	p.auditor.Close()
	audit, err := os.ReadFile(p.auditPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(audit), `"url":"`+o.URL+`/ok"`) {
		t.Fatalf("audit log lacks the allowed request: %s", audit)
	}
	// Each record names the user who sent the request, and the listener.
	for _, want := range []string{`"user":"carol","listener":"proxy","method":"GET","url":"` + o.URL + `/private/x"`,
		`"user":"alice","listener":"proxy","method":"CONNECT"`} {
		if !strings.Contains(string(audit), want) {
			t.Errorf("audit log lacks %s:\n%s", want, audit)
		}
	}
	for _, secret := range []string{"pa:ss w0rd", "from-file", "wrong", base64.StdEncoding.EncodeToString([]byte("alice:pa:ss w0rd")), "Proxy-Authorization"} {
		if strings.Contains(string(audit), secret) {
			t.Errorf("audit log contains %q", secret)
		}
		if strings.Contains(p.logs.String(), secret) {
			t.Errorf("operator log contains %q", secret)
		}
	}
}

func TestProxyClientCIDRs(t *testing.T) {
	o := newOpsOrigin(t)
	refused := startOpsProxy(t, func(c *config.Config) { c.Auth.AllowCIDRs = cidrs(t, "10.0.0.0/8", "192.0.2.7") })
	if code, body, _ := opsGet(t, refused.client(nil), o.URL+"/ok"); code != http.StatusForbidden || !strings.Contains(body, "may not use this proxy") {
		t.Errorf("client outside the CIDRs: %d %q, want 403", code, body)
	}
	if resp := rawConnectAuth(t, refused.addr, "127.0.0.1:443", ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("CONNECT outside the CIDRs: %d", resp.StatusCode)
	}
	if n := o.hit("/ok") + o.hit("/robots.txt"); n != 0 {
		t.Fatalf("refused clients reached the origin %d times", n)
	}

	allowed := startOpsProxy(t, func(c *config.Config) { c.Auth.AllowCIDRs = cidrs(t, "10.0.0.0/8", "127.0.0.0/8") })
	if code, _, _ := opsGet(t, allowed.client(nil), o.URL+"/ok"); code != 200 {
		t.Errorf("client inside the CIDRs: %d", code)
	}

	// CIDRs and credentials together: both are required.
	both := startOpsProxy(t, func(c *config.Config) {
		c.Auth.AllowCIDRs = cidrs(t, "127.0.0.1/32")
		c.Auth.Credentials = []string{"u:p"}
	})
	if code, _, _ := opsGet(t, both.client(nil), o.URL+"/ok"); code != http.StatusProxyAuthRequired {
		t.Errorf("inside CIDRs without credentials: %d", code)
	}
	if code, _, _ := opsGet(t, both.client(url.UserPassword("u", "p")), o.URL+"/ok"); code != 200 {
		t.Errorf("inside CIDRs with credentials: %d", code)
	}
}

// TestAccessDeniedCountedAndLogged: refusals of access control are
// counted by status and logged at debug level, without the credentials.
func TestAccessDeniedCountedAndLogged(t *testing.T) {
	o := newOpsOrigin(t)
	auth := startOpsProxy(t, func(c *config.Config) { c.Auth.Credentials = []string{"alice:right"} })
	cidr := startOpsProxy(t, func(c *config.Config) { c.Auth.AllowCIDRs = cidrs(t, "10.0.0.0/8") })

	for range 2 {
		if code, _, _ := opsGet(t, auth.client(url.UserPassword("alice", "hunter2-secret")), o.URL+"/ok"); code != http.StatusProxyAuthRequired {
			t.Fatalf("wrong password: %d, want 407", code)
		}
	}
	if code, _, _ := opsGet(t, cidr.client(nil), o.URL+"/ok"); code != http.StatusForbidden {
		t.Fatalf("client outside allow_cidrs: %d, want 403", code)
	}
	assertMetrics(t, auth.scrape(t), map[string]float64{
		`robotsgate_access_denied_total{status="407"}`: 2,
		`robotsgate_access_denied_total{status="403"}`: 0,
	})
	// (/metrics is addressed to robotsgate itself: access control does
	// not apply to it.)
	assertMetrics(t, cidr.scrape(t), map[string]float64{
		`robotsgate_access_denied_total{status="403"}`: 1,
		`robotsgate_access_denied_total{status="407"}`: 0,
	})
	logs := auth.logs.String()
	if !strings.Contains(logs, "proxy access denied") || !strings.Contains(logs, `"status":407`) {
		t.Errorf("no debug line for the 407:\n%s", logs)
	}
	enc := base64.StdEncoding.EncodeToString([]byte("alice:hunter2-secret"))
	if strings.Contains(logs, "hunter2") || strings.Contains(logs, enc) {
		t.Errorf("the log holds the credentials:\n%s", logs)
	}
	if l := cidr.logs.String(); !strings.Contains(l, "proxy access denied") || !strings.Contains(l, `"status":403`) {
		t.Errorf("no debug line for the 403:\n%s", l)
	}
}

// cidrs parses client networks the way the configuration does.
func cidrs(t testing.TB, s ...string) []netip.Prefix {
	t.Helper()
	cfg, err := config.Load([]string{"-allow-cidrs", strings.Join(s, ",")}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Auth.AllowCIDRs
}
