package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// muxOrigin is an origin that speaks TLS and plain HTTP on one port (it
// tells them apart by the first byte), counting the requests per path.
type muxOrigin struct {
	*httptest.Server
	cert *x509.Certificate
	originLog
}

func newMuxOrigin(t *testing.T, robotsTxt string) *muxOrigin {
	t.Helper()
	kp := selfSigned(t)
	leaf, err := x509.ParseCertificate(kp.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	o := &muxOrigin{cert: leaf}
	o.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.saw(r)
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, robotsTxt)
			return
		}
		io.WriteString(w, "hello from "+r.URL.Path)
	}))
	o.Listener = &sniffListener{Listener: o.Listener, cfg: &tls.Config{Certificates: []tls.Certificate{kp}}}
	o.Start()
	t.Cleanup(o.Close)
	return o
}

// sniffListener serves a connection whose first byte is a TLS handshake
// record with TLS, and any other as it is.
type sniffListener struct {
	net.Listener
	cfg *tls.Config
}

func (l *sniffListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(testTimeout))
	first, _ := br.Peek(1)
	_ = c.SetReadDeadline(time.Time{})
	bc := &bufferedConn{Conn: c, r: br}
	if len(first) == 1 && first[0] == 22 {
		return tls.Server(bc, l.cfg), nil
	}
	return bc, nil
}

type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// TestTunnelModePlainHTTPInside: in tunnel mode a client opens a tunnel
// to a host that is open at host level and sends a plain HTTP request
// for a disallowed path inside it. Tunnel mode cannot decide that path:
// the request is refused with tunnel-not-tls, audited and counted, and
// never reaches the origin. TLS inside a tunnel to the same host still
// goes through. Before, the bytes were spliced and /private was served.
func TestTunnelModePlainHTTPInside(t *testing.T) {
	o := newMuxOrigin(t, "User-agent: *\nDisallow: /private\n")
	port := o.Listener.Addr().(*net.TCPAddr).Port
	cfg := testConfig(t)
	cfg.Audit = config.AuditAll
	cfg.HTTPS.Mode = config.HTTPSModeTunnel
	cfg.HTTPS.AllowedPorts = []int{port}
	cfg.HTTPS.UpstreamRoots = []string{writeCertPEM(t, o.cert)}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p := startHTTPSProxy(t, cfg)
	target := o.Listener.Addr().String()

	resp, c, br := rawConnect(t, p.url.Host, target, "User-Agent: TestBot/1.0")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT %s: %d", target, resp.StatusCode)
	}
	if _, err := io.WriteString(c, "GET /private HTTP/1.1\r\nHost: "+target+"\r\nUser-Agent: TestBot/1.0\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	inner, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatalf("no answer to the request inside the tunnel: %v", err)
	}
	body, _ := io.ReadAll(inner.Body)
	if inner.StatusCode != http.StatusForbidden || inner.Header.Get(answer.HeaderDecision) != string(answer.ReasonTunnelNotTLS) {
		t.Fatalf("plain HTTP inside a tunnel: %d %s %q", inner.StatusCode, inner.Header.Get(answer.HeaderDecision), body)
	}
	if n := o.hit("/private"); n != 0 {
		t.Fatalf("the origin received /private %d time(s) through a tunnel", n)
	}
	// Closed (a reset, when the rest of the request was still unread).
	if _, err := br.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the tunnel stayed open after the refusal: %v", err)
	}
	rec := p.audit.Find(t, string(answer.ReasonTunnelNotTLS))
	if rec["decision"] != audit.DecisionBlocked || rec["method"] != http.MethodConnect || rec["status"] != float64(http.StatusForbidden) {
		t.Fatalf("tunnel-not-tls audit record: %v", rec)
	}

	// TLS inside a tunnel to the same host is spliced.
	roots := x509.NewCertPool()
	roots.AddCert(o.cert)
	resp, got := get(t, p.client(roots), "https://"+target+"/private/x")
	if resp.StatusCode != 200 || got != "hello from /private/x" || !resp.TLS.PeerCertificates[0].Equal(o.cert) {
		t.Fatalf("TLS through the tunnel: %d %q", resp.StatusCode, got)
	}
	assertMetrics(t, testsupport.Exposition(p.srv.metrics.Handler()), map[string]float64{
		`robotsgate_decisions_total{decision="blocked",reason="tunnel-not-tls"}`:    1,
		`robotsgate_decisions_total{decision="allowed",reason="tunnel-unenforced"}`: 2,
	})
}

// TestTunnelModeSplicedTunnelShutdown: a tunnel spliced after its
// ClientHello is tracked like the tunnels goproxy opened: it counts as
// active while open, and Shutdown closes it at once instead of waiting.
func TestTunnelModeSplicedTunnelShutdown(t *testing.T) {
	o := newTLSOrigin(t, "User-agent: *\nDisallow: /private\n")
	cfg := mitmConfig(t, o)
	cfg.HTTPS.Mode = config.HTTPSModeTunnel
	p := startHTTPSProxy(t, cfg)

	resp, c, br := rawConnect(t, p.url.Host, o.Listener.Addr().String(), "User-Agent: TestBot/1.0")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %d", resp.StatusCode)
	}
	roots := x509.NewCertPool()
	roots.AddCert(o.Certificate())
	tc := tls.Client(&bufferedConn{Conn: c, r: br}, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	if err := tc.Handshake(); err != nil {
		t.Fatalf("TLS through the tunnel: %v", err)
	}
	if n := p.srv.https.hijacks.Active(); n != 1 {
		t.Fatalf("tracked CONNECT connections: %d, want 1", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := p.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with an open tunnel: %v", err)
	}
	if _, err := tc.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the tunnel stayed open after Shutdown: %v", err)
	}
}
