// Package documents keeps the policy documents robotsgate's decisions
// used (robots.txt, tdmrep.json, RSL license documents), each distinct
// body once, content-addressed by its SHA-256 under a directory:
// <dir>/ab/abcdef… (the first two hex digits name a subdirectory).
//
// [Store.Keep] is called on the request path and never touches the disk:
// it hands the body to one writer goroutine through a bounded queue, and
// drops it (counted, and tried again at the document's next use) when the
// queue is full. A document is written to a temporary file and renamed
// into place, so a reader never sees a partial file. Each use refreshes
// the file's modification time, at most once per [touchEvery]: the
// modification time is when the document was last used.
//
// Retention: when the files add up to more than the bound, the writer
// removes the least recently used first, but never a document used within
// the last [Referenced] (the longest a cached copy stays fresh, RFC
// 9309's 24 hours): such a document may still be in force in a cache
// entry. So the bound can be exceeded while that many documents are in
// use.
package documents

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
)

// Referenced is how long after its last use a document is still taken as
// in force, and kept whatever the bound.
const Referenced = enforce.MaxFreshness

// touchEvery is how often a document's use refreshes its modification
// time.
const touchEvery = time.Hour

// queueLen bounds the documents waiting to be written.
const queueLen = 256

// Store keeps documents under a directory. Its methods are safe for
// concurrent use.
type Store struct {
	dir      string
	maxBytes int64
	log      zerolog.Logger
	now      func() time.Time

	queue chan job
	stop  chan struct{} // closed by Close
	done  chan struct{} // closed when the writer has stopped
	seen  sync.Map      // hash → time.Time of its last hand-off to the writer

	closeOnce sync.Once
	dropped   atomic.Int64
	total     int64 // bytes of the files kept; the writer's alone
	failed    bool  // a write failed and was logged as an error; the writer's alone
}

// job is one document for the writer.
type job struct {
	sha  string
	body []byte
}

// Open returns a Store keeping documents under dir, at most maxBytes of
// them beyond those in use (see the package comment), and starts its
// writer; Close stops it. Open touches no file: the writer creates dir
// and its parent (the data directory) at its first write, but not the
// parent's parent, whose absence is more likely a mistyped path; a
// failure is logged and the document handed again at its next use.
func Open(dir string, maxBytes int64, log zerolog.Logger) *Store {
	s := &Store{dir: dir, maxBytes: maxBytes, log: log, now: time.Now,
		queue: make(chan job, queueLen), stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

// Keep hands the body of a document of kind doc whose hex SHA-256 is sum
// to the writer, unless it did so less than [touchEvery] ago. It never
// blocks: with the queue full the document is dropped and counted
// ([Store.Dropped]), and handed again at its next use. body is shared and
// never changed, so it is not copied.
func (s *Store) Keep(_ enforce.Doc, sum string, body []byte) {
	now := s.now()
	if v, ok := s.seen.Load(sum); ok && now.Sub(v.(time.Time)) < touchEvery {
		return
	}
	if !validSum(sum) {
		return
	}
	s.seen.Store(sum, now)
	select {
	case s.queue <- job{sum, body}:
	default:
		s.seen.Delete(sum)
		s.dropped.Add(1)
	}
}

// Dropped returns how many documents were not handed to the writer
// because its queue was full.
func (s *Store) Dropped() int64 { return s.dropped.Load() }

// Close writes the documents queued and stops the writer. A Keep after
// Close is dropped once the queue is full. It is idempotent.
func (s *Store) Close() {
	s.closeOnce.Do(func() { close(s.stop) })
	<-s.done
}

// run is the writer: it writes or touches each queued document, then
// removes the oldest unreferenced ones while over the bound; once
// stopped, it writes what is queued and returns.
func (s *Store) run() {
	defer close(s.done)
	s.total = s.measure()
	for {
		select {
		case j := <-s.queue:
			s.handle(j)
		case <-s.stop:
			for {
				select {
				case j := <-s.queue:
					s.handle(j)
				default:
					return
				}
			}
		}
	}
}

// handle writes or touches j's document and keeps the bound.
func (s *Store) handle(j job) {
	n, err := s.write(j)
	if err != nil {
		ev := s.log.Debug()
		if !s.failed { // the first failure for operators; the next ones likely repeat it
			s.failed, ev = true, s.log.Error()
		}
		ev.Err(err).Str("sha256", j.sha).Msg("cannot keep policy document: audit records still name its hash")
		s.seen.Delete(j.sha)
		return
	}
	s.total += n
	if s.maxBytes > 0 && s.total > s.maxBytes {
		s.prune()
	}
}

// Path returns where the document sum is kept under dir.
func Path(dir, sum string) string { return filepath.Join(dir, sum[:2], sum) }

// write stores j's body unless it is there already, then sets its
// modification time to now; n is the bytes added.
func (s *Store) write(j job) (n int64, err error) {
	p := Path(s.dir, j.sha)
	now := s.now()
	if err := os.Chtimes(p, now, now); err == nil {
		return 0, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	if err := s.makeDirs(filepath.Dir(p)); err != nil {
		return 0, err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return 0, err
	}
	_, err = f.Write(j.body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return 0, fmt.Errorf("writing %s: %w", p, err)
	}
	_ = os.Chtimes(p, now, now)
	return int64(len(j.body)), nil
}

// makeDirs creates sub, a subdirectory of s.dir, with s.dir and s.dir's
// parent when missing, but no directory above.
func (s *Store) makeDirs(sub string) error {
	for _, d := range []string{filepath.Dir(s.dir), s.dir, sub} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("documents directory: %w", err)
		}
	}
	return nil
}

// validSum reports whether sum is a lower-case hex SHA-256.
func validSum(sum string) bool {
	if len(sum) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(sum)
	return err == nil && sum == toLower(sum)
}

// toLower lower-cases ASCII letters.
func toLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
