package robotsmix

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
)

// RealFile is one robots.txt file of the real-world corpus.
type RealFile struct {
	Host string // the site that served it
	Body []byte
}

// RealWorld returns the real-world corpus, sorted by host: the tarball
// named by ROBOTSGATE_ROBOTS_CORPUS, else testdata/robots-corpus.tar.gz
// beside this file (third-party data, built locally: testdata/README.md
// says how). Tests of any package read it through here. Without it the
// error wraps [fs.ErrNotExist], on which tests skip.
func RealWorld() ([]RealFile, error) {
	path := os.Getenv("ROBOTSGATE_ROBOTS_CORPUS")
	if path == "" {
		_, src, _, ok := runtime.Caller(0)
		if !ok {
			return nil, errors.New("robotsmix: no source path for the corpus")
		}
		path = filepath.Join(filepath.Dir(src), "testdata", "robots-corpus.tar.gz")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("robotsmix: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("robotsmix: corpus: %w", err)
	}
	var files []RealFile
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("robotsmix: corpus: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("robotsmix: corpus %s: %w", h.Name, err)
		}
		files = append(files, RealFile{Host: filepath.Base(h.Name), Body: body})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Host < files[j].Host })
	return files, nil
}

// RealWorldForTest is [RealWorld] for a test: it skips tb when the corpus
// was not built (testdata/README.md) and fails it on any other error.
func RealWorldForTest(tb testing.TB) []RealFile {
	tb.Helper()
	files, err := RealWorld()
	if errors.Is(err, fs.ErrNotExist) {
		tb.Skipf("no real-world corpus: %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return files
}
