package proxy

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/signing"
)

// testAgent is the Signature-Agent of the tests.
const testAgent = "https://crawler.example/.well-known/http-message-signatures-directory"

// sigOrigin is an origin that records every request it receives, as its
// receiver sees it, robots.txt fetches included.
type sigOrigin struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []testsupport.SigRequest
}

func newSigOrigin(t *testing.T, tlsOn bool, robotsTxt string) *sigOrigin {
	t.Helper()
	o := &sigOrigin{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		rq := testsupport.SigRequestOf(r, scheme)
		rq.Header = r.Header.Clone()
		o.mu.Lock()
		o.reqs = append(o.reqs, rq)
		o.mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, robotsTxt)
			return
		}
		io.WriteString(w, "page "+r.URL.Path)
	})
	o.Server = startTestServer(t, h, tlsOn)
	return o
}

// received returns the requests for path the origin received.
func (o *sigOrigin) received(path string) []testsupport.SigRequest {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []testsupport.SigRequest
	for _, r := range o.reqs {
		if p, _, _ := strings.Cut(r.Target, "?"); p == path {
			out = append(out, r)
		}
	}
	return out
}

// newSigningKey writes a new Ed25519 key into the test's directory.
func newSigningKey(t *testing.T, name string) (*signing.Key, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	k, err := signing.GenerateKey(p, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k, p
}

// withSigning turns signing on in c with the key file keyFile.
func withSigning(c *config.Config, keyFile string) {
	c.Signing.Key, c.Signing.Agent = keyFile, testAgent
	c.Audit = config.AuditAll
}

// one returns the only request of rs.
func one(t *testing.T, what string, rs []testsupport.SigRequest) testsupport.SigRequest {
	t.Helper()
	if len(rs) != 1 {
		t.Fatalf("%s: the origin received %d requests, want 1", what, len(rs))
	}
	return rs[0]
}

// TestSigningPlainHTTP: through the proxy, a plain-HTTP request and the
// robots.txt fetch robotsgate made for it arrive signed, verified by
// both independent verifiers; a refused request never reaches the
// origin, and no audit record of a refusal names a signature.
func TestSigningPlainHTTP(t *testing.T) {
	o := newSigOrigin(t, false, privateRobots)
	k, kp := newSigningKey(t, "wba.pem")
	h := newHarness(t, harnessOpts{config: func(c *config.Config) {
		withSigning(c, kp)
		c.Signing.Components = []string{"@method", "@path", "@query"}
	}})
	if resp, _ := h.get(t, o.URL+"/page?q=1"); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /page: %d", resp.StatusCode)
	}
	if resp, _ := h.get(t, o.URL+"/private"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("GET /private: %d, want 403", resp.StatusCode)
	}
	if got := o.received("/private"); len(got) != 0 {
		t.Fatalf("the refused request reached the origin: %v", got)
	}
	page := one(t, "/page", o.received("/page"))
	if got := page.Header.Get("Signature-Agent"); got != `sig1="`+testAgent+`"` {
		t.Errorf("Signature-Agent %s", got)
	}
	for _, rec := range h.audit.Records(t) {
		if rec["decision"] == audit.DecisionBlocked && rec["signed_keyid"] != nil {
			t.Errorf("a refusal names a signature: %v", rec)
		}
	}
	ex := testsupport.Exposition(h.srv.metrics.Handler())
	if testsupport.MetricValue(t, ex, `robotsgate_signatures_total{kind="forward",result="signed"}`) != 1 ||
		testsupport.MetricValue(t, ex, `robotsgate_signatures_total{kind="fetch",result="signed"}`) != 1 {
		t.Errorf("signature counters:\n%s", ex)
	}
	verifySigned(t, []signedBy{
		{page, "sig1", k},
		{one(t, "/robots.txt", o.received("/robots.txt")), "sig1", k},
	})
}

// TestSigningMITM: inside an MITM session the request is signed for the
// https origin (@authority without the default port rules: the test
// origin's port is kept), and so is robotsgate's https robots.txt fetch.
func TestSigningMITM(t *testing.T) {
	o := newSigOrigin(t, true, privateRobots)
	k, kp := newSigningKey(t, "wba.pem")
	cfg := testConfig(t)
	withSigning(&cfg, kp)
	cfg.Signing.Components = []string{"@target-uri"}
	allowOrigin(t, &cfg, o.Listener.Addr().String(), o.Certificate())
	p := startHTTPSProxy(t, cfg)
	c := p.client(p.ca)
	if resp, _ := get(t, c, o.URL+"/page"); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /page: %d", resp.StatusCode)
	}
	if resp, _ := get(t, c, o.URL+"/private"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("GET /private: %d", resp.StatusCode)
	}
	if len(o.received("/private")) != 0 {
		t.Fatal("the refused request reached the origin")
	}
	page := one(t, "/page", o.received("/page"))
	if page.Scheme != "https" {
		t.Fatalf("scheme %s", page.Scheme)
	}
	verifySigned(t, []signedBy{
		{page, "sig1", k},
		{one(t, "/robots.txt", o.received("/robots.txt")), "sig1", k},
	})
}

