package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// serve -tdmrep enforce reaches the proxy: a train-ai crawler is refused
// a URL the origin's tdmrep.json reserves (through the policy transport
// serve builds), with reason tdm-reserved, before it leaves.
func TestServeTDMRepEnforce(t *testing.T) {
	var hits atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/.well-known/tdmrep.json":
			io.WriteString(w, `[{"location": "/reserved/", "tdm-reservation": 1, "tdm-policy": "https://p.example/policy"}]`)
		default:
			hits.Add(1)
			io.WriteString(w, "ok")
		}
	}))
	t.Cleanup(origin.Close)
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	r := startServe(t, []string{"-audit-log", auditPath, "-tdmrep", "enforce"}, map[string]string{"ROBOTSGATE_PURPOSE": "train-ai"})
	for _, c := range []struct {
		path string
		want int
	}{{"/reserved/a", 403}, {"/open", 200}} {
		resp, err := r.client.Get(origin.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want || c.want == 403 && !strings.Contains(string(body), "tdm-policy: https://p.example/policy") {
			t.Errorf("%s: %d %s", c.path, resp.StatusCode, body)
		}
	}
	if code := r.stop(t); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, r.stderr)
	}
	if hits.Load() != 1 {
		t.Errorf("origin hits %d, want 1 (/open)", hits.Load())
	}
	if recs := readAudit(t, auditPath); len(recs) != 1 || recs[0]["reason"] != "tdm-reserved" {
		t.Errorf("audit %v", recs)
	}
}
