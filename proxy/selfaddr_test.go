package proxy

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// selfProxy is a running robotsgate with its admin API on a second
// loopback listener (admin_listen) and no admin token: the setup in
// which a proxy client must not reach the admin API through the proxy.
type selfProxy struct {
	srv       *Server
	addr      string // proxy
	adminAddr string // admin API
	audit     *memAudit
	client    *http.Client // uses the proxy
}

func startSelfProxy(t *testing.T, mutate func(c *config.Config, adminPort int)) *selfProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.Listen = "127.0.0.1:0"
	cfg.AdminListen = ln.Addr().String()
	if mutate != nil {
		mutate(&cfg, ln.Addr().(*net.TCPAddr).Port)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ab := &memAudit{}
	srv, addr := startServer(t, cfg, enforce.Config{}, Deps{Auditor: audit.New(ab)})
	go srv.ServeAdmin(ln) // stopped by startServer's Shutdown
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr})}
	t.Cleanup(tr.CloseIdleConnections)
	return &selfProxy{srv: srv, addr: addr, adminAddr: ln.Addr().String(), audit: ab,
		client: &http.Client{Transport: tr, Timeout: testTimeout}}
}

// TestSelfRequestRefused: requests proxied to robotsgate's own listeners
// (the admin API, the proxy port) are refused with 403 and audited;
// before the fix the loopback-only admin API answered them, DELETE
// included.
func TestSelfRequestRefused(t *testing.T) {
	o := newOrigin(t, robotsStatus(404), nil)
	p := startSelfProxy(t, nil)
	_, adminPort, _ := net.SplitHostPort(p.adminAddr)
	_, proxyPort, _ := net.SplitHostPort(p.addr)

	// Cache the origin's robots.txt (404: all allowed) ...
	if resp, _ := get(t, p.client, o.URL+"/x"); resp.StatusCode != 200 {
		t.Fatalf("origin through the proxy: %d", resp.StatusCode)
	}
	purge := "/v1/robots?origin=" + url.QueryEscape(o.URL)
	for _, u := range []string{
		"http://" + p.adminAddr + purge, // the admin API
		"http://localhost:" + adminPort + "/v1/decision?url=http%3A%2F%2Fexample.test%2F",
		"http://[::1]:" + adminPort + "/metrics",
		"http://127.0.0.1:" + proxyPort + "/healthz", // the proxy port itself
		"http://0.0.0.0:" + adminPort + "/metrics",
	} {
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			req, _ := http.NewRequest(method, u, nil)
			resp, body := do(t, p.client, req)
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonSelfRequest) {
				t.Errorf("%s %s through the proxy: %d %s %q, want 403 self-request", method, u, resp.StatusCode, resp.Header.Get(answer.HeaderDecision), body)
			}
		}
	}
	rec := p.audit.Find(t, string(answer.ReasonSelfRequest))
	if rec["decision"] != audit.DecisionBlocked || rec["status"] != float64(403) {
		t.Errorf("audit record %v, want blocked 403", rec)
	}
	// ... which nobody could purge through the proxy: still cached.
	if _, ok := p.srv.enf.Cached(context.Background(), o.URL); !ok {
		t.Error("the robots.txt entry was purged through the proxy")
	}
	// The admin API itself still answers directly.
	if code, b := adminDo(t, "GET", "http://"+p.adminAddr, purge, "", nil); code != 200 {
		t.Errorf("admin API directly: %d %s", code, b)
	}
}

// reportTunnelToAdmin configures report mode and tunnel mode with the
// admin port among https.allowed_ports: without the self-request check a
// CONNECT to the admin port would open a raw tunnel to it.
func reportTunnelToAdmin(c *config.Config, adminPort int) {
	c.Mode = config.ModeReport
	c.HTTPS.Mode = config.HTTPSModeTunnel
	c.Agent = "TestBot"
	c.HTTPS.AllowedPorts = []int{443, adminPort}
}

