package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/mitm"
)

func TestHTTPSMITMEnforcesPaths(t *testing.T) {
	origin := newTLSOrigin(t, "User-agent: *\nDisallow: /private\n")
	p := startHTTPSProxy(t, mitmConfig(t, origin))
	c := p.client(p.ca)

	resp, body := get(t, c, origin.URL+"/public")
	if resp.StatusCode != 200 || body != "hello from /public" {
		t.Fatalf("allowed path: %d %q", resp.StatusCode, body)
	}
	if resp.TLS == nil || resp.TLS.PeerCertificates[0].Issuer.CommonName != p.srv.https.ca.Leaf.Subject.CommonName {
		t.Fatal("the client's TLS session was not with robotsgate's minted certificate")
	}
	if alg := resp.TLS.PeerCertificates[0].PublicKeyAlgorithm; alg != x509.ECDSA {
		t.Fatalf("leaf key is %v, want ECDSA like the CA", alg)
	}
	// The leaf says who minted it (goproxy's signer says "GoProxy untrusted MITM proxy Inc").
	if leaf := resp.TLS.PeerCertificates[0]; len(leaf.Subject.Organization) != 1 || leaf.Subject.Organization[0] != mitm.LeafOrganization ||
		!strings.Contains(leaf.Subject.Organization[0], "robotsgate") || leaf.NotAfter.Sub(leaf.NotBefore) > 398*24*time.Hour {
		t.Fatalf("leaf subject %v, valid %v..%v", leaf.Subject, leaf.NotBefore, leaf.NotAfter)
	}

	resp, body = get(t, c, origin.URL+"/private/x")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != string(enforce.ReasonDisallowed) {
		t.Fatalf("disallowed path: %d %s %q", resp.StatusCode, resp.Header.Get(answer.HeaderDecision), body)
	}
	if !strings.Contains(body, "Disallow: /private") {
		t.Fatalf("403 body does not name the rule: %q", body)
	}
	if n := origin.hit("/private/x"); n != 0 {
		t.Fatalf("origin saw the disallowed request %d times", n)
	}

	// More requests, on new connections too: robots.txt was fetched over
	// HTTPS exactly once, and the leaf certificate minted once.
	for i := range 5 {
		get(t, c, origin.URL+"/public/"+strconv.Itoa(i))
		get(t, p.client(p.ca), origin.URL+"/private/"+strconv.Itoa(i))
	}
	if n := origin.hit("/robots.txt"); n != 1 {
		t.Fatalf("robots.txt fetched %d times, want 1", n)
	}
	if origin.plain.Load() != 0 {
		t.Fatal("origin got plain-HTTP requests")
	}
	if m := p.srv.https.certs.Mints(); m != 1 {
		t.Fatalf("minted %d leaf certificates for one host, want 1", m)
	}

	rec := p.audit.Find(t, string(enforce.ReasonDisallowed))
	if !strings.HasPrefix(rec["url"].(string), "https://127.0.0.1:") || rec["agent"] != "TestBot" {
		t.Fatalf("audit record of the HTTPS refusal: %v", rec)
	}
}

func TestHTTPSUntrustedUpstream502(t *testing.T) {
	trusted := newTLSOrigin(t, "User-agent: *\nAllow: /\n")
	// A second origin with its own self-signed certificate, not in the roots.
	untrusted, p := startUntrustedOrigin(t, trusted)

	resp, body := get(t, p.client(p.ca), untrusted.URL+"/page")
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("untrusted upstream: status %d, want 502; body %q", resp.StatusCode, body)
	}
	if !strings.Contains(body, "failed verification") || !strings.Contains(body, "https.upstream_roots") {
		t.Fatalf("502 body does not explain: %q", body)
	}
	untrusted.mu.Lock()
	n := len(untrusted.hits)
	untrusted.mu.Unlock()
	if n != 0 {
		t.Fatalf("untrusted origin served %d paths: verification was skipped", n)
	}
	// The audit record says what the client got.
	rec := p.audit.Find(t, string(enforce.ReasonOriginUnreachable))
	if rec["decision"] != audit.DecisionBlocked || rec["status"] != 502.0 || !strings.Contains(fmt.Sprint(rec["detail"]), "failed verification") {
		t.Fatalf("audit record of the 502: %v", rec)
	}
	// The trusted origin still works through the same proxy.
	if resp, _ := get(t, p.client(p.ca), trusted.URL+"/ok"); resp.StatusCode != 200 {
		t.Fatalf("trusted origin: %d", resp.StatusCode)
	}
}

func TestHTTPSMITMUpstreamFailure502(t *testing.T) {
	// robots.txt is fetched (and cached) with a trusted certificate; then
	// the origin switches to an untrusted one: the forwarded request fails
	// verification inside the MITM session and gets a 502, not a dropped
	// connection.
	good, bad := selfSigned(t), selfSigned(t)
	var cur atomic.Pointer[tls.Certificate]
	cur.Store(&good)
	origin := &tlsOrigin{robots: "User-agent: *\nAllow: /\n"}
	origin.Server = httptest.NewUnstartedServer(http.HandlerFunc(origin.serve))
	// GetConfigForClient, not GetCertificate: clients send no SNI for an
	// IP address, and then the server would use Certificates[0].
	origin.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		return &tls.Config{Certificates: []tls.Certificate{*cur.Load()}}, nil
	}}
	origin.Config.ErrorLog = quietLog()
	origin.StartTLS()
	t.Cleanup(origin.Close)

	cfg := testConfig(t)
	cfg.HTTPS.AllowedPorts = []int{origin.port(t)}
	goodLeaf, _ := x509.ParseCertificate(good.Certificate[0])
	cfg.HTTPS.UpstreamRoots = []string{writeCertPEM(t, goodLeaf)}
	p := startHTTPSProxy(t, cfg)
	if resp, body := get(t, p.client(p.ca), origin.URL+"/a"); resp.StatusCode != 200 {
		t.Fatalf("first request: %d %q", resp.StatusCode, body)
	}
	cur.Store(&bad)
	p.srv.tr.CloseIdleConnections()
	origin.CloseClientConnections()
	resp, body := get(t, p.client(p.ca), origin.URL+"/b")
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "not signed by a trusted root") {
		t.Fatalf("status %d body %q, want 502 naming the untrusted certificate", resp.StatusCode, body)
	}
	if origin.hit("/b") != 0 {
		t.Fatal("the request reached the origin with the untrusted certificate")
	}
}

