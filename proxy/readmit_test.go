package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// sessionGet sends GET u with c and reports the status, the decision
// header and whether the request went on a connection already open
// (inside the same MITM session).
func sessionGet(t *testing.T, c *http.Client, u string) (status int, decision string, reused bool, err error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
	}))
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", reused, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get(answer.HeaderDecision), reused, nil
}

// TestReloadRevokesOpenSessions: a credential removed by a reload stops
// working in the MITM sessions already open with it (403 access-revoked,
// audited, the session closed), not only for new CONNECTs (407); a
// session whose credential is still accepted goes on; a client network
// removed from auth.allow_cidrs ends its sessions too.
func TestReloadRevokesOpenSessions(t *testing.T) {
	o := newTLSOrigin(t, "User-agent: *\nAllow: /\n")
	cfg := mitmConfig(t, o)
	cfg.Auth.Credentials = []string{"alice:a-pass", "bob:b-pass"}
	src := &swappable{}
	src.set(cfg, nil)
	ab := &memAudit{}
	srv, addr := startServer(t, cfg, enforce.Config{}, Deps{Auditor: audit.New(ab), Load: src.load})
	ca, _ := srv.ca()
	pool := x509.NewCertPool()
	pool.AddCert(ca.Leaf)
	client := func(user, pass string) *http.Client {
		tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr, User: url.UserPassword(user, pass)}),
			TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 1}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr, Timeout: 20 * time.Second}
	}
	alice, bob := client("alice", "a-pass"), client("bob", "b-pass")
	for _, c := range []*http.Client{alice, bob} {
		if st, _, _, err := sessionGet(t, c, o.URL+"/first"); err != nil || st != 200 {
			t.Fatalf("before the reload: %d %v", st, err)
		}
	}

	if st, _, reused, err := sessionGet(t, alice, o.URL+"/second"); err != nil || st != 200 || !reused {
		t.Fatalf("second request: %d reused=%v %v", st, reused, err)
	}
	next := cfg
	next.Auth.Credentials = []string{"bob:b-pass"}
	src.set(next, nil)
	if res, err := srv.Reload("test"); err != nil || !slices.Contains(res.Changed, "auth.credentials") {
		t.Fatalf("reload: %+v %v", res, err)
	}
	st, dec, reused, err := sessionGet(t, alice, o.URL+"/after")
	if err != nil || st != http.StatusForbidden || dec != string(answer.ReasonAccessRevoked) || !reused {
		t.Fatalf("alice's open session after the reload: %d %q reused=%v %v, want 403 access-revoked on the open session", st, dec, reused, err)
	}
	if o.hit("/after") != 0 {
		t.Fatal("a request of a revoked session reached the origin")
	}
	if rec := ab.Find(t, string(answer.ReasonAccessRevoked)); rec == nil || rec["user"] != "alice" {
		t.Fatalf("audit record of the revoked session's request: %v, want one naming user alice", rec)
	}
	// The session is over: the next request needs a new CONNECT, refused.
	st, _, reused, err = sessionGet(t, alice, o.URL+"/again")
	if err == nil && st != http.StatusProxyAuthRequired || reused {
		t.Fatalf("alice after the revoked answer: %d reused=%v %v, want a new CONNECT refused 407", st, reused, err)
	}
	if st, _, reused, err := sessionGet(t, bob, o.URL+"/bob"); err != nil || st != 200 || !reused {
		t.Fatalf("bob's session (credential kept): %d reused=%v %v, want 200 on the open session; audit: %s", st, reused, err, ab.String())
	}

	// A reload that removes the client's network ends bob's session too.
	last := next
	last.Auth.AllowCIDRs = cidrs(t, "192.0.2.0/24")
	last.Auth.AllowOpen = true
	src.set(last, nil)
	if res, err := srv.Reload("test"); err != nil {
		t.Fatalf("reload: %+v %v", res, err)
	}
	st, dec, reused, err = sessionGet(t, bob, o.URL+"/bob2")
	if err != nil || st != http.StatusForbidden || dec != string(answer.ReasonAccessRevoked) || !reused {
		t.Fatalf("bob's session after allow_cidrs changed: %d %q reused=%v %v", st, dec, reused, err)
	}
}
