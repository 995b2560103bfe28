package proxy

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/mitm"
)

// tlsOrigin is an HTTPS httptest origin that counts hits per path.
type tlsOrigin struct {
	*httptest.Server
	robots string
	originLog
	plain atomic.Int64 // requests that did not arrive over TLS
}

func newTLSOrigin(t testing.TB, robotsTxt string) *tlsOrigin {
	t.Helper()
	o := &tlsOrigin{robots: robotsTxt}
	o.Server = quietTLSServer(http.HandlerFunc(o.serve))
	t.Cleanup(o.Close)
	return o
}

func (o *tlsOrigin) serve(w http.ResponseWriter, r *http.Request) {
	o.saw(r)
	if r.TLS == nil {
		o.plain.Add(1)
	}
	if r.URL.Path == "/robots.txt" {
		io.WriteString(w, o.robots)
		return
	}
	io.WriteString(w, "hello from "+r.URL.Path)
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
	return newHTTPSProxy(t, srv, addr, ab)
}

// newHTTPSProxy returns the httpsProxy of srv, serving at addr and
// auditing to ab (nil: not kept); p.ca trusts srv's CA, if it has one.
func newHTTPSProxy(t testing.TB, srv *Server, addr string, ab *memAudit) *httpsProxy {
	p := &httpsProxy{srv: srv, url: &url.URL{Scheme: "http", Host: addr}, audit: ab}
	t.Cleanup(func() { // before the Server shuts down
		for _, c := range p.clients {
			c.CloseIdleConnections()
		}
	})
	if ca, info := srv.ca(); ca != nil {
		p.ca = x509.NewCertPool()
		p.ca.AddCert(ca.Leaf)
		p.info = info
	}
	return p
}

// sessionSender starts TLS (trusting roots, for the server name
// 127.0.0.1) on c, a CONNECT tunnel through the proxy, and returns a
// function that sends GET path with Host host inside the session and
// returns the response with its body read.
func sessionSender(t *testing.T, c net.Conn, roots *x509.CertPool) func(host, path string) (*http.Response, string) {
	tc := tls.Client(c, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	br := bufio.NewReader(tc)
	return func(host, path string) (*http.Response, string) {
		t.Helper()
		if _, err := io.WriteString(tc, "GET "+path+" HTTP/1.1\r\nHost: "+host+"\r\nUser-Agent: TestBot/1.0\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("GET %s (Host %s): %v", path, host, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
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

// allowOrigin lets cfg CONNECT to the port of addr (host:port) only and
// trust cert, the origin's certificate.
func allowOrigin(t testing.TB, cfg *config.Config, addr string, cert *x509.Certificate) {
	t.Helper()
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTPS.AllowedPorts = []int{int(ap.Port())}
	cfg.HTTPS.UpstreamRoots = []string{writeCertPEM(t, cert)}
}

// tunnelConfig returns a test configuration (audit all) in tunnel mode
// allowing CONNECT to addr (host:port) only and trusting cert.
func tunnelConfig(t *testing.T, addr string, cert *x509.Certificate) config.Config {
	t.Helper()
	cfg := testConfig(t)
	cfg.Audit = config.AuditAll
	cfg.HTTPS.Mode = config.HTTPSModeTunnel
	allowOrigin(t, &cfg, addr, cert)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// mitmConfig returns a test configuration (audit all) allowing CONNECT
// to origins' ports and trusting their certificates.
func mitmConfig(t *testing.T, origins ...*tlsOrigin) config.Config {
	t.Helper()
	cfg := testConfig(t)
	cfg.Audit = config.AuditAll
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

// ca returns the Server's interception CA and its description; nil when
// HTTPS interception is off.
func (s *Server) ca() (*tls.Certificate, mitm.CAInfo) {
	if s.https == nil {
		return nil, mitm.CAInfo{}
	}
	return s.https.ca, s.https.caInfo
}
