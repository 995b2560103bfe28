package query_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/audit/query"
)

// benchFileBytes is the size of the benchmarks' audit file.
const benchFileBytes = 64 << 20

// benchFile writes an audit file of about benchFileBytes: records of 100
// origins, every reason, a usage object on some, times one second apart
// over the whole file.
func benchFile(b *testing.B) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "audit.log")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	a := audit.New(nopWriteCloser{w})
	reasons := []string{"disallowed", "allowed", "robots-unreachable", "usage-disallowed", "origin-paused"}
	start := base.Add(-24 * time.Hour)
	var written int64
	for i := 0; written < benchFileBytes; i++ {
		o := fmt.Sprintf("https://site%02d.example", i%100)
		e := audit.Event{
			Time: start.Add(time.Duration(i) * time.Second), Client: "127.0.0.1:50312", Method: "GET",
			URL: fmt.Sprintf("%s/articles/%d/page?ref=feed&id=%d", o, i%977, i), Origin: o, Agent: "ExampleBot",
			Group: "examplebot", Rule: "Disallow: /articles/", Line: 4, Reason: reasons[i%len(reasons)],
			Decision: "blocked", Mode: "enforce", RobotsStatus: "ok", RobotsHTTPStatus: 200, RobotsAge: 93 * time.Second, Status: 403,
		}
		if i%3 == 0 {
			e.Usage = []audit.Usage{{Purpose: "train-ai", Pref: "disallowed", Source: "content-usage", Rule: "Content-Usage: train-ai=n", Line: 7}}
		}
		if err := a.Record(e); err != nil {
			b.Fatal(err)
		}
		written = int64(w.Buffered()) + written
		if w.Buffered() > 0 {
			if err := w.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return p
}

type nopWriteCloser struct{ *bufio.Writer }

func (nopWriteCloser) Close() error { return nil }

// BenchmarkScan scans one audit file per iteration; the MB/s column is
// the scan rate. origin-hour is the common question (one origin's blocks
// in the last hour); all-summary parses every line, as -summary without
// a filter does; since parses every line's time.
func BenchmarkScan(b *testing.B) {
	p := benchFile(b)
	st, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	end := base.Add(-24 * time.Hour).Add(time.Duration(st.Size()/400) * time.Second)
	for _, bc := range []struct {
		name string
		f    query.Filter
	}{
		{"origin-hour", query.Filter{Origin: "https://site42.example", Since: end.Add(-time.Hour), Reasons: []string{"disallowed"}}},
		{"all-summary", query.Filter{}},
		{"since", query.Filter{Since: end.Add(-time.Hour)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(st.Size())
			for b.Loop() {
				sc, err := query.NewScanner(bc.f)
				if err != nil {
					b.Fatal(err)
				}
				r, err := query.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				if err := sc.Scan(r, p, func(*query.Fields, []byte) error { n++; return nil }); err != nil {
					b.Fatal(err)
				}
				r.Close()
				if sc.Stats().Malformed != 0 {
					b.Fatalf("stats %+v", sc.Stats())
				}
			}
		})
	}
}
