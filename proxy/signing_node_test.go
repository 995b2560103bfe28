package proxy

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/signing"
)

// The independent verifiers of robotsgate's signatures: the Go one of
// internal/testsupport, written from RFC 9421, and the npm package
// http-message-sig 0.3.0 (scripts/clients/node/verify-signature.mjs).

// nodeVerifierDir is where verify-signature.mjs and its node_modules are.
const nodeVerifierDir = "../scripts/clients/node"

// nodeCase is one case of verify-signature.mjs.
type nodeCase struct {
	Kind      string            `json:"kind"`
	Label     string            `json:"label"`
	JWK       map[string]string `json:"jwk"`
	Method    string            `json:"method,omitempty"`
	TargetURI string            `json:"targetUri,omitempty"`
	Fields    []nodeField       `json:"fields"`
	Status    int               `json:"status,omitempty"`
	Body      string            `json:"body,omitempty"`
	Request   *nodeCase         `json:"request,omitempty"`
}

type nodeField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type nodeResult struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	KeyID string `json:"keyid"`
}

// fieldsOf lists h's field lines, sorted by name, each name's lines in
// order.
func fieldsOf(h http.Header) []nodeField {
	names := make([]string, 0, len(h))
	for n := range h {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []nodeField
	for _, n := range names {
		for _, v := range h[n] {
			out = append(out, nodeField{Name: strings.ToLower(n), Value: v})
		}
	}
	return out
}

func jwkOf(pub ed25519.PublicKey) map[string]string {
	return map[string]string{"kty": "OKP", "crv": "Ed25519", "x": base64.RawURLEncoding.EncodeToString(pub)}
}

// requestCase is the node case of a received request, signed under label.
func requestCase(r testsupport.SigRequest, label string, pub ed25519.PublicKey) nodeCase {
	return nodeCase{Kind: "request", Label: label, JWK: jwkOf(pub), Method: r.Method,
		TargetURI: r.Scheme + "://" + r.Authority + r.Target, Fields: fieldsOf(r.Header)}
}

// runNode runs verify-signature.mjs on cases and returns its results.
func runNode(t *testing.T, cases []nodeCase) []nodeResult {
	t.Helper()
	node := testsupport.Node(t, "the node verifier", testsupport.NodeModuleMissing(nodeVerifierDir, "http-message-sig"))
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "verify-signature.mjs")
	cmd.Dir = nodeVerifierDir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node verify-signature.mjs: %v\n%s", err, stderr.String())
	}
	var res []nodeResult
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(cases) {
		t.Fatalf("node verify-signature.mjs answered %s (%v)", out, err)
	}
	return res
}

// signedBy is a request expected to carry the signature label of key.
type signedBy struct {
	req   testsupport.SigRequest
	label string
	key   *signing.Key
}

// verifySigned checks every request of want with the Go verifier, then,
// in a subtest, with http-message-sig.
func verifySigned(t *testing.T, want []signedBy) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("no signed request to verify")
	}
	cases := make([]nodeCase, len(want))
	for i, w := range want {
		v, err := testsupport.VerifyWebBotAuth(w.req, w.label, w.key.Public(), time.Now())
		if err != nil {
			t.Errorf("%s %s: Go verifier: %v\nheaders %v\nbase:\n%s", w.req.Method, w.req.Target, err, w.req.Header, v.Base)
		}
		cases[i] = requestCase(w.req, w.label, w.key.Public())
	}
	t.Run("http-message-sig", func(t *testing.T) {
		for i, r := range runNode(t, cases) {
			if !r.OK || r.KeyID != want[i].key.ID() {
				t.Errorf("%s %s: http-message-sig: %+v", want[i].req.Method, want[i].req.Target, r)
			}
		}
	})
}
