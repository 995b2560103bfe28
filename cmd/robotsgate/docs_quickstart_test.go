package main

// Tests of the commands the README and docs tell a new user to run.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsNoBackgroundGoRun: no command in the README or docs starts
// robotsgate with "go run … &": killing go run leaves its child, the
// proxy, holding the port (the README says so).
func TestDocsNoBackgroundGoRun(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, filepath.Join(repoRoot, "README.md")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			l := strings.TrimSpace(line)
			if strings.Contains(l, "go run") && strings.Contains(l, "cmd/robotsgate") && strings.HasSuffix(l, "&") {
				t.Errorf("%s: %q starts robotsgate with go run in the background: build and run the binary", filepath.Base(f), l)
			}
		}
	}
}

