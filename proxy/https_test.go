package proxy

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/mitm"
)

// tlsOrigin is an HTTPS httptest origin that counts hits per path.
type tlsOrigin struct {
	*httptest.Server
	robots string
	mu     sync.Mutex
	hits   map[string]int
	plain  atomic.Int64 // requests that did not arrive over TLS
}

func newTLSOrigin(t testing.TB, robotsTxt string) *tlsOrigin {
	t.Helper()
	o := &tlsOrigin{robots: robotsTxt, hits: make(map[string]int)}
	o.Server = quietTLSServer(http.HandlerFunc(o.serve))
	t.Cleanup(o.Close)
	return o
}

func (o *tlsOrigin) serve(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	o.hits[r.URL.Path]++
	o.mu.Unlock()
	if r.TLS == nil {
		o.plain.Add(1)
	}
	if r.URL.Path == "/robots.txt" {
		io.WriteString(w, o.robots)
		return
	}
	io.WriteString(w, "hello from "+r.URL.Path)
}

func (o *tlsOrigin) hit(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[path]
}

func (o *tlsOrigin) port(t testing.TB) int {
	t.Helper()
	u, _ := url.Parse(o.URL)
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeCertPEM writes cert as a PEM file and returns its path.
func writeCertPEM(t testing.TB, cert *x509.Certificate) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "root.pem")
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// httpsProxy is a running robotsgate with HTTPS configured.
type httpsProxy struct {
	srv   *Server
	url   *url.URL
	audit *memAudit
	ca    *x509.CertPool // trusts robotsgate's CA
	info  mitm.CAInfo

	clients []*http.Transport // closed before the proxy shuts down
}

// startHTTPSProxy starts robotsgate on 127.0.0.1 with cfg (testConfig,
// mitmConfig).
func startHTTPSProxy(t testing.TB, cfg config.Config) *httpsProxy {
	t.Helper()
	ab := &memAudit{}
	srv, addr := startServer(t, cfg, enforce.Config{}, Deps{Auditor: audit.New(ab)})
	p := &httpsProxy{srv: srv, url: &url.URL{Scheme: "http", Host: addr}, audit: ab}
	t.Cleanup(func() { // before the Server shuts down
		for _, c := range p.clients {
			c.CloseIdleConnections()
		}
	})
	if ca, info := srv.CA(); ca != nil {
		p.ca = x509.NewCertPool()
		p.ca.AddCert(ca.Leaf)
		p.info = info
	}
	return p
}

// client returns an HTTP client using the proxy and trusting roots.
func (p *httpsProxy) client(roots *x509.CertPool) *http.Client {
	tr := &http.Transport{
		Proxy:              http.ProxyURL(p.url),
		ProxyConnectHeader: http.Header{"User-Agent": {"TestBot/1.0"}},
		TLSClientConfig:    &tls.Config{RootCAs: roots},
	}
	p.clients = append(p.clients, tr)
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

// rawConnect sends CONNECT target (User-Agent TestBot/1.0, plus the
// extra header lines) through the proxy and returns the response (its
// body read unless 200) and the connection.
func (p *httpsProxy) rawConnect(t *testing.T, target string, extraHeaders ...string) (*http.Response, string, net.Conn) {
	t.Helper()
	resp, c, _ := rawConnect(t, p.url.Host, target, append([]string{"User-Agent: TestBot/1.0"}, extraHeaders...)...)
	var body string
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
	}
	return resp, body, c
}

