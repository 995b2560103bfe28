package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// reportNodeDir is where reportpage.mjs and its node_modules are.
const reportNodeDir = "../../scripts/clients/node"

// browserRunner returns node, or skips the test when node, Chromium or
// playwright-core is missing, unless ROBOTSGATE_REQUIRE_NODE is set (as
// .ci/run sets it): then the test fails.
func browserRunner(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	why := ""
	switch {
	case err != nil:
		why = "node is not installed"
	case !exists(chromiumPath()):
		why = "chromium is not installed at " + chromiumPath()
	case !exists(filepath.Join(reportNodeDir, "node_modules", "playwright-core", "package.json")):
		why = "playwright-core is not installed (cd scripts/clients/node && npm ci)"
	}
	if why != "" {
		if os.Getenv("ROBOTSGATE_REQUIRE_NODE") != "" {
			t.Fatalf("the browser check cannot run: %s (ROBOTSGATE_REQUIRE_NODE is set)", why)
		}
		t.Skipf("the browser check cannot run: %s; set ROBOTSGATE_REQUIRE_NODE to make this a failure", why)
	}
	return node
}

func chromiumPath() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestReportHTMLInChromium opens the HTML crawl report in headless
// Chromium, offline: no console error, no request beyond the file, and
// the top-domains chart shows a bar for each origin listed.
func TestReportHTMLInChromium(t *testing.T) {
	node := browserRunner(t)
	path := writeVolumeLog(t, time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC))
	code, out, errs := runReportTest(t, "-format", "html", path)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "reportpage.mjs")
	cmd.Dir = reportNodeDir
	cmd.Env = append(os.Environ(), "REPORT_FILE="+page)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node reportpage.mjs: %v\n%s", err, stderr.String())
	}
	// Three rows, each one status class: big.example (both identities),
	// <small>.example and the overflow bucket.
	want := "chart 3 labels 3 requests 0 console-errors 0"
	if got := strings.Join(strings.Fields(stdout.String()), " "); got != want {
		t.Errorf("got %q, want %q\n%s", got, want, stderr.String())
	}
}
