package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// TestReloadCommand: "robotsgate reload" with the instance's own flags and
// environment reloads that instance through the admin API; a refused
// configuration and a wrong token are exit status 1 with one line.
func TestReloadCommand(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "robotsgate.yaml")
	if err := os.WriteFile(conf, []byte("agent: FirstBot\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ROBOTSGATE_ADMIN_TOKEN": "reload-token"}
	r := startServe(t, []string{"-config", conf, "-audit-log", filepath.Join(t.TempDir(), "audit.log")}, env)
	reload := func(env map[string]string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"reload", "-config", conf, "-listen", r.addr.String()}, testsupport.EnvMap(env), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if err := os.WriteFile(conf, []byte("agent: SecondBot\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := reload(env); code != 0 || out != "reloaded: changed agent\n" {
		t.Fatalf("reload: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if err := os.WriteFile(conf, []byte("agent: SecondBot\nmode: sometimes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A bad file: the instance is asked all the same, refuses it, and the
	// command says so in one line, exit 1 (as documented).
	if code, _, errOut := reload(env); code != 1 || !strings.Contains(errOut, "reload refused, the running configuration is kept") ||
		!strings.Contains(errOut, "mode") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("reload of a bad file: exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(r.stderr.String(), "sometimes") {
		t.Errorf("the instance was not asked to reload the bad file:\n%s", r.stderr)
	}
	// Flags that are invalid whatever the file says are a usage error.
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"reload", "-config", conf, "-listen", r.addr.String(), "-mode", "never"},
		testsupport.EnvMap(env), strings.NewReader(""), &out, &errOut); code != 2 {
		t.Errorf("reload with a bad flag: exit %d, stderr %q", code, errOut.String())
	}
	if err := os.WriteFile(conf, []byte("agent: ThirdBot\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := reload(map[string]string{"ROBOTSGATE_ADMIN_TOKEN": "wrong"}); code != 1 || !strings.Contains(errOut, "refused the admin token") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("reload with a wrong token: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := reload(nil); code != 2 || !strings.Contains(errOut, "ROBOTSGATE_ADMIN_TOKEN") {
		t.Errorf("reload without a token: exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(r.stderr.String(), `"changed":["agent"]`) {
		t.Errorf("the instance did not log the reload:\n%s", r.stderr)
	}
}
