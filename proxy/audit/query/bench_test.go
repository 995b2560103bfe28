package query_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/audit/query"
)

// benchFileBytes is the size of the benchmarks' audit file: 64 MiB, or
// the MiB that ROBOTSGATE_BENCH_AUDIT_MB says (1024 for a 1 GiB file).
func benchFileBytes(b *testing.B) int64 {
	if v := os.Getenv("ROBOTSGATE_BENCH_AUDIT_MB"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("ROBOTSGATE_BENCH_AUDIT_MB=%q: want a positive number of MiB", v)
		}
		return int64(n) << 20
	}
	return 64 << 20
}

// benchFile writes an audit file of about benchFileBytes with a real
// Auditor: records of 100 origins, five reasons, a usage object on a third
// of them, times one second apart. It returns its path and the time of
// its last record.
func benchFile(b *testing.B) (string, time.Time) {
	b.Helper()
	p := filepath.Join(b.TempDir(), "audit.log")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	cw := &countingWriter{w: bufio.NewWriterSize(f, 1<<20)}
	a := audit.New(cw)
	reasons := []string{"disallowed", "allowed", "robots-unreachable", "usage-disallowed", "origin-paused"}
	start := base.Add(-24 * time.Hour)
	size := benchFileBytes(b)
	var last time.Time
	for i := 0; cw.n < size; i++ {
		o := fmt.Sprintf("https://site%02d.example", i%100)
		last = start.Add(time.Duration(i) * time.Second)
		e := audit.Event{
			Time: last, Client: "127.0.0.1:50312", Method: "GET",
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
	}
	if err := cw.w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return p, last
}

// countingWriter counts what goes through it; Close does nothing.
type countingWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) Close() error { return nil }

// BenchmarkScan scans one audit file per iteration; the MB/s column is
// the scan rate, MB/cpu-s the rate per second of CPU time the process
// used. origin-hour is the common question (one origin's blocks
// in the last hour); all-summary parses every line, as -summary without
// a filter does; since parses every line's time.
func BenchmarkScan(b *testing.B) {
	p, end := benchFile(b)
	st, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		f     query.Filter
		brief bool
	}{
		{"origin-hour", query.Filter{Origin: "https://site42.example", Since: end.Add(-time.Hour), Reasons: []string{"disallowed"}}, false},
		{"all-summary", query.Filter{}, true},
		{"since", query.Filter{Since: end.Add(-time.Hour)}, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(st.Size())
			cpu0 := cpuTime()
			for b.Loop() {
				sc, err := query.NewScanner(bc.f)
				if err != nil {
					b.Fatal(err)
				}
				sc.Brief = bc.brief
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
			// On a shared machine the wall-clock MB/s depends on the other
			// processes; the rate per CPU second does not.
			if cpu := cpuTime() - cpu0; cpu > 0 {
				b.ReportMetric(float64(st.Size())*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
			}
		})
	}
}
