package main

import (
	"os"
	"testing"

	"github.com/robotsgate/robotsgate/internal/confdirtest"
)

// TestMain fails the run when a test writes robotsgate's CA under the
// user's config dir: every serve or ca run in a test gets -data-dir in
// t.TempDir().
func TestMain(m *testing.M) {
	os.Exit(confdirtest.Main(m, "robotsgate"))
}
