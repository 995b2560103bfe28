package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy"
)

// serve -purpose reaches the Enforcer: a URL whose Content-Usage
// disallows the declared purpose is refused before it leaves, with
// reason usage-disallowed; another purpose passes.
func TestServePurposeRefusesUsageDisallowed(t *testing.T) {
	var hits atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nAllow: /\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n")
			return
		}
		if r.URL.Path == "/.well-known/tdmrep.json" { // fetched for train-ai (tdmrep.mode report)
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		io.WriteString(w, "ok")
	}))
	t.Cleanup(origin.Close)
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
		resp, err := r.client.Get(origin.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want || hits.Load() != c.hits {
			t.Errorf("%s %s: %d (%s), origin hits %d; want %d, %d", c.purpose, c.path, resp.StatusCode, body, hits.Load(), c.want, c.hits)
		}
		if code := r.stop(t); code != 0 {
			t.Fatalf("exit code %d; stderr:\n%s", code, r.stderr)
		}
		if c.want == 403 {
			recs := readAudit(t, auditPath)
			if len(recs) != 1 || recs[0]["reason"] != "usage-disallowed" || !strings.Contains(string(body), "usage-disallowed") {
				t.Errorf("refusal: body %s, audit %v", body, recs)
			}
		}
	}
}

// usage.unknown reaches the Enforcer's configuration.
func TestEnforceConfigUsage(t *testing.T) {
	cfg := config.Default()
	if ec := proxy.EnforceConfig(cfg, nil, nil, nil, zerolog.Nop()); ec.UsageUnknownDeny {
		t.Errorf("defaults: %v", ec.UsageUnknownDeny)
	}
	cfg.Usage.Unknown = config.UsageUnknownDeny
	if ec := proxy.EnforceConfig(cfg, nil, nil, nil, zerolog.Nop()); !ec.UsageUnknownDeny {
		t.Errorf("deny: %v", ec.UsageUnknownDeny)
	}
}
