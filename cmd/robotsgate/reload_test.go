//go:build unix

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// reloadRobots disallows everything for NewBot, /private for the others.
const reloadRobots = "User-agent: NewBot\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n"

// reloadSetup is a serve with a configuration file and a credentials
// file that the test rewrites.
type reloadSetup struct {
	r                   *running
	conf, creds, audit  string
	origin              string
	adminURL, adminAuth string
}

func startReloadServe(t *testing.T) *reloadSetup {
	t.Helper()
	dir := t.TempDir()
	s := &reloadSetup{conf: filepath.Join(dir, "robotsgate.yaml"), creds: filepath.Join(dir, "creds"), audit: filepath.Join(dir, "audit.log")}
	origin := newRobotsOrigin(t, reloadRobots)
	s.origin = origin
	writeConf(t, s.creds, "crawler:secret1\n")
	s.write(t, "agent: OldBot\n")
	s.r = startServe(t, []string{"-config", s.conf}, map[string]string{"ROBOTSGATE_ADMIN_TOKEN": "tok"})
	s.adminURL, s.adminAuth = "http://"+s.r.addr.String(), "Bearer tok"
	return s
}

// write writes the configuration file: extra plus the audit log and
// credentials file.
func (s *reloadSetup) write(t *testing.T, extra string) {
	writeConf(t, s.conf, extra+"audit: all\naudit_log: "+s.audit+"\nauth:\n  credentials_file: "+s.creds+"\n")
}

func writeConf(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func newRobotsOrigin(t *testing.T, robots string) string {
	return newCountingOrigin(t, robots, nil).URL
}

// status GETs u through the proxy with the credentials user:pass.
func (s *reloadSetup) status(t *testing.T, u, user, pass string) int {
	t.Helper()
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: s.r.addr.String(), User: url.UserPassword(user, pass)})}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	resp, err := (&http.Client{Transport: tr, Timeout: testTimeout}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// reload POSTs /v1/reload and returns the status and answer.
func (s *reloadSetup) reload(t *testing.T, auth string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.adminURL+"/v1/reload", nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// reloads returns the value of robotsgate_config_reloads_total{result}.
func (s *reloadSetup) reloads(t *testing.T, result string) string {
	t.Helper()
	resp, err := http.Get(s.adminURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	prefix := `robotsgate_config_reloads_total{result="` + result + `"} `
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, prefix) {
			return strings.TrimPrefix(line, prefix)
		}
	}
	return ""
}

// TestServeReloadSIGHUP: SIGHUP re-reads the file; new requests see the
// new agent, an invalid file keeps the running configuration.
func TestServeReloadSIGHUP(t *testing.T) {
	s := startReloadServe(t)
	if got := s.status(t, s.origin+"/page", "crawler", "secret1"); got != 200 {
		t.Fatalf("before the reload (OldBot): %d", got)
	}
	s.write(t, "agent: NewBot\n")
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	testsupport.WaitFor(t, "the SIGHUP reload", func() bool { return s.reloads(t, "ok") == "1" })
	if got := s.status(t, s.origin+"/page", "crawler", "secret1"); got != 403 {
		t.Fatalf("after the reload (NewBot): %d", got)
	}
	s.write(t, "agent: OtherBot\nmode: sideways\n")
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	testsupport.WaitFor(t, "the invalid SIGHUP reload", func() bool { return s.reloads(t, "invalid") == "1" })
	if got := s.status(t, s.origin+"/page", "crawler", "secret1"); got != 403 {
		t.Fatalf("after an invalid reload: %d, want NewBot's 403 kept", got)
	}
	if log := s.r.stderr.String(); !strings.Contains(log, "configuration reload refused") || !strings.Contains(log, "mode") {
		t.Errorf("operator log lacks the refused reload:\n%s", log)
	}
}

// TestServeReloadPOST: POST /v1/reload needs the token; it re-reads the
// configuration and credentials files, answers what changed and what
// needs a restart, refuses an invalid file with 422 naming the error, and
// audits every reload.
func TestServeReloadPOST(t *testing.T) {
	s := startReloadServe(t)
	if code, _ := s.reload(t, ""); code != http.StatusUnauthorized {
		t.Fatalf("POST without the token: %d", code)
	}
	s.write(t, "agent: NewBot\naudit_max_backups: 3\n")
	writeConf(t, s.creds, "crawler:secret2\n")
	code, res := s.reload(t, s.adminAuth)
	if code != 200 || res["result"] != "ok" || !strings.Contains(toJSON(res["changed"]), "agent") ||
		!strings.Contains(toJSON(res["needs_restart"]), "audit_max_backups") {
		t.Fatalf("reload: %d %v", code, res)
	}
	if got := s.status(t, s.origin+"/page", "crawler", "secret1"); got != http.StatusProxyAuthRequired {
		t.Errorf("old credentials after the reload: %d, want 407", got)
	}
	if got := s.status(t, s.origin+"/page", "crawler", "secret2"); got != 403 {
		t.Errorf("new credentials, NewBot: %d, want 403", got)
	}

	// A site exception added by a reload: the origin is denied from now on.
	s.write(t, "agent: NewBot\nsites:\n  - match: 127.0.0.1\n    policy: deny\n")
	if code, res = s.reload(t, s.adminAuth); code != 200 || toJSON(res["changed"]) != `["sites"]` {
		t.Fatalf("reload adding a site: %d %v", code, res)
	}
	if got := s.status(t, s.origin+"/robots.txt", "crawler", "secret2"); got != 403 {
		t.Errorf("robots.txt of a denied site: %d, want 403", got)
	}

	s.write(t, "agent: OldBot\nsites:\n  - match: partner.example\n    policy: allow\n")
	code, res = s.reload(t, s.adminAuth)
	if code != http.StatusUnprocessableEntity || res["result"] != "invalid" || !strings.Contains(res["error"].(string), "needs a note") {
		t.Fatalf("invalid reload: %d %v", code, res)
	}
	if got := s.status(t, s.origin+"/page", "crawler", "secret2"); got != 403 {
		t.Errorf("after the invalid reload: %d, want NewBot's 403 kept", got)
	}
	s.r.stop(t)
	var kinds []string
	for _, rec := range readAudit(t, s.audit) {
		if rec["kind"] == "config-reload" {
			kinds = append(kinds, rec["reason"].(string))
		}
	}
	if strings.Join(kinds, ",") != "ok,ok,invalid" {
		t.Errorf("audited reloads: %v, want ok,ok,invalid", kinds)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
