package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"
)

// Ready reports whether the audit log can take records: it is not
// closed, no write has been blocked for StallAfter or longer, the last
// record was written, and the audit file (when there is one) is still in
// place and writable. It never creates the file, and never waits for a
// write in progress. /readyz asks it.
//
// An audit_log file that was moved or deleted is reported (robotsgate
// would keep writing to the old file): restart robotsgate. A rotated log
// (audit_max_size_mb) is checked by name only, since lumberjack renames
// the file itself when it rotates (see rotatedReady).
func (a *Auditor) Ready() error {
	if a.isClosed.Load() {
		return ErrClosed
	}
	if err := a.stallError(); err != nil {
		return err
	}
	if b := a.lastErr.Load(); b != nil {
		return fmt.Errorf("audit log: last write failed: %w", b.err)
	}
	switch f := a.w.(type) {
	case *os.File:
		return fileReady(f)
	case *lumberjack.Logger:
		return a.rotatedReady(f.Filename)
	}
	return nil
}

// stallError says so when the write in progress has been blocked for
// StallAfter or longer (see Ready).
func (a *Auditor) stallError() error {
	d, ok := a.stalled()
	if !ok {
		return nil
	}
	return fmt.Errorf("audit log: a write has been blocked for %v (a destination that stopped reading: "+
		"a full pipe on stdout, a hung disk); requests that write audit records are waiting for it", d.Round(time.Millisecond))
}

// fileReady checks that the audit file f is still in place under its name
// (not moved, deleted or replaced) and can be opened for appending; it
// never creates it.
func fileReady(f *os.File) error {
	name := f.Name()
	ours, err := f.Stat()
	if err != nil {
		return fmt.Errorf("audit log %s: %w", name, err)
	}
	now, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("audit log %s was moved or deleted: records still go to the old file; restart robotsgate "+
			"(or set audit_max_size_mb to let robotsgate rotate it)", name)
	}
	if err != nil {
		return fmt.Errorf("audit log %s: %w", name, err)
	}
	if !os.SameFile(ours, now) {
		return fmt.Errorf("audit log %s was replaced by another file: records still go to the old one; restart robotsgate "+
			"(or set audit_max_size_mb to let robotsgate rotate it)", name)
	}
	if !now.Mode().IsRegular() {
		return nil // a device or FIFO: opening it could block
	}
	return appendable(name)
}

// rotatedReady checks the audit file of a [lumberjack.Logger]. Lumberjack
// opens its file itself and renames it when it rotates, so there is no
// open file to compare with: the file under name must exist and be
// writable. A rotation renames the file and creates the next one inside
// a write, holding the turn; a missing file is only reported when it is still
// missing with no write in progress, so that a rotation never makes
// /readyz flap. If the file was deleted outside robotsgate, lumberjack
// writes into the deleted file until its next rotation.
func (a *Auditor) rotatedReady(name string) error {
	err := appendable(name)
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	select {
	case a.turn <- struct{}{}:
	default:
		return nil // a write, maybe a rotation, is in progress; a stall is reported by stallError
	}
	defer func() { <-a.turn }()
	if a.isClosed.Load() {
		return ErrClosed
	}
	if err := appendable(name); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("audit log %s was moved or deleted: records go to the old file until the next rotation; restart robotsgate", name)
	} else if err != nil {
		return err
	}
	return nil
}

// appendable checks that the existing file name can be opened for
// appending, without creating it.
func appendable(name string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err != nil {
		return fmt.Errorf("audit log not writable: %w", err)
	}
	return f.Close()
}
