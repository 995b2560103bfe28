// Package confdirtest keeps a package's tests away from the user's
// configuration directory, where robotsgate keeps its generated CA when
// https.data_dir is not set.
//
// A package's TestMain calls Main; tests then give every Server a data dir
// of their own (t.TempDir()), and a test that forgets fails the run
// instead of writing a CA into the real ~/.config/robotsgate.
package confdirtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Main runs m with XDG_CONFIG_HOME (what [os.UserConfigDir] returns on
// Linux and the BSDs) set to a new temporary directory, which it removes
// afterwards. It returns m's exit code, or 1 when a test created the
// subdirectory name there: that test would have written to the user's
// configuration directory.
//
// The go command keeps its own settings (go env -w) under the user config
// dir too: unless GOENV is set, Main points it at the original file, so
// that tests running the go command keep those settings.
func Main(m *testing.M, name string) int {
	dir, err := os.MkdirTemp("", "confdirtest-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "confdirtest: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if os.Getenv("GOENV") == "" {
		if orig, err := os.UserConfigDir(); err == nil {
			os.Setenv("GOENV", filepath.Join(orig, "go", "env"))
		}
	}
	os.Setenv("XDG_CONFIG_HOME", dir)

	code := m.Run()
	if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
		fmt.Fprintf(os.Stderr, "confdirtest: a test wrote %s under the user config dir; give it a data dir in t.TempDir()\n", name)
		return 1
	}
	return code
}
