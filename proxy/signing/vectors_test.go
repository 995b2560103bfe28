package signing

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
)

// vector is one entry of web_bot_auth_architecture_v*.json.
type vector struct {
	Key            json.RawMessage `json:"key"`
	TargetURL      string          `json:"target_url"`
	CreatedMS      int64           `json:"created_ms"`
	ExpiresMS      int64           `json:"expires_ms"`
	Nonce          string          `json:"nonce"`
	Label          string          `json:"label"`
	Signature      string          `json:"signature"`
	SignatureInput string          `json:"signature_input"`
	Agent          string          `json:"signature_agent"`
	AgentKey       string          `json:"signature_agent_key"`
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// vectorSignature builds, with this package's code, the signature a
// vector describes: @authority of its target URL, and its Signature-Agent
// (a member keyed AgentKey, or the legacy String covered whole).
func vectorSignature(t *testing.T, v vector, keyid, alg string) *signature {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, v.TargetURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := authority(r.URL.Scheme, r.URL.Host)
	if err != nil {
		t.Fatal(err)
	}
	sg := &signature{label: v.Label}
	sg.add(component{name: "@authority"}, auth)
	if v.Agent != "" {
		d, err := httpsfv.UnmarshalDictionary([]string{v.Agent})
		if v.AgentKey != "" && err == nil {
			m, _ := d.Get(v.AgentKey)
			val, _ := httpsfv.Marshal(m.(httpsfv.Item))
			sg.add(component{name: "signature-agent", key: v.AgentKey}, val)
		} else {
			sg.add(component{name: "signature-agent"}, strings.TrimSpace(v.Agent))
		}
	}
	sg.params = requestParams(time.UnixMilli(v.CreatedMS), time.UnixMilli(v.ExpiresMS), keyid, v.Nonce)
	sg.params.Add("alg", alg) // the vectors' RSA keys: rsa-pss-sha512
	return sg
}

// TestArchitectureVectors reproduces every vector of the Web Bot Auth
// reference implementation: the Signature-Input byte for byte for all, the
// Signature byte for byte for Ed25519 (deterministic), and for RSA-PSS
// (randomised) a verification of the published signature over the base
// this package builds.
func TestArchitectureVectors(t *testing.T) {
	for _, file := range []string{"web_bot_auth_architecture_v1.json", "web_bot_auth_architecture_v2.json"} {
		var vs []vector
		readJSON(t, file, &vs)
		if len(vs) != 4 {
			t.Fatalf("%s: %d vectors, want 4", file, len(vs))
		}
		for _, v := range vs {
			var kty struct{ Kty string }
			_ = json.Unmarshal(v.Key, &kty)
			t.Run(file+"/"+kty.Kty+"/"+v.Label, func(t *testing.T) {
				if kty.Kty == "RSA" {
					checkRSAVector(t, v)
					return
				}
				k, err := ParseKey(v.Key)
				if err != nil {
					t.Fatal(err)
				}
				sg := vectorSignature(t, v, k.ID(), "ed25519")
				f, _, err := sg.sign(k.priv)
				if err != nil {
					t.Fatal(err)
				}
				if f.input != v.SignatureInput {
					t.Errorf("Signature-Input\n got %s\nwant %s", f.input, v.SignatureInput)
				}
				if f.signature != v.Signature {
					t.Errorf("Signature\n got %s\nwant %s", f.signature, v.Signature)
				}
			})
		}
	}
}

// checkRSAVector checks an RSA-PSS vector: its Signature-Input byte for
// byte, and its signature against the base built here.
func checkRSAVector(t *testing.T, v vector) {
	var j struct{ N, E string }
	if err := json.Unmarshal(v.Key, &j); err != nil {
		t.Fatal(err)
	}
	n, _ := base64.RawURLEncoding.DecodeString(j.N)
	e, _ := base64.RawURLEncoding.DecodeString(j.E)
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	sg := vectorSignature(t, v, "oD0HwocPBSfpNy5W3bpJeyFGY_IQ_YpqxSjQ3Yd-CLA", "rsa-pss-sha512")
	il, _, err := sg.paramsValue()
	if err != nil {
		t.Fatal(err)
	}
	d := httpsfv.NewDictionary()
	d.Add(sg.label, il)
	if in, _ := httpsfv.Marshal(d); in != v.SignatureInput {
		t.Errorf("Signature-Input\n got %s\nwant %s", in, v.SignatureInput)
	}
	base, err := sg.base()
	if err != nil {
		t.Fatal(err)
	}
	sd, err := httpsfv.UnmarshalDictionary([]string{v.Signature})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := sd.Get(v.Label)
	digest := sha512.Sum512([]byte(base))
	err = rsa.VerifyPSS(pub, crypto.SHA512, digest[:], m.(httpsfv.Item).Value.([]byte), &rsa.PSSOptions{SaltLength: 64})
	if err != nil {
		t.Errorf("the vector's RSA-PSS signature does not verify over the base built here: %v\n%s", err, base)
	}
}

// TestRFC9421B26 reproduces RFC 9421 Appendix B.2.6, "Signing a Request
// using ed25519", byte for byte: base, Signature-Input and Signature.
func TestRFC9421B26(t *testing.T) {
	var k *Key
	b, err := os.ReadFile("testdata/ed25519.json")
	if err != nil {
		t.Fatal(err)
	}
	if k, err = ParseKey(b); err != nil {
		t.Fatal(err)
	}
	r, _ := http.NewRequest(http.MethodPost, "http://example.com/foo?param=Value&Pet=dog", strings.NewReader(`{"hello": "world"}`))
	r.Header.Set("Date", "Tue, 20 Apr 2021 02:07:55 GMT")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Content-Length", "18")
	auth, _ := authority(r.URL.Scheme, r.URL.Host)
	sg := &signature{label: "sig-b26"}
	sg.add(component{name: "date"}, r.Header.Get("Date"))
	sg.add(component{name: "@method"}, r.Method)
	sg.add(component{name: "@path"}, r.URL.Path)
	sg.add(component{name: "@authority"}, auth)
	sg.add(component{name: "content-type"}, r.Header.Get("Content-Type"))
	sg.add(component{name: "content-length"}, r.Header.Get("Content-Length"))
	sg.params = httpsfv.NewParams()
	sg.params.Add("created", int64(1618884473))
	sg.params.Add("keyid", "test-key-ed25519")
	f, base, err := sg.sign(k.priv)
	if err != nil {
		t.Fatal(err)
	}
	wantBase := `"date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@authority": example.com
"content-type": application/json
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`
	for _, c := range []struct{ what, got, want string }{
		{"base", base, wantBase},
		{"Signature-Input", f.input, `sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`},
		{"Signature", f.signature, `sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:`},
	} {
		if c.got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.what, c.got, c.want)
		}
	}
}

