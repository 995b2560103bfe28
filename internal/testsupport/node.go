package testsupport

// Node for the tests that run the scripts of scripts/clients/node.

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Node returns the node binary for a test that runs a script of
// scripts/clients/node, or skips the test when node is not installed or
// when one of missing (each why the test cannot run, or "") is set;
// with ROBOTSGATE_REQUIRE_NODE set (as .ci/run sets it) it fails the test
// instead. check names the test's check in the message.
func Node(t testing.TB, check string, missing ...string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	why := ""
	if err != nil {
		why = "node is not installed"
	}
	for _, m := range missing {
		if why != "" {
			break
		}
		why = m
	}
	if why != "" {
		if os.Getenv("ROBOTSGATE_REQUIRE_NODE") != "" {
			t.Fatalf("%s cannot run: %s (ROBOTSGATE_REQUIRE_NODE is set)", check, why)
		}
		t.Skipf("%s cannot run: %s; set ROBOTSGATE_REQUIRE_NODE to make this a failure", check, why)
	}
	return node
}

// NodeModuleMissing returns why the npm package name is missing from
// dir's node_modules, or "" when it is installed.
func NodeModuleMissing(dir, name string) string {
	if _, err := os.Stat(filepath.Join(dir, "node_modules", name, "package.json")); err != nil {
		return name + " is not installed (cd scripts/clients/node && npm ci)"
	}
	return ""
}
