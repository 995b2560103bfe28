package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// TestDefaultAllowedPortsIncludeHTTP: CONNECT to port 80 is allowed out of
// the box, because clients such as Node's undici ProxyAgent tunnel
// http:// URLs through CONNECT too; 443 stays.
func TestDefaultAllowedPortsIncludeHTTP(t *testing.T) {
	ports := config.Default().HTTPS.AllowedPorts
	if !slices.Contains(ports, 80) || !slices.Contains(ports, 443) {
		t.Fatalf("default https.allowed_ports = %v, want 80 and 443", ports)
	}
}

// TestPlainHTTPInsideConnect: a client that sends CONNECT and then plain
// HTTP (no TLS) inside the tunnel is decided per path exactly like a
// proxied http:// request: allowed paths reach the origin, disallowed ones
// get 403 and never leave, robots.txt is fetched over plain HTTP, and a
// request naming another host inside the tunnel is refused.
func TestPlainHTTPInsideConnect(t *testing.T) {
	origin := &tlsOrigin{robots: "User-agent: *\nDisallow: /private\n"}
	origin.Server = httptest.NewServer(http.HandlerFunc(origin.serve))
	t.Cleanup(origin.Close)
	other := &tlsOrigin{}
	other.Server = httptest.NewServer(http.HandlerFunc(other.serve))
	t.Cleanup(other.Close)

	cfg := testConfig(t)
	cfg.Audit = config.AuditAll
	cfg.HTTPS.AllowedPorts = []int{origin.port(t)}
	p := startHTTPSProxy(t, cfg)
	target := origin.Listener.Addr().String()

	resp, c, br := rawConnect(t, p.url.Host, target, "User-Agent: TestBot/1.0")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT %s: %d", target, resp.StatusCode)
	}
	send := func(requestTarget, host string) (*http.Response, string) {
		t.Helper()
		if _, err := io.WriteString(c, "GET "+requestTarget+" HTTP/1.1\r\nHost: "+host+"\r\nUser-Agent: TestBot/1.0\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("GET %s: %v", requestTarget, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}

	if resp, body := send("/public", target); resp.StatusCode != 200 || body != "hello from /public" {
		t.Fatalf("allowed path: %d %q", resp.StatusCode, body)
	}
	for _, rt := range []string{"/private/x", "http://" + target + "/private/y", "/%70rivate/z"} {
		resp, body := send(rt, target)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != string(enforce.ReasonDisallowed) {
			t.Fatalf("GET %s inside the tunnel: %d %s %q, want 403", rt, resp.StatusCode, resp.Header.Get(answer.HeaderDecision), body)
		}
	}
	otherHost := other.Listener.Addr().String()
	if resp, body := send("/page", otherHost); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("Host %s inside CONNECT %s: %d %q, want 421", otherHost, target, resp.StatusCode, body)
	}

	for _, path := range []string{"/private/x", "/private/y", "/private/z", "/%70rivate/z"} {
		if n := origin.hit(path); n != 0 {
			t.Fatalf("origin got the disallowed %s %d times", path, n)
		}
	}
	if n := origin.hit("/robots.txt"); n != 1 {
		t.Fatalf("robots.txt fetched %d times, want 1", n)
	}
	if other.hit("/page") != 0 {
		t.Fatal("the misdirected request reached the other origin")
	}
	rec := p.audit.Find(t, string(enforce.ReasonDisallowed))
	if u, _ := rec["url"].(string); !strings.HasPrefix(u, "http://"+target+"/") || rec["agent"] != "TestBot" {
		t.Fatalf("audit record of the refusal inside the tunnel: %v", rec)
	}
}
