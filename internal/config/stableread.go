package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"time"
)

// A configuration file is read until two reads, a pause apart, give the
// same bytes: a file read while an editor or cp rewrites it in place
// (truncated, then written) reads empty or cut short, which may be a
// valid configuration that lacks what the rest of the file says (a site
// deny). Only a file that stays the same across the pause is applied.

// FileReader reads the configuration file for [LoadWith]. Its zero value
// reads the file system and pauses [stablePause] between reads.
type FileReader struct {
	Read  func(path string) ([]byte, error) // nil: os.ReadFile
	Pause func()                            // between two reads; nil: sleep stablePause
}

// stablePause is how long a file must stay the same to be read: far
// longer than the gap between two writes of one copy.
const stablePause = 20 * time.Millisecond

// stableReads is how many reads are made, at most, for two in a row to
// agree.
const stableReads = 6

// ErrFileChanging is returned (wrapped) when the configuration file kept
// changing while it was read.
var ErrFileChanging = errors.New("the file kept changing while it was read (caught mid-write?); replace it atomically: write a new file beside it, then rename it over the old")

// readStable returns the contents of the file at path once two
// consecutive reads agree.
func (fr FileReader) readStable(path string) ([]byte, error) {
	read, pause := fr.Read, fr.Pause
	if read == nil {
		read = os.ReadFile
	}
	if pause == nil {
		pause = func() { time.Sleep(stablePause) }
	}
	prev, err := read(path)
	if err != nil {
		return nil, err
	}
	for i := 1; i < stableReads; i++ {
		pause()
		cur, err := read(path)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(prev, cur) {
			return cur, nil
		}
		prev = cur
	}
	return nil, fmt.Errorf("%s: %w (%d reads)", path, ErrFileChanging, stableReads)
}
