//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDataDirForAUidWithoutHome: robotsgate run as uid 65532 with root's
// HOME (as setpriv --reuid leaves it) exits 2 with one line naming
// -data-dir (the netns test runs it with -data-dir).
func TestDataDirForAUidWithoutHome(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run robotsgate as uid 65532")
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := mkdirShared(t) // transparent_netns_test.go: uid 65532 may read it
	bin := filepath.Join(dir, "robotsgate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	home := t.TempDir() // root's, mode 0700: not uid 65532's
	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-audit-log", "-")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65532, Gid: 65532}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := -1
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	msg := stderr.String()
	if code != 2 || !strings.Contains(msg, "pass -data-dir DIR") || !strings.Contains(msg, "uid 65532") || strings.Count(msg, "\n") != 1 {
		t.Errorf("as uid 65532 with HOME %s: exit %d, stderr %q; want 2 and one line naming -data-dir", home, code, msg)
	}
}
