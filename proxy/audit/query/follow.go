package query

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// defaultFollowInterval is Follow's interval when it is given none.
const defaultFollowInterval = 250 * time.Millisecond

// Follow reads the audit file path from offset, then waits for more, as
// "tail -F" does, passing matching records to emit, until ctx ends (it
// then returns nil) or reading fails. It looks for new lines every
// interval (0: [defaultFollowInterval]); when path is replaced (the log rotated) it reads what is
// left of the old file, then the new one from its start. A line is
// handled once its newline is written.
func (s *Scanner) Follow(ctx context.Context, path string, offset int64, interval time.Duration, emit Emit) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("follow: %w", err)
	}
	defer func() { f.Close() }()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return fmt.Errorf("follow %s: %w", path, err)
	}
	br := bufio.NewReaderSize(f, readBufferBytes)
	if interval <= 0 {
		interval = defaultFollowInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if _, err := s.scan(br, path, emit, false); err != nil {
			return err
		}
		if next, ok := s.rotated(f, path); ok {
			// Lines written to the old file before it was renamed.
			if _, err := s.scan(br, path, emit, true); err != nil {
				next.Close()
				return err
			}
			f.Close()
			f, s.lineNo = next, 0
			br.Reset(f)
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// rotated returns the file now at path when it is another file than f,
// or f was truncated (copytruncate rotation: it is then read again from
// its start).
func (s *Scanner) rotated(f *os.File, path string) (*os.File, bool) {
	cur, err := f.Stat()
	if err != nil {
		return nil, false
	}
	now, err := os.Stat(path)
	if err != nil {
		return nil, false // between rename and create: look again later
	}
	if os.SameFile(cur, now) {
		if pos, err := f.Seek(0, io.SeekCurrent); err == nil && now.Size() < pos {
			next, err := os.Open(path)
			if err == nil {
				return next, true
			}
		}
		return nil, false
	}
	next, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	return next, true
}
