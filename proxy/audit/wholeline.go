package audit

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"os"

	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/robotsgate/robotsgate/internal/safetext"
)

// Whole lines: a record is written whole or not at all, as far as its
// readers can tell. A write that stops part-way (a full disk: a short
// write, then ENOSPC) leaves the start of a line with no newline; the
// next record, written once space is back, would be joined to it and
// both would be one malformed line. errWriter undoes such a fragment by
// truncating the file back to the record's start; where it cannot (a
// pipe, a rotated log whose file lumberjack keeps to itself) it ends the
// fragment with a newline before anything else is written, so that the
// fragment is a malformed line of its own ([query] reports it) and the
// next record stands alone.

// errWriter writes each audit line whole or not at all (see above) and
// remembers the error of the last Write so that Record can return it
// (zerolog itself only reports write errors to a global hook). It writes
// each line with its unsafe characters escaped ([safetext.JSON]):
// zerolog writes C1 and bidi controls raw, which the audit line's
// readers (a terminal, robotsgate audit) must not get.
type errWriter struct {
	w   io.Writer
	err error
	// open says the destination ends with a fragment of a line: the next
	// write starts with a newline.
	open bool
	// undone says the last failed write left nothing behind: its
	// fragment was truncated away, or closed with a newline.
	undone bool
	// sum is the SHA-256 of the last line written whole, without its
	// newline: the hash chain's next prev.
	sum [sha256.Size]byte
	// size is how many bytes the audit file holds, for a rotated one
	// (max > 0: lumberjack rotates before a write that would take it past
	// max).
	size, max int64
}

func (e *errWriter) Write(p []byte) (int, error) {
	q := safetext.JSON(p)
	if e.open {
		q = append([]byte{'\n'}, q...)
	}
	if e.max > 0 && e.size+int64(len(q)) > e.max {
		e.size = 0 // lumberjack rotates first
	}
	n, err := e.w.Write(q)
	e.size += int64(n)
	if err == nil && n < len(q) {
		err = io.ErrShortWrite
	}
	e.err = err
	if err == nil {
		line := bytes.TrimSuffix(q, []byte("\n")) // a zerolog record ends with its newline
		if e.open {
			line = line[1:]
		}
		e.sum = sha256.Sum256(line)
		e.open = false
		return len(p), nil
	}
	e.settle(n)
	return 0, err
}

// settle cleans up after a write of which only n bytes went through.
func (e *errWriter) settle(n int) {
	if n > 0 && e.open {
		n-- // the newline that closed the earlier fragment went through
		e.open = false
	}
	e.undone = true
	if n == 0 || truncateBack(e.w, int64(n)) == nil {
		return
	}
	e.open = true
	if m, err := e.w.Write([]byte{'\n'}); err == nil && m == 1 {
		e.open = false
		return
	}
	e.undone = false
}

// errNotTruncatable says a destination cannot be truncated.
var errNotTruncatable = errors.New("audit destination cannot be truncated")

// truncatable is a destination whose end can be cut off: an [*os.File].
type truncatable interface {
	Stat() (os.FileInfo, error)
	Seek(offset int64, whence int) (int64, error)
	Truncate(size int64) error
}

// truncateBack removes the last n bytes written to w, when w is a regular
// file: it truncates it back to where they started and moves its offset
// there (a file opened without O_APPEND would otherwise write its next
// line past a hole).
func truncateBack(w io.Writer, n int64) error {
	if nc, ok := w.(nopCloser); ok {
		w = nc.Writer // stdout, maybe redirected to a file
	}
	f, ok := w.(truncatable)
	if !ok {
		return errNotTruncatable
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return errNotTruncatable
	}
	end, err := f.Seek(0, io.SeekCurrent)
	if err != nil || end < n {
		return errNotTruncatable
	}
	if err := f.Truncate(end - n); err != nil {
		return err
	}
	_, err = f.Seek(end-n, io.SeekStart)
	return err
}

// endsOpen reports whether the audit file w writes to ends without a
// newline (a fragment left by a crash during a write, or by an earlier
// run that could not close it): the first record then starts with one.
func endsOpen(w io.Writer) bool {
	var name string
	switch f := w.(type) {
	case *os.File:
		name = f.Name()
	case *lumberjack.Logger:
		name = f.Filename
	default:
		return false
	}
	r, err := os.Open(name)
	if err != nil {
		return false
	}
	defer r.Close()
	fi, err := r.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return false
	}
	var b [1]byte
	if _, err := r.ReadAt(b[:], fi.Size()-1); err != nil {
		return false
	}
	return b[0] != '\n'
}
