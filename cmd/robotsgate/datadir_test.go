package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// TestServeDataDirMissingParent: a -data-dir whose parent is missing (a
// typo) is one line and exit 2, and nothing is created; a data dir whose
// parent exists is created, with a warning naming it and the certificate
// clients must trust.
func TestServeDataDirMissingParent(t *testing.T) {
	t.Run("missing parent", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "nonexistent", "deep", "dir")
		var stdout, stderr bytes.Buffer
		args := []string{"-listen", "127.0.0.1:0", "-audit-log", "-", "-data-dir", dir}
		code := runServe(stopped(), args, testsupport.EnvMap(nil), &stdout, &stderr, nil)
		want := "robotsgate: https.data_dir " + dir + ": its parent directory " + filepath.Dir(dir) + " does not exist"
		if code != 2 || strings.Count(stderr.String(), "\n") != 1 || !strings.HasPrefix(stderr.String(), want) ||
			!strings.Contains(stderr.String(), "-data-dir") {
			t.Fatalf("exit %d, stderr %q; want 2 and one line starting %q", code, stderr.String(), want)
		}
		if _, err := os.Stat(filepath.Dir(filepath.Dir(dir))); !os.IsNotExist(err) {
			t.Fatalf("serve created the data dir's parents: %v", err)
		}
	})
	t.Run("first CA warns", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ca")
		var stdout, stderr bytes.Buffer
		args := []string{"-listen", "127.0.0.1:0", "-audit-log", "-", "-data-dir", dir, "-log-format", "json"}
		if code := runServe(stopped(), args, testsupport.EnvMap(nil), &stdout, &stderr, nil); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		var line string
		for l := range strings.SplitSeq(stderr.String(), "\n") {
			if strings.Contains(l, "created a new CA") {
				line = l
			}
		}
		if !strings.Contains(line, `"level":"warn"`) || !strings.Contains(line, "in "+dir+":") ||
			!strings.Contains(line, "must trust its certificate "+filepath.Join(dir, "robotsgate-ca-cert.pem")) {
			t.Fatalf("no warning naming the directory and the certificate: %q\n%s", line, stderr.String())
		}
	})
}
