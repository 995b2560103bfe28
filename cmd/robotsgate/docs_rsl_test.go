package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsRSLExampleIsTheFile: the complete license document shown in
// docs/usage-preferences.md is examples/rsl/license.xml as it is (which
// robots/rsl's TestExampleLicense decides).
func TestDocsRSLExampleIsTheFile(t *testing.T) {
	file := string(readRepoFile(t, "examples/rsl/license.xml"))
	doc := string(readRepoFile(t, "docs/usage-preferences.md"))
	_, after, ok := strings.Cut(doc, "## RSL licenses")
	if !ok {
		t.Fatal("docs/usage-preferences.md has no RSL licenses section")
	}
	_, block, ok := strings.Cut(after, "```xml\n")
	if !ok {
		t.Fatal("the RSL licenses section shows no license document (```xml block)")
	}
	block, _, _ = strings.Cut(block, "```")
	if block != file {
		t.Errorf("the RSL section's license document differs from examples/rsl/license.xml:\n%s", block)
	}
}

// TestDocsNoPathOutsideRepo: the README and docs/ name no file outside
// the repository (the workplace's shared/ directory is not part of a
// clone).
func TestDocsNoPathOutsideRepo(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(repoRoot, "README.md"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "shared/") {
				t.Errorf("%s:%d names a path outside the repository: %s", filepath.Base(f), i+1, strings.TrimSpace(line))
			}
		}
	}
}
