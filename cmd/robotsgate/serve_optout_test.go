package main

// serve and the opt-outs beside robots.txt: Content-Usage and TDMRep reach
// the proxy serve builds.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// optOutOrigin serves files (path to body; an empty body is not found)
// and counts the hits on its other pages, which answer "ok".
func optOutOrigin(t *testing.T, files map[string]string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body, ok := files[r.URL.Path]; ok {
			if body == "" {
				http.NotFound(w, r)
				return
			}
			io.WriteString(w, body)
			return
		}
		hits.Add(1)
		io.WriteString(w, "ok")
	}))
	t.Cleanup(origin.Close)
	return origin, &hits
}

// serve -tdmrep enforce reaches the proxy: a train-ai crawler is refused
// a URL the origin's tdmrep.json reserves (through the policy transport
// serve builds), with reason tdm-reserved, before it leaves.
func TestServeTDMRepEnforce(t *testing.T) {
	origin, hits := optOutOrigin(t, map[string]string{
		"/robots.txt":              "User-agent: *\nAllow: /\n",
		"/.well-known/tdmrep.json": `[{"location": "/reserved/", "tdm-reservation": 1, "tdm-policy": "https://p.example/policy"}]`,
	})
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	r := startServe(t, []string{"-audit-log", auditPath, "-tdmrep", "enforce"}, map[string]string{"ROBOTSGATE_PURPOSE": "train-ai"})
	for _, c := range []struct {
		path string
		want int
	}{{"/reserved/a", 403}, {"/open", 200}} {
		code, body := r.get(t, origin.URL+c.path)
		if code != c.want || c.want == 403 && !strings.Contains(body, "tdm-policy: https://p.example/policy") {
			t.Errorf("%s: %d %s", c.path, code, body)
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

// serve -purpose reaches the Enforcer: a URL whose Content-Usage
// disallows the declared purpose is refused before it leaves, with
// reason usage-disallowed; another purpose passes. The tdmrep.json that
// train-ai fetches (tdmrep.mode report) is not found.
func TestServePurposeRefusesUsageDisallowed(t *testing.T) {
	origin, hits := optOutOrigin(t, map[string]string{
		"/robots.txt":              "User-agent: *\nAllow: /\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n",
		"/.well-known/tdmrep.json": "",
	})
	for _, c := range []struct {
		purpose, path string
		want          int
		hits          int64
	}{
		{"train-ai", "/test", 403, 0},
		{"train-ai", "/ai-ok/test", 200, 1},
		{"search", "/test", 200, 1},
	} {
		auditPath := filepath.Join(t.TempDir(), "audit.log")
		hits.Store(0)
		r := startServe(t, []string{"-audit-log", auditPath}, map[string]string{"ROBOTSGATE_PURPOSE": c.purpose})
		code, body := r.get(t, origin.URL+c.path)
		if code != c.want || hits.Load() != c.hits {
			t.Errorf("%s %s: %d (%s), origin hits %d; want %d, %d", c.purpose, c.path, code, body, hits.Load(), c.want, c.hits)
		}
		if code := r.stop(t); code != 0 {
			t.Fatalf("exit code %d; stderr:\n%s", code, r.stderr)
		}
		if c.want == 403 {
			recs := readAudit(t, auditPath)
			if len(recs) != 1 || recs[0]["reason"] != "usage-disallowed" || !strings.Contains(body, "usage-disallowed") {
				t.Errorf("refusal: body %s, audit %v", body, recs)
			}
		}
	}
}
