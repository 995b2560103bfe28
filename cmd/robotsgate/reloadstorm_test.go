//go:build unix

package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeReloadStormKeepsDeny rewrites the configuration file as cp
// does (truncated, then written) while reloads and requests to a site
// the file denies go on, reloading also at the moment the file is empty:
// every request must be refused site-denied, and the reloads of the
// empty file refused.
func TestServeReloadStormKeepsDeny(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "robotsgate.yaml")
	content := []byte("audit_log: " + filepath.Join(dir, "audit.log") + "\nsites:\n  - match: 127.0.0.1\n    policy: deny\n")
	writeConf(t, conf, string(content))
	origin := newRobotsOrigin(t, "User-agent: *\nAllow: /\n")
	r := startServe(t, []string{"-config", conf}, map[string]string{"ROBOTSGATE_ADMIN_TOKEN": "tok"})
	s := &reloadSetup{r: r, adminURL: "http://" + r.addr.String(), adminAuth: "Bearer tok"}

	// check asks for a page of the denied site and reports whether it was
	// refused site-denied.
	check := func() (bool, string) {
		resp, err := r.client.Get(origin + "/page")
		if err != nil {
			return false, err.Error()
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusForbidden && resp.Header.Get("X-Robotsgate-Decision") == "site-denied",
			resp.Status + " " + resp.Header.Get("X-Robotsgate-Decision")
	}
	const cycles, concurrent = 40, 200
	done := make(chan []string, 1)
	stop := make(chan struct{})
	go func() {
		var bad []string
		for i := 0; i < concurrent; i++ {
			select {
			case <-stop:
				done <- bad
				return
			default:
			}
			if ok, got := check(); !ok {
				bad = append(bad, got)
			}
		}
		done <- bad
	}()
	emptyRefused := 0
	for i := 0; i < cycles; i++ {
		f, err := os.OpenFile(conf, os.O_WRONLY|os.O_TRUNC, 0o600) // cp's first step
		if err != nil {
			t.Fatal(err)
		}
		if code, res := s.reload(t, s.adminAuth); code == http.StatusUnprocessableEntity && res["result"] == "invalid" {
			emptyRefused++
		}
		if ok, got := check(); !ok {
			t.Errorf("cycle %d, the file empty: a request to the denied site got %s", i, got)
		}
		if _, err := f.Write(content); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if code, res := s.reload(t, s.adminAuth); code != http.StatusOK {
			t.Fatalf("cycle %d, reload of the whole file: %d %v", i, code, res)
		}
	}
	close(stop)
	if bad := <-done; len(bad) > 0 {
		t.Errorf("%d requests to the denied site were not refused site-denied during the storm: %v", len(bad), bad)
	}
	if emptyRefused != cycles {
		t.Errorf("%d of %d reloads of the empty file were refused, want all", emptyRefused, cycles)
	}

	// A reload that removes the deny on purpose is applied, and said
	// loudly: a warning with the counts, the patterns in the answer.
	writeConf(t, conf, "audit_log: "+filepath.Join(dir, "audit.log")+"\n")
	if code, res := s.reload(t, s.adminAuth); code != http.StatusOK || toJSON(res["removed_denies"]) != `["127.0.0.1"]` {
		t.Fatalf("reload removing the deny: %d %v", code, res)
	}
	log := r.stderr.String()
	for _, want := range []string{`"level":"warn"`, `"denies_removed":1`, `"denies_before":1`, `"denies_after":0`, "removed site denies"} {
		if !strings.Contains(log, want) {
			t.Errorf("operator log lacks %s:\n%s", want, log)
		}
	}
}
