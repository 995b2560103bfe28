package proxy

import (
	"bufio"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// sniOrigin is an HTTPS origin on 127.0.0.1 with a certificate for
// localhost that records the server name of every handshake it sees (the
// inner one of an encrypted ClientHello, which it can decrypt), as a
// shared host or CDN serving several sites on one address would route it.
type sniOrigin struct {
	*httptest.Server
	cert  *x509.Certificate
	echCL []byte // the ECHConfigList a client encrypts its ClientHello to
	mu    sync.Mutex
	names []string
}

func newSNIOrigin(t *testing.T, robotsTxt string) *sniOrigin {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), DNSNames: []string{"localhost", "closed.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	o := &sniOrigin{}
	o.cert, _ = x509.ParseCertificate(der)
	echKey, echConfig := newECHConfig(t, "public.test")
	o.echCL = binary.BigEndian.AppendUint16(nil, uint16(len(echConfig)))
	o.echCL = append(o.echCL, echConfig...)
	o.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, map[bool]string{true: robotsTxt, false: "hello from " + r.TLS.ServerName}[r.URL.Path == "/robots.txt"])
	}))
	o.Config.ErrorLog = quietLog()
	o.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		EncryptedClientHelloKeys: []tls.EncryptedClientHelloKey{{Config: echConfig, PrivateKey: echKey.Bytes(), SendAsRetry: true}},
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			o.mu.Lock()
			o.names = append(o.names, h.ServerName)
			o.mu.Unlock()
			return nil, nil
		}}
	o.StartTLS()
	t.Cleanup(o.Close)
	return o
}

// saw reports whether a handshake named name.
func (o *sniOrigin) saw(name string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Contains(o.names, name)
}

// newECHConfig returns an X25519 key and an ECHConfig (draft-ietf-tls-esni,
// version 0xfe0d; HKDF-SHA256, AES-128-GCM) for it with publicName.
func newECHConfig(t *testing.T, publicName string) (*ecdh.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	u16 := binary.BigEndian.AppendUint16
	var c []byte
	c = append(c, 1)   // config_id
	c = u16(c, 0x0020) // KEM: DHKEM(X25519, HKDF-SHA256)
	c = u16(c, uint16(len(key.PublicKey().Bytes())))
	c = append(c, key.PublicKey().Bytes()...)
	c = u16(c, 4)         // cipher suites
	c = u16(u16(c, 1), 1) // HKDF-SHA256, AES-128-GCM
	c = append(c, 0)      // maximum_name_length
	c = append(c, byte(len(publicName)))
	c = append(c, publicName...)
	c = u16(c, 0) // no extensions
	return key, append(u16(u16(nil, 0xfe0d), uint16(len(c))), c...)
}

// tunnelProxy starts robotsgate in tunnel mode, allowing CONNECT to o's
// port and trusting its certificate.
func tunnelProxy(t *testing.T, o *sniOrigin) (*httpsProxy, string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(o.Listener.Addr().String())
	cfg := testConfig(t)
	cfg.Audit = config.AuditAll
	cfg.HTTPS.Mode = config.HTTPSModeTunnel
	p, _ := net.LookupPort("tcp", port)
	cfg.HTTPS.AllowedPorts = []int{p}
	cfg.HTTPS.UpstreamRoots = []string{writeCertPEM(t, o.cert)}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return startHTTPSProxy(t, cfg), port
}

// handshakeThrough opens CONNECT target through p and runs a TLS
// handshake inside it with tc.
func handshakeThrough(t *testing.T, p *httpsProxy, target string, tc *tls.Config) error {
	t.Helper()
	resp, c, br := rawConnect(t, p.url.Host, target, "User-Agent: TestBot/1.0")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT %s: %d", target, resp.StatusCode)
	}
	conn := tls.Client(&bufferedConn{Conn: c, r: br}, tc)
	defer conn.Close()
	return conn.Handshake()
}

