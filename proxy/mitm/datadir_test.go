package mitm

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultDataDirNotWritable: a default data directory the user may
// not write (a uid that kept another user's HOME) is an error that names
// the setting to pass.
func TestDefaultDataDirNotWritable(t *testing.T) {
	err := defaultDirError(fmt.Errorf("mkdir /root/.config/robotsgate: %w", fs.ErrPermission), "/root/.config/robotsgate")
	if msg := err.Error(); !strings.Contains(msg, "pass -data-dir DIR") || !strings.Contains(msg, "/root/.config/robotsgate") {
		t.Errorf("error %q does not name -data-dir", msg)
	}
	if other := fmt.Errorf("disk full"); defaultDirError(other, "/x") != other {
		t.Error("an error other than a permission error was reworded")
	}
	if os.Getuid() == 0 {
		t.Skip("root writes any directory: the real case needs another uid (TestTransparentSidecar runs robotsgate as uid 65532)")
	}
	ro := t.TempDir()
	if err := os.Chmod(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o700) })
	t.Setenv("XDG_CONFIG_HOME", ro)
	t.Setenv("HOME", ro)
	_, _, err = LoadOrCreateCA("", "", "", nil)
	if err == nil || !strings.Contains(err.Error(), "pass -data-dir DIR") || !strings.Contains(err.Error(), filepath.Join(ro, "robotsgate")) {
		t.Errorf("CA in an unwritable default directory: %v", err)
	}
}