// TestDirectoryVectorE23 reproduces draft-ietf-webbotauth-httpsig-
// protocol-01 Appendix E.2.3, the signed directory response: body,
// Content-Digest, Signature-Input and Signature byte for byte.
func TestDirectoryVectorE23(t *testing.T) {
	b, _ := os.ReadFile("testdata/ed25519.json")
	k, err := ParseKey(b)
	if err != nil {
		t.Fatal(err)
	}
	body, err := Directory([]*Key{k})
	if err != nil {
		t.Fatal(err)
	}
	wantBody := `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig"}]}`
	if string(body) != wantBody {
		t.Fatalf("directory\n got %s\nwant %s", body, wantBody)
	}
	h := http.Header{}
	created := time.Unix(1735689600, 0)
	if err := SignDirectory(h, "signature-agent.test", body, []*Key{k}, created, time.Unix(4889289600, 0).Sub(created)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ field, want string }{
		{"Content-Digest", `sha-256=:CADMT2aBdV/rqQr/NIru64ERQkCobVvllA4V0fLFDu0=:`},
		{"Signature-Input", `binding=("@authority";req "content-digest");created=1735689600;expires=4889289600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";tag="http-message-signatures-directory"`},
		{"Signature", `binding=:l6P8R67tm3kujAxbHWio7ll01qrEZ0dKD/WWlGhNYEmTnFZM8Wt0VQ9zqGfvo7T/UMkBxsigzChM1Gpz7gOVBg==:`},
	} {
		if got := h.Get(c.field); got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.field, got, c.want)
		}
	}
}

// TestThumbprintVectors checks the keyid of every Ed25519 key of the
// thumbprint vectors (RFC 8037 A.3) and of the RFC 9421 test key.
func TestThumbprintVectors(t *testing.T) {
	var vs []struct{ Name, JWK, Thumbprint string }
	readJSON(t, "thumbprint_vectors.json", &vs)
	n := 0
	for _, v := range vs {
		if !strings.Contains(v.JWK, `"Ed25519"`) {
			continue // RSA and EC keys: robotsgate signs with Ed25519 only
		}
		n++
		k, err := ParseKey([]byte(v.JWK))
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		if k.ID() != v.Thumbprint {
			t.Errorf("%s: thumbprint %s, want %s", v.Name, k.ID(), v.Thumbprint)
		}
	}
	b, _ := os.ReadFile("testdata/ed25519.json")
	k, err := ParseKey(b)
	if err != nil || k.ID() != "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U" || n == 0 {
		t.Errorf("RFC 9421 key: %v, %v (Ed25519 vectors: %d)", k, err, n)
	}
	if !ed25519.PublicKey(k.pub).Equal(k.priv.Public()) {
		t.Error("public key is not the private key's")
	}
}

// TestSignatureAgentVector: the Signature-Agent robotsgate sends for
// label sig1 is the "directory-default" vector byte for byte; the typed
// members of the other vectors (forbidden by -01) are never sent.
func TestSignatureAgentVector(t *testing.T) {
	var vs []struct{ Name, Header string }
	readJSON(t, "web_bot_auth_signature_agent_v1.json", &vs)
	s := testSigner(t, Options{Agent: "https://signature-agent.test"})
	r, _ := http.NewRequest(http.MethodGet, "https://example.com/", nil)
	if _, err := s.Sign(r); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		got := r.Header.Get("Signature-Agent")
		if v.Name == "directory-default" && got != v.Header {
			t.Errorf("Signature-Agent %s, want %s", got, v.Header)
		}
		if v.Name != "directory-default" && got == v.Header {
			t.Errorf("Signature-Agent %s carries a parameter", got)
		}
	}
}
