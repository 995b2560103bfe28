package query

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// backupTimeFormat is the timestamp lumberjack puts in the name of a
// rotated file: "audit-2026-01-02T15-04-05.000.log" for "audit.log".
const backupTimeFormat = "2006-01-02T15-04-05.000"

// Files returns the audit files of the log at path, oldest first: its
// rotated siblings (lumberjack's names, compressed with a ".gz" suffix or
// not), ordered by the time in their names, then path itself when it
// exists. It is an error when there is none.
func Files(path string) ([]string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ext := filepath.Ext(base)
	prefix := strings.TrimSuffix(base, ext) + "-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("audit files: %w", err)
	}
	type backup struct {
		name string
		t    time.Time
	}
	var backups []backup
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasPrefix(name, prefix) {
			continue
		}
		stamp := strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), ext)
		stamp = strings.TrimPrefix(stamp, prefix)
		if !strings.HasSuffix(strings.TrimSuffix(name, ".gz"), ext) {
			continue
		}
		t, err := time.Parse(backupTimeFormat, stamp)
		if err != nil {
			continue // another file that shares the prefix
		}
		backups = append(backups, backup{filepath.Join(dir, name), t})
	}
	sort.SliceStable(backups, func(i, j int) bool { return backups[i].t.Before(backups[j].t) })
	files := make([]string, 0, len(backups)+1)
	for _, b := range backups {
		files = append(files, b.name)
	}
	if _, err := os.Stat(path); err == nil {
		files = append(files, path)
	} else if !errors.Is(err, fs.ErrNotExist) || len(files) == 0 {
		return nil, fmt.Errorf("audit files: %w", err)
	}
	return files, nil
}

// Open opens the audit file path for reading; a gzip-compressed file
// (by its first bytes, whatever its name) is decompressed. Closing the
// result closes the file.
func Open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit file: %w", err)
	}
	r, err := Decompress(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("audit file %s: %w", path, err)
	}
	return readCloser{r, f}, nil
}

// Decompress returns r, decompressed when it starts as a gzip stream
// does. A gzip stream may decompress to at most [gzipSlack] bytes plus
// [gzipRatio] times the bytes read of it; reading past that fails with
// [ErrGzipBomb], so that a small crafted file cannot keep a scan busy
// for minutes.
func Decompress(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, readBufferBytes)
	magic, err := br.Peek(2)
	if err != nil || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, nil // too short to be gzip, or not gzip
	}
	in := &countingReader{r: br}
	zr, err := gzip.NewReader(in)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return &boundedGzip{zr: zr, in: in}, nil
}

// [gzipRatio] and [gzipSlack] bound what a gzip stream may decompress to:
// audit lines compress about ten times, a crafted stream a thousand.
const (
	gzipRatio = 100
	gzipSlack = 16 << 20
)

// ErrGzipBomb is returned (wrapped) when a gzip stream decompresses to
// more than its bound.
var ErrGzipBomb = errors.New("gzip stream decompresses to more than " + strconv.Itoa(gzipRatio) +
	" times its size (and 16 MiB): not an audit file (decompression bomb?), the rest is not read")

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// boundedGzip is a gzip stream whose decompressed size is bounded by the
// compressed bytes read.
type boundedGzip struct {
	zr  *gzip.Reader
	in  *countingReader
	out int64
}

func (b *boundedGzip) Read(p []byte) (int, error) {
	n, err := b.zr.Read(p)
	b.out += int64(n)
	if b.out > gzipSlack+gzipRatio*b.in.n {
		return n, ErrGzipBomb
	}
	return n, err
}

type readCloser struct {
	io.Reader
	io.Closer
}
