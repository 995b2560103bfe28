package documents

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
)

func sum(b string) string {
	s := sha256.Sum256([]byte(b))
	return hex.EncodeToString(s[:])
}

func TestKeepAndRead(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir, 1<<20, zerolog.Nop())
	a, b := "User-agent: *\nDisallow: /a\n", "User-agent: *\nDisallow: /b\n"
	for range 3 {
		s.Keep(enforce.DocRobots, sum(a), []byte(a))
	}
	s.Keep(enforce.DocRobots, sum(b), []byte(b))
	s.Keep(enforce.DocRobots, "not-a-hash", []byte("x"))
	s.Close()
	s.Keep(enforce.DocRobots, sum("late"), []byte("late")) // after Close: dropped or queued, no panic
	s.Keep(enforce.DocRobots, sum("late"), []byte("late")) // after Close: no panic
	t.Run("full hash", func(t *testing.T) {
		got, body, err := Read(dir, sum(a))
		if err != nil || got != sum(a) || string(body) != a {
			t.Fatalf("Read: %q %q %v", got, body, err)
		}
	})
	t.Run("prefix", func(t *testing.T) {
		_, body, err := Read(dir, strings.ToUpper(sum(b)[:8]))
		if err != nil || string(body) != b {
			t.Fatalf("Read: %q %v", body, err)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		if _, _, err := Read(dir, "0000000000"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Read: %v", err)
		}
	})
	t.Run("bad prefix", func(t *testing.T) {
		for _, p := range []string{"ab", "xyz1", "../.."} {
			if _, _, err := Read(dir, p); err == nil {
				t.Fatalf("Read(%q) succeeded", p)
			}
		}
	})
	t.Run("tampered", func(t *testing.T) {
		if err := os.WriteFile(Path(dir, sum(a)), []byte("User-agent: *\nAllow: /\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Read(dir, sum(a)); err == nil || !strings.Contains(err.Error(), "changed") {
			t.Fatalf("Read of a changed file: %v", err)
		}
	})
}

// TestRetentionOldestUnreferencedFirst: over the bound, the documents
// not used for a day go, oldest first; one used within the day stays.
func TestRetentionOldestUnreferencedFirst(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &Store{dir: dir, maxBytes: 25, log: zerolog.Nop(), now: func() time.Time { return now },
		queue: make(chan job, queueLen)}
	docs := []string{"0123456789", "abcdefghij", "ABCDEFGHIJ", "klmnopqrst"}
	ages := []time.Duration{36 * time.Hour, 25 * time.Hour, 23 * time.Hour, 0}
	start := now
	for i, d := range docs {
		now = start.Add(-ages[i])
		if _, err := s.write(job{sum(d), []byte(d)}); err != nil {
			t.Fatal(err)
		}
	}
	now = start
	// 40 bytes over a bound of 25: the two not used for a day go, the
	// two used within it stay, over the bound.
	s.prune()
	for i, d := range docs {
		_, err := os.Stat(Path(dir, sum(d)))
		if kept := err == nil; kept != (i >= 2) {
			t.Errorf("document used %v ago: kept %v", ages[i], kept)
		}
	}
	if s.total != 20 {
		t.Fatalf("total %d after pruning, want 20", s.total)
	}
}

func TestKeepNeverBlocks(t *testing.T) {
	s := &Store{dir: t.TempDir(), now: time.Now, queue: make(chan job, 1), done: make(chan struct{})} // no writer
	s.Keep(enforce.DocRobots, sum("a"), []byte("a"))
	s.Keep(enforce.DocRobots, sum("b"), []byte("b"))
	if s.Dropped() != 1 {
		t.Fatalf("dropped %d, want 1", s.Dropped())
	}
	// A dropped document is handed again at its next use.
	<-s.queue
	s.Keep(enforce.DocRobots, sum("b"), []byte("b"))
	if len(s.queue) != 1 {
		t.Fatal("a dropped document was not handed again")
	}
}

// TestDataDirParentNotCreated: the store creates its directory and the
// data directory, never a missing parent of the data directory.
func TestDataDirParentNotCreated(t *testing.T) {
	tmp := t.TempDir()
	t.Run("data dir created", func(t *testing.T) {
		dir := filepath.Join(tmp, "data", "documents")
		s := Open(dir, 1<<20, zerolog.Nop())
		s.Keep(enforce.DocRobots, sum("a"), []byte("a"))
		s.Close()
		if _, err := os.Stat(Path(dir, sum("a"))); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("missing parent", func(t *testing.T) {
		dir := filepath.Join(tmp, "missing", "data", "documents")
		s := Open(dir, 1<<20, zerolog.Nop())
		s.Keep(enforce.DocRobots, sum("a"), []byte("a"))
		s.Close()
		if _, err := os.Stat(filepath.Join(tmp, "missing")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the missing parent was created: %v", err)
		}
	})
}