// mitmConfig returns a test configuration (audit all) allowing CONNECT
// to origins' ports and trusting their certificates.
func mitmConfig(t *testing.T, origins ...*tlsOrigin) config.Config {
	t.Helper()
	cfg := testConfig(t)
	cfg.Audit = AuditAll
	cfg.HTTPS.AllowedPorts = nil
	for _, o := range origins {
		cfg.HTTPS.AllowedPorts = append(cfg.HTTPS.AllowedPorts, o.port(t))
		cfg.HTTPS.UpstreamRoots = append(cfg.HTTPS.UpstreamRoots, writeCertPEM(t, o.Certificate()))
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

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
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderDecision) != string(enforce.ReasonDisallowed) {
		t.Fatalf("disallowed path: %d %s %q", resp.StatusCode, resp.Header.Get(HeaderDecision), body)
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

	rec := p.audit.find(t, string(enforce.ReasonDisallowed))
	if !strings.HasPrefix(rec["url"].(string), "https://127.0.0.1:") || rec["agent"] != "TestBot" {
		t.Fatalf("audit record of the HTTPS refusal: %v", rec)
	}
}

func TestHTTPSUntrustedUpstream502(t *testing.T) {
	trusted := newTLSOrigin(t, "User-agent: *\nAllow: /\n")
	// A second origin with its own self-signed certificate, not in the roots.
	untrusted := &tlsOrigin{robots: "User-agent: *\nAllow: /\n", hits: make(map[string]int)}
	untrusted.Server = httptest.NewUnstartedServer(http.HandlerFunc(untrusted.serve))
	untrusted.TLS = &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}}
	untrusted.Config.ErrorLog = quietLog()
	untrusted.StartTLS()
	t.Cleanup(untrusted.Close)

	cfg := mitmConfig(t, trusted)
	cfg.HTTPS.AllowedPorts = append(cfg.HTTPS.AllowedPorts, untrusted.port(t))
	p := startHTTPSProxy(t, cfg)

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
	rec := p.audit.find(t, string(enforce.ReasonOriginUnreachable))
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
	origin := &tlsOrigin{robots: "User-agent: *\nAllow: /\n", hits: make(map[string]int)}
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
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderDecision) != string(ReasonPortForbidden) {
			t.Fatalf("CONNECT %s: %d %q", target, resp.StatusCode, body)
		}
	}
	rec := p.audit.find(t, string(ReasonPortForbidden))
	if rec["decision"] != audit.DecisionBlocked || rec["method"] != http.MethodConnect {
		t.Fatalf("audit record: %v", rec)
	}
	// An allowed port is intercepted.
	if resp, _, _ := p.rawConnect(t, origin.Listener.Addr().String()); resp.StatusCode != 200 {
		t.Fatalf("CONNECT to an allowed port: %d", resp.StatusCode)
	}
	// Refused CONNECTs are decisions in the metrics; an intercepted one is
	// not (the requests inside it are).
	assertMetrics(t, exposition(p.srv.metrics), map[string]float64{
		`robotsgate_decisions_total{decision="blocked",reason="port-forbidden"}`: 2,
		`robotsgate_decisions_total{decision="allowed",reason="allowed"}`:        0,
	})
}

func TestTunnelMode(t *testing.T) {
	closed := newTLSOrigin(t, "User-agent: *\nDisallow: /\n")
	partly := newTLSOrigin(t, "User-agent: *\nDisallow: /private\n")
	cfg := mitmConfig(t, closed, partly)
	cfg.HTTPS.Mode = HTTPSModeTunnel
	p := startHTTPSProxy(t, cfg)
	if p.ca != nil {
		t.Fatal("tunnel mode loaded a CA")
	}

	// Fully disallowed host: CONNECT refused with a real 403.
	resp, body, _ := p.rawConnect(t, closed.Listener.Addr().String())
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderDecision) != string(ReasonSiteClosed) {
		t.Fatalf("closed site: %d %s %q", resp.StatusCode, resp.Header.Get(HeaderDecision), body)
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
	rec := p.audit.find(t, string(ReasonTunnel))
	if rec["decision"] != audit.DecisionAllowed || rec["method"] != http.MethodConnect || rec["agent"] != "TestBot" {
		t.Fatalf("tunnel audit record: %v", rec)
	}
	p.audit.find(t, string(ReasonSiteClosed))
	assertMetrics(t, exposition(p.srv.metrics), map[string]float64{ // counted once each
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
	cfg.HTTPS.Mode = HTTPSModeTunnel
	cfg.HTTPS.AllowedPorts = []int{port}
	cfg.HTTPS.UpstreamRoots = []string{writeCertPEM(t, o.Certificate())}
	p := startHTTPSProxy(t, cfg)
	resp, body, _ := p.rawConnect(t, u.Host)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderDecision) != string(enforce.ReasonUnreachable) {
		t.Fatalf("unreachable robots.txt: %d %q", resp.StatusCode, body)
	}
}

func TestHTTPSCAPersistsAcrossRestarts(t *testing.T) {
	origin := newTLSOrigin(t, "User-agent: *\nAllow: /\n")
	cfg := mitmConfig(t, origin) // one data dir for both runs
	p1 := startHTTPSProxy(t, cfg)
	p2 := startHTTPSProxy(t, cfg)
	if p1.info.Fingerprint == "" || p1.info.Fingerprint != p2.info.Fingerprint {
		t.Fatalf("CA changed across restarts: %q vs %q", p1.info.Fingerprint, p2.info.Fingerprint)
	}
	assertMode(t, filepath.Join(cfg.HTTPS.DataDir, mitm.CAKeyFileName), 0o600)
	// A client trusting the first run's CA works with the second run.
	if resp, _ := get(t, p2.client(p1.ca), origin.URL+"/x"); resp.StatusCode != 200 {
		t.Fatalf("second run: %d", resp.StatusCode)
	}
}

func TestHTTPSCustomCAMismatchFailsAtStart(t *testing.T) {
	dir := t.TempDir()
	certA, _ := writeCustomCA(t, dir, "a", true)
	_, keyB := writeCustomCA(t, dir, "b", true)
	cfg := testConfig(t)
	cfg.HTTPS.CACert, cfg.HTTPS.CAKey = certA, keyB
	_, err := buildServer(t, cfg, enforce.Config{}, Deps{})
	if err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("New with a mismatched custom CA: err = %v", err)
	}
}

