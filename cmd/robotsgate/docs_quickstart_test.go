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

// fencedBlocks returns the fenced code blocks of md, each as its lines.
func fencedBlocks(md string) [][]string {
	var blocks [][]string
	var cur []string
	fenced := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			if fenced {
				blocks = append(blocks, cur)
			}
			fenced, cur = !fenced, nil
			continue
		}
		if fenced {
			cur = append(cur, line)
		}
	}
	return blocks
}

// TestReadmeQuickstartBlocks: the Quickstart's command that starts
// robotsgate in the foreground is a block of its own (pasting it never
// reaches a test command after it), the test commands come in a block
// after it, and a quick test command without the race detector is
// given.
func TestReadmeQuickstartBlocks(t *testing.T) {
	md := string(readRepoFile(t, "README.md"))
	start := strings.Index(md, "## Quickstart\n")
	if start < 0 {
		t.Fatal("README.md has no Quickstart section")
	}
	section := md[start+len("## Quickstart\n"):]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	blocks := fencedBlocks(section)
	if len(blocks) < 2 {
		t.Fatalf("the Quickstart has %d code blocks, want the run block and the test block", len(blocks))
	}
	var runBlock, testBlock = -1, -1
	quick := false
	for i, b := range blocks {
		for _, l := range b {
			switch l = strings.TrimSpace(l); {
			case l == readmeServe:
				runBlock = i
				if len(b) != 1 {
					t.Errorf("the Quickstart's run block holds more than %q: %q", readmeServe, b)
				}
			case strings.HasPrefix(l, "go test "):
				if testBlock < 0 {
					testBlock = i
				}
				quick = quick || (l == "go test ./..." && !strings.Contains(l, "-race"))
			}
		}
	}
	if runBlock < 0 || testBlock <= runBlock {
		t.Errorf("the Quickstart's run block (%d) must come first and the test block (%d) after it", runBlock, testBlock)
	}
	if !quick {
		t.Error("the Quickstart gives no quick test command `go test ./...` (without the race detector)")
	}
}
