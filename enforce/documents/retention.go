package documents

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Retention of the kept documents: what the directory holds, and the
// removal of the least recently used beyond the bound.

// file is one kept document.
type file struct {
	path string
	size int64
	used time.Time // its modification time: its last use
}

// files lists the documents kept (temporary files left by a crash are
// removed on the way).
func (s *Store) files() []file {
	var out []file
	_ = filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if !validSum(d.Name()) {
			if len(d.Name()) > 5 && d.Name()[:5] == ".tmp-" {
				_ = os.Remove(p)
			}
			return nil
		}
		out = append(out, file{p, info.Size(), info.ModTime()})
		return nil
	})
	return out
}

// measure returns the bytes of the documents kept.
func (s *Store) measure() int64 {
	var n int64
	for _, f := range s.files() {
		n += f.size
	}
	return n
}

// prune removes the least recently used documents not used within
// [Referenced] until the rest fit the bound, and recounts the total.
func (s *Store) prune() {
	all := s.files()
	slices.SortFunc(all, func(a, b file) int { return a.used.Compare(b.used) })
	var total int64
	for _, f := range all {
		total += f.size
	}
	cutoff := s.now().Add(-Referenced)
	for _, f := range all {
		if total <= s.maxBytes || !f.used.Before(cutoff) {
			break
		}
		if err := os.Remove(f.path); err != nil {
			s.log.Warn().Err(err).Str("path", f.path).Msg("cannot remove policy document")
			continue
		}
		total -= f.size
		s.seen.Delete(filepath.Base(f.path))
	}
	s.total = total
}
