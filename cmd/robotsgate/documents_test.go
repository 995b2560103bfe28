package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// TestServeKeepsRobotsInForce: a crawl through robotsgate, the origin's
// robots.txt changed in between; the audit records name each version's
// hash, /v1/robots shows the current one, and "audit -document" prints
// each version.
func TestServeKeepsRobotsInForce(t *testing.T) {
	v1, v2 := "User-agent: *\nDisallow: /private\n", "User-agent: *\nDisallow: /secret\n"
	var robots atomic.Value
	robots.Store(v1)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, robots.Load().(string))
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(origin.Close)
	auditPath, dataDir := filepath.Join(t.TempDir(), "audit.log"), t.TempDir()
	r := startServe(t, []string{"-audit-log", auditPath, "-data-dir", dataDir, "-admin-token", "t0ken-for-the-test"}, nil)
	get := func(path string) {
		t.Helper()
		resp, err := r.client.Get(origin.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("%s: %d, want 403", path, resp.StatusCode)
		}
	}
	admin := "http://" + r.addr.String() + "/v1/robots?origin=" + url.QueryEscape(origin.URL)
	get("/private/a")
	if shown := adminSHA(t, admin); shown != hexSum(v1) {
		t.Fatalf("/v1/robots shows sha256 %q, want %q", shown, hexSum(v1))
	}
	robots.Store(v2)
	req, _ := http.NewRequest(http.MethodDelete, admin, nil)
	req.Header.Set("Authorization", "Bearer t0ken-for-the-test")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("purge: %v %v", resp, err)
	}
	get("/secret/b")
	if code := r.stop(t); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr)
	}
	recs := readAudit(t, auditPath)
	if len(recs) != 2 || recs[0]["robots_sha256"] != hexSum(v1) || recs[1]["robots_sha256"] != hexSum(v2) {
		t.Fatalf("audit records %v, want robots_sha256 %s then %s", recs, hexSum(v1), hexSum(v2))
	}
	for _, want := range []string{v1, v2} {
		var out, errb bytes.Buffer
		code := runAudit(context.Background(), []string{"-document", hexSum(want)[:12]}, testsupport.EnvMap(map[string]string{"ROBOTSGATE_DATA_DIR": dataDir}),
			strings.NewReader(""), &out, &errb, auditEnv{now: time.Now})
		if code != 0 || out.String() != want {
			t.Fatalf("audit -document %s: exit %d, %q (stderr %s), want %q", hexSum(want)[:12], code, out.String(), errb.String(), want)
		}
	}
}

func hexSum(s string) string {
	b := sha256.Sum256([]byte(s))
	return hex.EncodeToString(b[:])
}

// adminSHA returns the sha256 GET url (a /v1/robots query) answers.
func adminSHA(t *testing.T, url string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer t0ken-for-the-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		SHA256 string `json:"sha256"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/v1/robots: %d %v", resp.StatusCode, err)
	}
	return e.SHA256
}
