package signing

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/internal/websig"
)

// testNow is the fixed clock of the tests.
var testNow = time.Unix(1_800_000_000, 0)

// testKey is the RFC 9421 Ed25519 test key.
func testKey(t *testing.T) *Key {
	t.Helper()
	b, err := os.ReadFile("testdata/ed25519.json")
	if err != nil {
		t.Fatal(err)
	}
	k, err := ParseKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// testSigner is a Signer of the test key with a fixed clock and nonce;
// o's zero fields get defaults.
func testSigner(t *testing.T, o Options) *Signer {
	t.Helper()
	if o.Agent == "" {
		o.Agent = "https://crawler.example/.well-known/http-message-signatures-directory"
	}
	if o.Expires == 0 {
		o.Expires = 5 * time.Minute
	}
	o.Now = func() time.Time { return testNow }
	o.Nonce = func() (string, error) { return "bm9uY2U=", nil }
	s, err := NewSigner(testKey(t), o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// verify checks r's signature label with the independent verifier of
// internal/testsupport.
func verify(t *testing.T, r *http.Request, label string) testsupport.VerifiedSig {
	t.Helper()
	req := testsupport.SigRequest{Method: r.Method, Scheme: r.URL.Scheme, Authority: r.Host, Target: r.URL.RequestURI(), Header: r.Header}
	if req.Authority == "" {
		req.Authority = r.URL.Host
	}
	v, err := testsupport.VerifyWebBotAuth(req, label, testKey(t).pub, testNow)
	if err != nil {
		t.Fatalf("verify %s: %v\nheaders: %v\nbase:\n%s", label, err, r.Header, v.Base)
	}
	return v
}

func TestSignVerifies(t *testing.T) {
	for _, c := range []struct {
		name       string
		url        string
		components []string
		wantBase   string
	}{
		{"defaults", "https://Example.COM:443/a?b=c", nil,
			"\"@authority\": example.com\n\"signature-agent\";key=\"sig1\": \"https://crawler.example/.well-known/http-message-signatures-directory\"\n"},
		{"all components", "http://example.com:8080/p%20q?x=1&y", []string{"@method", "@path", "@query", "@target-uri"},
			"\"@authority\": example.com:8080\n\"signature-agent\";key=\"sig1\": \"https://crawler.example/.well-known/http-message-signatures-directory\"\n" +
				"\"@method\": GET\n\"@path\": /p%20q\n\"@query\": ?x=1&y\n\"@target-uri\": http://example.com:8080/p%20q?x=1&y\n"},
		{"no query", "https://[::1]:443", []string{"@path", "@query", "@target-uri"},
			"\"@authority\": [::1]\n\"signature-agent\";key=\"sig1\": \"https://crawler.example/.well-known/http-message-signatures-directory\"\n" +
				"\"@path\": /\n\"@query\": ?\n\"@target-uri\": https://[::1]/\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := testSigner(t, Options{Components: c.components})
			r, err := http.NewRequest(http.MethodGet, c.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			label, err := s.Sign(r)
			if err != nil || label != "sig1" {
				t.Fatalf("Sign: %q, %v", label, err)
			}
			v := verify(t, r, "sig1")
			if !strings.HasPrefix(v.Base, c.wantBase) {
				t.Errorf("base\n%s\nwant prefix\n%s", v.Base, c.wantBase)
			}
			wantInput := `;created=1800000000;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1800000300;nonce="bm9uY2U=";tag="web-bot-auth"`
			if in := r.Header.Get("Signature-Input"); !strings.HasSuffix(in, wantInput) || !strings.HasPrefix(in, `sig1=("@authority" "signature-agent";key="sig1"`) {
				t.Errorf("Signature-Input %s", in)
			}
		})
	}
}

// TestSignKeepsClientSignature: a request that carries the client's own
// signature keeps it byte for byte, and robotsgate's takes a label that
// none of its fields uses.
func TestSignKeepsClientSignature(t *testing.T) {
	s := testSigner(t, Options{})
	r, _ := http.NewRequest(http.MethodGet, "https://example.com/", nil)
	r.Header.Set("Signature-Input", `sig1=("@authority");created=1`)
	r.Header.Set("Signature", `sig1=:AAAA:, sig3=:AAAA:`)
	r.Header.Set("Signature-Agent", `sig2="https://other.example"`)
	label, err := s.Sign(r)
	if err != nil || label != "sig4" {
		t.Fatalf("label %q, %v; want sig4", label, err)
	}
	if got := r.Header.Values("Signature"); len(got) != 2 || got[0] != `sig1=:AAAA:, sig3=:AAAA:` {
		t.Errorf("the client's Signature line changed: %q", got)
	}
	v := verify(t, r, "sig4")
	if v.Agent != `"https://crawler.example/.well-known/http-message-signatures-directory"` {
		t.Errorf("agent %s", v.Agent)
	}
}

func TestSignConflicts(t *testing.T) {
	for _, c := range []struct {
		name   string
		legacy bool
		field  string
		value  string
	}{
		{"legacy agent sent by the client, dictionary configured", false, "Signature-Agent", `"https://other.example"`},
		{"any agent sent, legacy configured", true, "Signature-Agent", `a="https://other.example"`},
		{"malformed Signature", false, "Signature", `sig1=:not base64`},
		{"malformed Signature-Input", false, "Signature-Input", `(`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := testSigner(t, Options{LegacyAgent: c.legacy})
			r, _ := http.NewRequest(http.MethodGet, "https://example.com/", nil)
			r.Header.Set(c.field, c.value)
			before := r.Header.Clone()
			if _, err := s.Sign(r); !errors.Is(err, ErrConflict) {
				t.Fatalf("err %v, want ErrConflict", err)
			}
			if len(r.Header) != len(before) || r.Header.Get(c.field) != c.value {
				t.Errorf("headers changed: %v", r.Header)
			}
		})
	}
}

func TestSignLegacyAgent(t *testing.T) {
	s := testSigner(t, Options{LegacyAgent: true, Agent: "https://signature-agent.test"})
	r, _ := http.NewRequest(http.MethodGet, "https://example.com/path", nil)
	if _, err := s.Sign(r); err != nil {
		t.Fatal(err)
	}
	if got := r.Header.Get("Signature-Agent"); got != `"https://signature-agent.test"` {
		t.Errorf("Signature-Agent %s", got)
	}
	if in := r.Header.Get("Signature-Input"); !strings.HasPrefix(in, `sig1=("@authority" "signature-agent");`) {
		t.Errorf("Signature-Input %s", in)
	}
}

func TestNewSignerRefuses(t *testing.T) {
	k := testKey(t)
	pub := newPublicKey(k.pub)
	for _, c := range []struct {
		name string
		k    *Key
		o    Options
	}{
		{"public key", pub, Options{Agent: "https://a.example", Expires: time.Minute}},
		{"http agent", k, Options{Agent: "http://a.example", Expires: time.Minute}},
		{"relative agent", k, Options{Agent: "/dir", Expires: time.Minute}},
		{"agent with quote", k, Options{Agent: `https://a.example/"`, Expires: time.Minute}},
		{"agent with user", k, Options{Agent: "https://u@a.example/", Expires: time.Minute}},
		{"expires 0", k, Options{Agent: "https://a.example", Expires: 0}},
		{"expires over 24h", k, Options{Agent: "https://a.example", Expires: 25 * time.Hour}},
		{"unknown component", k, Options{Agent: "https://a.example", Expires: time.Minute, Components: []string{"@status"}}},
		{"duplicate component", k, Options{Agent: "https://a.example", Expires: time.Minute, Components: []string{"@path", "@path"}}},
	} {
		if _, err := NewSigner(c.k, c.o); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}

// TestHolderTransport: the transport signs with the Signer in force when
// the request leaves, never changes the caller's request, and sends an
// unsignable request unsigned.
func TestHolderTransport(t *testing.T) {
	var got []*http.Request
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = append(got, r)
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	})
	var h Holder
	var results []string
	tr := h.Transport(next)
	r, _ := http.NewRequest(http.MethodGet, "https://example.com/robots.txt", nil)
	if _, err := tr.RoundTrip(r); err != nil {
		t.Fatal(err)
	}
	h.Set(testSigner(t, Options{}), func(res string) { results = append(results, res) })
	if _, err := tr.RoundTrip(r); err != nil {
		t.Fatal(err)
	}
	bad, _ := http.NewRequest(http.MethodGet, "https://example.com/robots.txt", nil)
	bad.Header.Set("Signature", "(")
	if _, err := tr.RoundTrip(bad); err != nil {
		t.Fatal(err)
	}
	if got[0].Header.Get("Signature") != "" || r.Header.Get("Signature") != "" {
		t.Error("signed without a Signer, or changed the caller's request")
	}
	verify(t, got[1], "sig1")
	if strings.Join(results, ",") != "signed,skipped" || got[2].Header.Get("Signature") != "(" {
		t.Errorf("results %v, third request's Signature %q", results, got[2].Header.Get("Signature"))
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	gen := filepath.Join(dir, "gen.pem")
	k, err := GenerateKey(gen, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(gen); fi.Mode().Perm() != 0o600 {
		t.Errorf("generated key mode %v", fi.Mode())
	}
	if _, err := GenerateKey(gen, nil); err == nil {
		t.Error("GenerateKey overwrote a file")
	}
	if back, err := LoadKey(gen); err != nil || back.ID() != k.ID() {
		t.Fatalf("LoadKey: %v", err)
	}
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(p, mode)
		return p
	}
	jwkKey, _ := os.ReadFile("testdata/ed25519.json")
	rsaKey, _ := os.ReadFile("testdata/rsapss.json")
	pemKey, _ := os.ReadFile(gen)
	if k, err := LoadKey(write("jwk.json", string(jwkKey), 0o600)); err != nil || k.ID() != "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U" {
		t.Errorf("JWK: %v", err)
	}
	for _, c := range []struct {
		name, content, want string
		mode                os.FileMode
	}{
		{"group-readable PEM", string(pemKey), "mode is 0640", 0o640},
		{"world-readable JWK", string(jwkKey), "mode is 0604", 0o604},
		{"RSA JWK", string(rsaKey), "not an Ed25519 key", 0o600},
		{"public JWK", `{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}`, "public key", 0o600},
		{"x of another key", strings.Replace(string(jwkKey), `"x": "J`, `"x": "K`, 1), "not the public key", 0o600},
		{"garbage", "hello", "neither PEM nor a JWK", 0o600},
		{"EC PEM", ecPEM(t), "not Ed25519", 0o600},
	} {
		_, err := LoadKey(write(strings.ReplaceAll(c.name, " ", "-"), c.content, c.mode))
		var ke *KeyError
		if !errors.As(err, &ke) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a KeyError with %q", c.name, err, c.want)
		}
	}
	if _, err := LoadKey(filepath.Join(dir, "absent")); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Errorf("absent file: %v", err)
	}
	if k, err := LoadPublishedKey(write("pub.json", `{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}`, 0o644)); err != nil || k.Private() {
		t.Errorf("public key to publish: %v", err)
	}
}

// ecPEM returns a P-256 PKCS#8 private key in PEM, not Ed25519.
func ecPEM(t *testing.T) string {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// BenchmarkSign is the cost of signing one forwarded request (default
// components; all four extra components).
func BenchmarkSign(b *testing.B) {
	k, err := ParseKey([]byte(`{"kty":"OKP","crv":"Ed25519","d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}`))
	if err != nil {
		b.Fatal(err)
	}
	for _, comps := range [][]string{nil, websig.ExtraComponents()} {
		s, err := NewSigner(k, Options{Agent: "https://crawler.example/.well-known/http-message-signatures-directory", Expires: 5 * time.Minute, Components: comps})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.Join(append([]string{"authority"}, comps...), "+"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, _ := http.NewRequest(http.MethodGet, "https://example.com/path/to/resource?q=1", nil)
				if _, err := s.Sign(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