// TestSigningTransparent: a request of a redirected connection (the
// transparent listener's path, its original destination given in-process)
// is signed.
func TestSigningTransparent(t *testing.T) {
	o := newSigOrigin(t, false, privateRobots)
	k, kp := newSigningKey(t, "wba.pem")
	h := newHarness(t, harnessOpts{config: func(c *config.Config) {
		withSigning(c, kp)
		c.Transparent.Listen = "127.0.0.1:0"
	}})
	dst := netip.MustParseAddrPort(o.Listener.Addr().String())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), redirectedKey{}, &redirected{dst: dst}))
		h.srv.serveRedirected(w, r)
	}))
	defer srv.Close()
	host := dst.String()
	for _, path := range []string{"/page", "/private"} {
		resp, _ := rawRoundTrip(t, srv.Listener.Addr().String(),
			"GET "+path+" HTTP/1.1\r\nHost: "+host+"\r\nUser-Agent: TestBot/1.0\r\nConnection: close\r\n\r\n")
		if want := map[string]int{"/page": 200, "/private": 403}[path]; resp.StatusCode != want {
			t.Fatalf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	if len(o.received("/private")) != 0 {
		t.Fatal("the refused request reached the origin")
	}
	verifySigned(t, []signedBy{{one(t, "/page", o.received("/page")), "sig1", k}})
}

// TestSigningKeepsClientSignature: a client's own signature is forwarded
// untouched, and robotsgate's takes the next free label.
func TestSigningKeepsClientSignature(t *testing.T) {
	o := newSigOrigin(t, false, "")
	k, kp := newSigningKey(t, "wba.pem")
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { withSigning(c, kp) }})
	h.get(t, o.URL+"/page", "Signature", "sig1=:AAAA:", "Signature-Input", `sig1=("@authority");created=1`,
		"Signature-Agent", `sig1="https://client.example/"`)
	page := one(t, "/page", o.received("/page"))
	if got := page.Header.Values("Signature"); len(got) != 2 || got[0] != "sig1=:AAAA:" {
		t.Errorf("Signature lines %q", got)
	}
	verifySigned(t, []signedBy{{page, "sig2", k}})
}

// TestSigningPerCredential: two users of the credentials file crawl with
// identities of their own (key and Signature-Agent); a third with
// signing.key.
func TestSigningPerCredential(t *testing.T) {
	o := newSigOrigin(t, false, "")
	k, kp := newSigningKey(t, "default.pem")
	ka, kpa := newSigningKey(t, "alice.pem")
	kb, kpb := newSigningKey(t, "bob.pem")
	creds := testsupport.WriteFile(t, "creds",
		"alice:pa signing_key="+kpa+" signature_agent=https://alice.example/.well-known/http-message-signatures-directory\n"+
			"bob:pb signing_key="+kpb+"\ncarol:pc\n")
	h := newHarness(t, harnessOpts{config: func(c *config.Config) {
		withSigning(c, kp)
		c.Auth.CredentialsFile = creds
	}})
	for _, user := range []string{"alice:pa", "bob:pb", "carol:pc"} {
		req := newGet(t, o.URL+"/page?u="+user[:1], "User-Agent", "TestBot/1.0",
			"Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user)))
		if resp, _ := do(t, h.client, req); resp.StatusCode != 200 {
			t.Fatalf("%s: %d", user, resp.StatusCode)
		}
	}
	reqs := o.received("/page")
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := reqs[0].Header.Get("Signature-Agent"); !strings.Contains(got, "alice.example") {
		t.Errorf("alice's Signature-Agent %s", got)
	}
	if got := reqs[1].Header.Get("Signature-Agent"); got != `sig1="`+testAgent+`"` {
		t.Errorf("bob's Signature-Agent %s", got)
	}
	verifySigned(t, []signedBy{{reqs[0], "sig1", ka}, {reqs[1], "sig1", kb}, {reqs[2], "sig1", k}})
}

// TestSigningKeyRefused: a key readable by others, or not Ed25519, stops
// the Server from starting, with an error naming the setting and why.
func TestSigningKeyRefused(t *testing.T) {
	_, kp := newSigningKey(t, "wba.pem")
	if err := os.Chmod(kp, 0o644); err != nil {
		t.Fatal(err)
	}
	rsaLike := testsupport.WriteFile(t, "ec.pem", "-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n")
	_ = os.Chmod(rsaLike, 0o600)
	for file, want := range map[string]string{kp: "mode is 0644", rsaLike: "is not an Ed25519 key", kp + ".absent": "cannot read"} {
		cfg := testConfig(t)
		withSigning(&cfg, file)
		_, err := buildServer(t, cfg, enforce.Config{}, Deps{})
		if err == nil || !strings.HasPrefix(err.Error(), "signing.key: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want signing.key: …%s", file, err, want)
		}
	}
}
