package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// TestServeBadCredentialsFileOneLine: a credentials file that cannot be
// used (a bad line, a mode others can read) stops the start with exactly
// one line on stderr, before any log line (such as the new CA's).
func TestServeBadCredentialsFileOneLine(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
		mode             os.FileMode
	}{
		{"bad line", "nocolon\n", `:1: want "user:password"`, 0o600},
		{"readable by others", "crawler:s3cret\n", "run `chmod 600 ", 0o644},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "creds")
			if err := os.WriteFile(f, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(f, tc.mode); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			args := []string{"-listen", "127.0.0.1:0", "-audit-log", "-", "-data-dir", filepath.Join(t.TempDir(), "d"), "-credentials-file", f}
			code := runServe(stopped(), args, testsupport.EnvMap(nil), &stdout, &stderr, nil)
			if code != 2 || strings.Count(stderr.String(), "\n") != 1 ||
				!strings.HasPrefix(stderr.String(), "robotsgate: auth.credentials_file ") || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and one line with %q", code, stderr.String(), tc.want)
			}
		})
	}
}
