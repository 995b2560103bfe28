package proxy

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/dunglas/httpsfv"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// TestUntrustedCertificate502SaysSoFirst: an origin whose certificate
// robotsgate does not trust gets a 502 whose first line says so and names
// https.upstream_roots, in text and JSON, and whose Proxy-Status details
// are the whole explanation, not a cut-off start of the long error.
func TestUntrustedCertificate502SaysSoFirst(t *testing.T) {
	trusted := newTLSOrigin(t, "User-agent: *\nAllow: /\n")
	untrusted, p := startUntrustedOrigin(t, trusted)

	wantHead := "robotsgate: bad gateway: the TLS certificate of " + untrusted.URL + " is not trusted (https.upstream_roots)"
	resp, body := get(t, p.client(p.ca), untrusted.URL+"/page")
	if resp.StatusCode != http.StatusBadGateway || !strings.HasPrefix(body, wantHead+"\n") {
		t.Fatalf("%d, body:\n%s\nwant it to start with %q", resp.StatusCode, body, wantHead)
	}
	if !strings.Contains(body, "reason:   origin-unreachable: "+answer.UntrustedExplanation+"\n") {
		t.Errorf("text body lacks the explanation:\n%s", body)
	}
	list, err := httpsfv.UnmarshalList(resp.Header.Values(answer.HeaderProxyStatus))
	if err != nil || len(list) != 1 {
		t.Fatalf("Proxy-Status %q: %v", resp.Header.Get(answer.HeaderProxyStatus), err)
	}
	item := list[0].(httpsfv.Item)
	errType, _ := item.Params.Get("error")
	details, _ := item.Params.Get("details")
	if errType != httpsfv.Token("tls_certificate_error") || details != "origin-unreachable: "+answer.UntrustedExplanation {
		t.Errorf("Proxy-Status error %v, details %q; want tls_certificate_error and the whole explanation", errType, details)
	}

	resp, body = get(t, p.client(p.ca), untrusted.URL+"/page", "Accept", "application/json")
	var j answer.RefusalBody
	if err := json.Unmarshal([]byte(body), &j); err != nil || resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("%d %v: %s", resp.StatusCode, err, body)
	}
	if j.Error != wantHead || j.Explanation != answer.UntrustedExplanation || !strings.Contains(j.Detail, "x509: certificate signed by unknown authority") {
		t.Errorf("JSON body %+v", j)
	}
}