// selfSigned returns a new self-signed certificate for 127.0.0.1, trusted
// only where a test adds it to the roots.
func selfSigned(t testing.TB) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(42),
		Subject:      pkix.Name{CommonName: "self-signed " + rand.Text()},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		// A CA, like httptest's certificate, so that it can be a root.
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func TestHTTPSShutdownWaitsForMITMRequest(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	origin := newTLSOrigin(t, "User-agent: *\nAllow: /\n")
	origin.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			arrived <- struct{}{}
			<-release
			// A robot tag: its audit record is written after the
			// response headers arrive, i.e. during the shutdown.
			w.Header().Set("X-Robots-Tag", "noindex")
		}
		origin.serve(w, r)
	})
	p := startHTTPSProxy(t, mitmConfig(t, origin))
	c := p.client(p.ca)
	get(t, c, origin.URL+"/warm") // an idle keep-alive MITM session

	got := make(chan string, 1)
	go func() {
		resp, err := c.Get(origin.URL + "/slow")
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- fmt.Sprintf("%d %s", resp.StatusCode, b)
	}()
	<-arrived

	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		shut <- p.srv.Shutdown(ctx)
	}()
	// Wait (bounded) until the tracker drains, then let the origin answer.
	for i := 0; ; i++ {
		h := p.srv.https.hijacks
		h.mu.Lock()
		draining := h.draining
		h.mu.Unlock()
		if draining {
			break
		}
		if i > 2000 {
			t.Fatal("Shutdown never reached the hijacked connections")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	var err error
	select {
	case err = <-shut:
	case <-time.After(testTimeout):
		t.Fatal("Shutdown did not return")
	}
	// The moment Shutdown returns (when the caller closes the audit log),
	// the record the in-flight request wrote after its response headers
	// arrived is already in the log.
	recs := p.audit.records(t)
	if err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	found := false
	for _, r := range recs {
		if strings.HasSuffix(fmt.Sprint(r["url"]), "/slow") && r["reason"] == string(ReasonRobotTag) {
			found = true
		}
	}
	if !found {
		t.Fatalf("when Shutdown returned, no robot-tag record of the in-flight request: %v", recs)
	}
	if r := <-got; r != "200 hello from /slow" {
		t.Fatalf("in-flight request: %s", r)
	}
	if n := p.srv.https.hijacks.active(); n != 0 {
		t.Fatalf("%d hijacked connections left after Shutdown", n)
	}
}

func TestTunnelModeAgentAndReport(t *testing.T) {
	// Closed to ClosedBot only.
	o := newTLSOrigin(t, "User-agent: ClosedBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
	cfg := mitmConfig(t, o)
	cfg.HTTPS.Mode = HTTPSModeTunnel
	p := startHTTPSProxy(t, cfg)
	target := o.Listener.Addr().String()

	// The CONNECT's User-Agent (TestBot) may tunnel; the override header
	// on the CONNECT names ClosedBot, which may not.
	if resp, body, _ := p.rawConnect(t, target); resp.StatusCode != 200 {
		t.Fatalf("TestBot: %d %q", resp.StatusCode, body)
	}
	resp, body, _ := p.rawConnect(t, target, "X-Robots-Agent: ClosedBot/2.0")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderAgent) != "ClosedBot" {
		t.Fatalf("ClosedBot: %d %s %q", resp.StatusCode, resp.Header.Get(HeaderAgent), body)
	}

	// Report mode: the closed site is audited as reported and tunnelled.
	cfg.Mode = ModeReport
	p = startHTTPSProxy(t, cfg)
	if resp, body, _ := p.rawConnect(t, target, "X-Robots-Agent: ClosedBot"); resp.StatusCode != 200 {
		t.Fatalf("report mode: %d %q", resp.StatusCode, body)
	}
	rec := p.audit.find(t, string(ReasonSiteClosed))
	if rec["decision"] != audit.DecisionReported {
		t.Fatalf("report-mode audit record: %v", rec)
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
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderAgent) != "ClosedBot" {
		t.Fatalf("override on the CONNECT only: %d agent %q %q", resp.StatusCode, resp.Header.Get(HeaderAgent), body)
	}
	if n := origin.hit("/private/b"); n != 0 {
		t.Fatalf("origin saw the disallowed request %d times", n)
	}
	if rec := p.audit.find(t, string(enforce.ReasonDisallowed)); rec["agent"] != "ClosedBot" || rec["url"] != origin.URL+"/private/b" {
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

// TestTunnelModeWarnsWithoutAgent: tunnel mode without a configured
// agent warns at start (CONNECTs often carry no User-Agent).
func TestTunnelModeWarnsWithoutAgent(t *testing.T) {
	for _, agent := range []string{"", "ExampleBot"} {
		logs := &memAudit{}
		cfg := testConfig(t)
		cfg.HTTPS.Mode = HTTPSModeTunnel
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

// TestHTTPSShutdownDeadlineCancelsMITMRequest: when Shutdown's deadline
// has passed, the upstream round trip of a request inside an MITM session
// (whose context neither net/http nor goproxy cancels) is cut short, so
// that Shutdown need not wait out its grace period for it, and the
// request is no longer counted as running when Shutdown returns.
func TestHTTPSShutdownDeadlineCancelsMITMRequest(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	arrived := make(chan struct{}, 1)
	originGaveUp := make(chan struct{}, 1)
	origin := newTLSOrigin(t, "User-agent: *\nAllow: /\n")
	origin.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			arrived <- struct{}{}
			select {
			case <-r.Context().Done(): // robotsgate dropped the upstream request
				originGaveUp <- struct{}{}
			case <-release:
			}
			return
		}
		origin.serve(w, r)
	})
	p := startHTTPSProxy(t, mitmConfig(t, origin))
	c := p.client(p.ca)
	go func() {
		if resp, err := c.Get(origin.URL + "/hang"); err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-arrived:
	case <-time.After(testTimeout):
		t.Fatal("the request never reached the origin")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the deadline has passed: connections are closed at once
	shut := make(chan error, 1)
	go func() { shut <- p.srv.Shutdown(ctx) }()
	var err error
	select {
	case err = <-shut:
	case <-time.After(testTimeout):
		t.Fatal("Shutdown did not return")
	}
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "still running") {
		t.Fatalf("forced Shutdown: %v, want only the context's error", err)
	}
	select {
	case <-originGaveUp:
	case <-time.After(testTimeout):
		t.Fatal("the upstream request was not cancelled")
	}
	if n := p.srv.life.inFlight(); n != 0 {
		t.Fatalf("%d handlers counted as running after Shutdown", n)
	}
}