func TestConnectPortAllowList(t *testing.T) {
	origin := newTLSOrigin(t, "User-agent: *\nAllow: /\n")
	p := startHTTPSProxy(t, mitmConfig(t, origin))

	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, target := range []string{other.Addr().String(), "127.0.0.1"} { // no port means 80
		resp, body, _ := p.rawConnect(t, target)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonPortForbidden) {
			t.Fatalf("CONNECT %s: %d %q", target, resp.StatusCode, body)
		}
	}
	rec := p.audit.Find(t, string(answer.ReasonPortForbidden))
	if rec["decision"] != audit.DecisionBlocked || rec["method"] != http.MethodConnect {
		t.Fatalf("audit record: %v", rec)
	}
	// An allowed port is intercepted.
	if resp, _, _ := p.rawConnect(t, origin.Listener.Addr().String()); resp.StatusCode != 200 {
		t.Fatalf("CONNECT to an allowed port: %d", resp.StatusCode)
	}
	// Refused CONNECTs are decisions in the metrics; an intercepted one is
	// not (the requests inside it are).
	assertMetrics(t, testsupport.Exposition(p.srv.metrics.Handler()), map[string]float64{
		`robotsgate_decisions_total{decision="blocked",reason="port-forbidden"}`: 2,
		`robotsgate_decisions_total{decision="allowed",reason="allowed"}`:        0,
	})
}

func TestHTTPSCAPersistsAcrossRestarts(t *testing.T) {
	origin := newTLSOrigin(t, "User-agent: *\nAllow: /\n")
	cfg := mitmConfig(t, origin) // one data dir for both runs
	p1 := startHTTPSProxy(t, cfg)
	p2 := startHTTPSProxy(t, cfg)
	if p1.info.Fingerprint == "" || p1.info.Fingerprint != p2.info.Fingerprint {
		t.Fatalf("CA changed across restarts: %q vs %q", p1.info.Fingerprint, p2.info.Fingerprint)
	}
	testsupport.AssertMode(t, filepath.Join(cfg.HTTPS.DataDir, mitm.CAKeyFileName), 0o600)
	// A client trusting the first run's CA works with the second run.
	if resp, _ := get(t, p2.client(p1.ca), origin.URL+"/x"); resp.StatusCode != 200 {
		t.Fatalf("second run: %d", resp.StatusCode)
	}
}

func TestHTTPSCustomCAMismatchFailsAtStart(t *testing.T) {
	dir := t.TempDir()
	certA, _ := testsupport.WriteCert(t, dir, "a", true, time.Now())
	_, keyB := testsupport.WriteCert(t, dir, "b", true, time.Now())
	cfg := testConfig(t)
	cfg.HTTPS.CACert, cfg.HTTPS.CAKey = certA, keyB
	_, err := buildServer(t, cfg, enforce.Config{}, Deps{})
	if err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("New with a mismatched custom CA: err = %v", err)
	}
}

func TestHTTPSConnectAgentOverrideCarriesIntoMITM(t *testing.T) {
	// /private is closed to ClosedBot only.
	origin := newTLSOrigin(t, "User-agent: ClosedBot\nDisallow: /private\n\nUser-agent: *\nAllow: /\n")
	p := startHTTPSProxy(t, mitmConfig(t, origin))

	// Without an override, TestBot (the User-Agent) may fetch /private.
	if resp, body := get(t, p.client(p.ca), origin.URL+"/private/a"); resp.StatusCode != 200 {
		t.Fatalf("no override: %d %q", resp.StatusCode, body)
	}

	// Only the CONNECT names ClosedBot: the requests inside its MITM
	// session are decided for ClosedBot.
	c := p.client(p.ca)
	c.Transport.(*http.Transport).ProxyConnectHeader.Set("X-Robots-Agent", "ClosedBot/2.0")
	resp, body := get(t, c, origin.URL+"/private/b")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderAgent) != "ClosedBot" {
		t.Fatalf("override on the CONNECT only: %d agent %q %q", resp.StatusCode, resp.Header.Get(answer.HeaderAgent), body)
	}
	if n := origin.hit("/private/b"); n != 0 {
		t.Fatalf("origin saw the disallowed request %d times", n)
	}
	if rec := p.audit.Find(t, string(enforce.ReasonDisallowed)); rec["agent"] != "ClosedBot" || rec["url"] != origin.URL+"/private/b" {
		t.Fatalf("audit record: %v", rec)
	}
	// Still so for the next request on the same session; a request's own
	// override wins over the CONNECT's.
	if resp, _ := get(t, c, origin.URL+"/private/c"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("second request in the session: %d, want 403", resp.StatusCode)
	}
	if resp, body := get(t, c, origin.URL+"/private/d", "X-Robots-Agent", "OtherBot"); resp.StatusCode != 200 {
		t.Fatalf("the request's own override: %d %q", resp.StatusCode, body)
	}
	if n := p.srv.https.certs.Mints(); n != 1 {
		t.Fatalf("%d leaf certificates minted: the requests did not share MITM sessions as expected", n)
	}
}