// TestTunnelModeServerNameChecked: in tunnel mode, a CONNECT decided for
// one host is spliced only when the ClientHello names that host (in any
// spelling of it). A ClientHello naming another site on the same address,
// naming none, or encrypting the name it means (ECH, whose outer name is
// the CONNECT target) is refused at the TLS level and audited; the origin
// never sees a handshake for the other site. Before, the first six bytes
// were checked and every one of these reached closed.test.
func TestTunnelModeServerNameChecked(t *testing.T) {
	o := newSNIOrigin(t, "User-agent: *\nDisallow: /private\n")
	p, port := tunnelProxy(t, o)
	target := "localhost:" + port
	roots := x509.NewCertPool()
	roots.AddCert(o.cert)

	// The name CONNECTed, spelled otherwise: spliced.
	if err := handshakeThrough(t, p, "LocalHost.:"+port, &tls.Config{RootCAs: roots, ServerName: "LOCALHOST"}); err != nil {
		t.Fatalf("a ClientHello naming the CONNECT target: %v", err)
	}
	refused := []struct {
		name   string
		tc     *tls.Config
		reason string
	}{
		{"another site", &tls.Config{RootCAs: roots, ServerName: "closed.test"}, string(answer.ReasonTunnelServerName)},
		{"no server name", &tls.Config{InsecureSkipVerify: true}, string(answer.ReasonTunnelServerName)},
		{"encrypted ClientHello", &tls.Config{RootCAs: roots, ServerName: "closed.test", MinVersion: tls.VersionTLS13,
			EncryptedClientHelloConfigList: o.echCL}, string(answer.ReasonTunnelECH)},
	}
	for _, tt := range refused {
		before := countReason(t, p, tt.reason)
		if err := handshakeThrough(t, p, target, tt.tc); err == nil {
			t.Errorf("%s: the handshake went through the tunnel to %s", tt.name, target)
			continue
		} else if !strings.Contains(err.Error(), "access denied") {
			t.Errorf("%s: the client was not told at the TLS level: %v", tt.name, err)
		}
		if n := countReason(t, p, tt.reason); n != before+1 {
			t.Errorf("%s: %d new blocked CONNECT audit records with reason %s, want 1", tt.name, n-before, tt.reason)
		}
	}
	if o.saw("closed.test") {
		t.Fatalf("the origin saw a handshake for closed.test through a tunnel to %s", target)
	}
}

// TestTunnelModeFakeRecordHeader: a record header that announces a
// ClientHello followed by plain text is not a ClientHello: refused
// tunnel-not-tls, whatever its first six bytes say.
func TestTunnelModeFakeRecordHeader(t *testing.T) {
	o := newSNIOrigin(t, "User-agent: *\nDisallow: /private\n")
	p, port := tunnelProxy(t, o)
	resp, c, br := rawConnect(t, p.url.Host, "localhost:"+port, "User-Agent: TestBot/1.0")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %d", resp.StatusCode)
	}
	fake := "\x16\x03\x01\x00\x40\x01GET /private HTTP/1.1\r\nHost: localhost\r\n\r\n" + strings.Repeat("x", 40)
	if _, err := io.WriteString(c, fake); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(bufio.NewReader(br)); err != nil && !isReset(err) {
		t.Fatalf("the tunnel was not closed: %v", err)
	}
	rec := p.audit.Find(t, string(answer.ReasonTunnelNotTLS))
	if rec["decision"] != audit.DecisionBlocked {
		t.Fatalf("audit record %v", rec)
	}
}

// countReason counts the audit records of blocked CONNECTs with reason.
func countReason(t *testing.T, p *httpsProxy, reason string) int {
	n := 0
	for _, rec := range p.audit.Records(t) {
		if rec["reason"] == reason && rec["decision"] == audit.DecisionBlocked && rec["method"] == http.MethodConnect {
			n++
		}
	}
	return n
}

// isReset reports whether err is a connection reset, how a refused
// client's unread bytes may end its connection.
func isReset(err error) bool { return strings.Contains(err.Error(), "reset") }
