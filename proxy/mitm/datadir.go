package mitm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// defaultDataDir returns the data directory used when https.data_dir is
// empty: os.UserConfigDir()/robotsgate (e.g. ~/.config/robotsgate).
func defaultDataDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("https.data_dir is not set and the user config directory is unknown (%w); set https.data_dir (flag -data-dir)", err)
	}
	return filepath.Join(dir, "robotsgate"), nil
}

// defaultDirError returns err, the error of the CA in the default data
// directory dir, saying which setting fixes it when dir is not writable:
// typically a uid without a home of its own that kept another user's
// HOME (setpriv --reuid, sudo -u without -H, a container's USER).
func defaultDirError(err error, dir string) error {
	if !errors.Is(err, fs.ErrPermission) {
		return err
	}
	return fmt.Errorf("%w; https.data_dir is not set and the default %s (from $HOME) is not writable by uid %d: "+
		"pass -data-dir DIR (or ROBOTSGATE_DATA_DIR, https.data_dir) naming a directory this user may write, "+
		"or give it a HOME of its own", err, dir, os.Getuid())
}

// makeLastDir creates dir, a data directory given in the settings, but
// not its parents: a missing parent is more likely a mistyped path than a
// place to create a new CA, which no client trusts yet.
func makeLastDir(dir string, perm os.FileMode) error {
	err := os.Mkdir(dir, perm)
	switch {
	case err == nil, errors.Is(err, fs.ErrExist):
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("its parent directory %s does not exist: correct the path (flag -data-dir, env ROBOTSGATE_DATA_DIR) "+
			"or create the parent first (robotsgate creates only the last directory)", filepath.Dir(filepath.Clean(dir)))
	}
	return err
}

// DataDir returns the data directory of the setting https.data_dir dir:
// dir itself, or the default when it is empty.
func DataDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return defaultDataDir()
}
