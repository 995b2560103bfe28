package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/signing"
)

// TestSigningRotationByReload: a reload puts a new signing.key in force
// for forwarded requests and for robotsgate's own fetches, while the key
// directory publishes the old key (signing.publish) beside the new one,
// each signing the directory response; an audit record of a forwarded
// request names the keyid that signed it.
func TestSigningRotationByReload(t *testing.T) {
	o := newSigOrigin(t, false, "User-agent: *\nAllow: /\n")
	o2 := newSigOrigin(t, false, "")
	k1, kp1 := newSigningKey(t, "old.pem")
	k2, kp2 := newSigningKey(t, "new.pem")
	src := &swappable{}
	h := newHarness(t, harnessOpts{load: src.load, config: func(c *config.Config) { withSigning(c, kp1) }})
	base := h.srv.live.Load().cfg
	h.get(t, o.URL+"/before")
	if got := directoryKids(t, h); !slices.Equal(got, []string{k1.ID()}) {
		t.Fatalf("directory before the reload: %v, want [%s]", got, k1.ID())
	}

	next := base
	next.Signing.Key, next.Signing.Publish = kp2, []string{kp1}
	src.set(next, nil)
	if res, err := h.srv.Reload("test"); err != nil || res.Result != ReloadOK {
		t.Fatalf("reload: %+v %v", res, err)
	}
	h.get(t, o.URL+"/after")
	h.get(t, o2.URL+"/page", "X-Test", "1")
	resp := getDirectory(t, h, "crawler.example")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := kidsOf(t, body); !slices.Equal(got, []string{k2.ID(), k1.ID()}) {
		t.Errorf("directory after the reload: %v, want [new old]", got)
	}
	verifySigned(t, []signedBy{
		{one(t, "/before", o.received("/before")), "sig1", k1},
		{one(t, "/after", o.received("/after")), "sig1", k2},
		{one(t, "o2 robots.txt", o2.received("/robots.txt")), "sig1", k2},
	})
	for _, rec := range h.audit.Records(t) {
		if rec["url"] == o2.URL+"/page" && rec["signed_keyid"] != k2.ID() {
			t.Errorf("audit record %v: signed_keyid, want %s", rec, k2.ID())
		}
	}
	t.Run("directory http-message-sig", func(t *testing.T) {
		req := nodeCase{Kind: "request", Method: "GET", TargetURI: "https://crawler.example" + signing.DirectoryPath, Fields: []nodeField{}}
		cases := []nodeCase{}
		for label, k := range map[string]*signing.Key{"binding": k2, "binding2": k1} {
			cases = append(cases, nodeCase{Kind: "directory", Label: label, JWK: jwkOf(k.Public()), Status: resp.StatusCode,
				Fields: fieldsOf(resp.Header), Body: string(body), Request: &req})
		}
		for i, r := range runNode(t, cases) {
			if !r.OK {
				t.Errorf("directory signature %s: %+v", cases[i].Label, r)
			}
		}
	})
}

// getDirectory GETs the key directory from the proxy port (the admin API
// answers requests addressed to robotsgate itself) with Host host.
func getDirectory(t *testing.T, h *harness, host string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+h.addr+signing.DirectoryPath, nil)
	req.Host = host
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != signing.MediaType {
		t.Fatalf("directory: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return resp
}

// directoryKids returns the kids the key directory lists.
func directoryKids(t *testing.T, h *harness) []string {
	resp := getDirectory(t, h, "crawler.example")
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return kidsOf(t, b)
}

func kidsOf(t *testing.T, b []byte) []string {
	var set struct {
		Keys []struct{ Kid, X, Kty, Crv string }
	}
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatalf("directory %s: %v", b, err)
	}
	var out []string
	for _, k := range set.Keys {
		out = append(out, k.Kid)
	}
	return out
}

// TestSigningSessionAfterReload: the requests of an MITM session opened
// before a reload that gives its user another key are signed with the
// new key, and a reload whose key file is unreadable keeps the running
// keys.
func TestSigningSessionAfterReload(t *testing.T) {
	o := newSigOrigin(t, true, "")
	k1, kp1 := newSigningKey(t, "one.pem")
	k2, kp2 := newSigningKey(t, "two.pem")
	creds := filepath.Join(t.TempDir(), "creds")
	writeCreds := func(key string) {
		if err := os.WriteFile(creds, []byte("alice:pw signing_key="+key+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeCreds(kp1)
	cfg := testConfig(t)
	cfg.Signing.Agent = testAgent
	cfg.Auth.CredentialsFile = creds
	allowOrigin(t, &cfg, o.Listener.Addr().String(), o.Certificate())
	src := &swappable{}
	src.set(cfg, nil)
	srv, addr := startServer(t, cfg, enforce.Config{}, Deps{Load: src.load})
	ca, _ := srv.ca()
	roots := x509.NewCertPool()
	roots.AddCert(ca.Leaf)
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr}), TLSClientConfig: &tls.Config{RootCAs: roots},
		ProxyConnectHeader: http.Header{"Proxy-Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("alice:pw"))}}}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	get(t, c, o.URL+"/one")
	writeCreds(kp2)
	if res, err := srv.Reload("test"); err != nil {
		t.Fatalf("reload: %+v %v", res, err)
	}
	get(t, c, o.URL+"/two") // the same MITM session: one CONNECT
	writeCreds(kp2 + ".absent")
	if res, err := srv.Reload("test"); err == nil || !strings.Contains(res.Error, "signing_key=") {
		t.Fatalf("reload with an unreadable key: %+v %v", res, err)
	}
	get(t, c, o.URL+"/three")
	verifySigned(t, []signedBy{
		{one(t, "/one", o.received("/one")), "sig1", k1},
		{one(t, "/two", o.received("/two")), "sig1", k2},
		{one(t, "/three", o.received("/three")), "sig1", k2},
	})
}