// TestSelfConnectRefused: a CONNECT to robotsgate's own admin port is
// refused even when https.allowed_ports lets that port through and in
// report mode (which would otherwise open a raw tunnel to the admin API).
func TestSelfConnectRefused(t *testing.T) {
	p := startSelfProxy(t, reportTunnelToAdmin)
	resp, c, _ := rawConnect(t, p.addr, p.adminAddr, "User-Agent: TestBot/1.0")
	defer c.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonSelfRequest) {
		t.Fatalf("CONNECT %s: %d %s, want 403 self-request", p.adminAddr, resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
	}
	rec := p.audit.Find(t, string(answer.ReasonSelfRequest))
	if rec["decision"] != audit.DecisionBlocked || rec["method"] != http.MethodConnect {
		t.Errorf("audit record %v", rec)
	}
}

// TestMITMMisdirectedHost: inside a MITM session a request whose Host
// names another host:port than the CONNECT is refused with 421 and
// audited; before the fix goproxy forwarded it to the Host, bypassing
// https.allowed_ports.
func TestMITMMisdirectedHost(t *testing.T) {
	allowed := newTLSOrigin(t, "")
	other := newTLSOrigin(t, "") // its port is not in https.allowed_ports
	cfg := mitmConfig(t, allowed)
	cfg.HTTPS.UpstreamRoots = append(cfg.HTTPS.UpstreamRoots, writeCertPEM(t, other.Certificate()))
	p := startHTTPSProxy(t, cfg)
	target := strings.TrimPrefix(allowed.URL, "https://")
	otherHost := strings.TrimPrefix(other.URL, "https://")

	resp, _, c := p.rawConnect(t, target)
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT %s: %d", target, resp.StatusCode)
	}
	send := sessionSender(t, c, p.ca)

	// The CONNECT's own host works, with or without the default port ...
	if resp, body := send(target, "/a"); resp.StatusCode != 200 || body != "hello from /a" {
		t.Fatalf("own host: %d %q", resp.StatusCode, body)
	}
	// ... another one is refused and never reached.
	resp, body := send(otherHost, "/secret")
	if resp.StatusCode != http.StatusMisdirectedRequest || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonMisdirected) {
		t.Fatalf("Host %s inside CONNECT %s: %d %s %q, want 421", otherHost, target, resp.StatusCode, resp.Header.Get(answer.HeaderDecision), body)
	}
	if n := other.hit("/secret"); n != 0 {
		t.Fatalf("the other origin got the request %d times", n)
	}
	// Same host, another port: refused too (port 443 is the default).
	if resp, _ := send("127.0.0.1", "/b"); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("Host without port inside CONNECT %s: %d, want 421", target, resp.StatusCode)
	}
	rec := p.audit.Find(t, string(answer.ReasonMisdirected))
	if rec["decision"] != audit.DecisionBlocked || rec["status"] != float64(421) || !strings.Contains(rec["detail"].(string), otherHost) {
		t.Errorf("audit record %v", rec)
	}
}

// TestForwardingFailureLogRedacted: the debug line of a failed forward
// does not carry the URL's credentials.
func TestForwardingFailureLogRedacted(t *testing.T) {
	p := startOpsProxy(t, func(c *config.Config) { c.Mode = config.ModeReport }) // forward although robots.txt is unreachable
	// Port 1 on loopback: nothing listens, forwarding fails.
	if st := rawStatus(t, dialDeadline(t, p.addr), "GET http://user:hunter2@127.0.0.1:1/x HTTP/1.1\r\nHost: 127.0.0.1:1\r\nUser-Agent: TestBot/1.0\r\n\r\n"); st != http.StatusBadGateway {
		t.Fatalf("%d, want 502", st)
	}
	logs := p.logs.String()
	if !strings.Contains(logs, "forwarding failed") || !strings.Contains(logs, "127.0.0.1:1/x") {
		t.Fatalf("no forwarding-failed line:\n%s", logs)
	}
	if strings.Contains(logs, "hunter2") || strings.Contains(logs, "user:") || strings.Contains(logs, "user@") {
		t.Errorf("the log holds the URL's credentials:\n%s", logs)
	}
}
