package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/audit/volume"
)

func runReportTest(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runReport(context.Background(), args, testsupport.EnvMap(nil), strings.NewReader(""), &out, &errb,
		time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	return code, out.String(), errb.String()
}

// volumeTotals sums the volume records of the audit file path per
// origin ("" for overflow buckets): what a report must agree with.
func volumeTotals(t *testing.T, path string) map[string]*audit.Volume {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]*audit.Volume{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var rec volumeLine
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		if rec.Kind != audit.KindVolume {
			continue
		}
		s := sums[rec.Origin]
		if s == nil {
			s = &audit.Volume{Status: map[string]int64{}, Refused: map[string]int64{}}
			sums[rec.Origin] = s
		}
		s.Requests += rec.Volume.Requests
		s.Bytes += rec.Volume.Bytes
		for k, n := range rec.Volume.Status {
			s.Status[k] += n
		}
		for k, n := range rec.Volume.Refused {
			s.Refused[k] += n
		}
	}
	return sums
}

// TestReportOfARealRun crawls through a real robotsgate, stops it (the
// volume records are flushed at shutdown) and checks that the report's
// JSON and CSV forms agree with the volume records of its audit log.
func TestReportOfARealRun(t *testing.T) {
	oa, _ := newTestOrigin(t, nil)
	ob, _ := newTestOrigin(t, nil)
	path := filepath.Join(t.TempDir(), "audit.log")
	r := startServe(t, []string{"-audit-log", path, "-agent", "ReportBot"}, nil)
	r.getAll(t, oa.URL+"/private/1", oa.URL+"/a", oa.URL+"/b", oa.URL+"/private/2", ob.URL+"/private/x", oa.URL+"/c")
	if code := r.stop(t); code != 0 {
		t.Fatalf("serve exit %d: %s", code, r.stderr)
	}
	sums := volumeTotals(t, path)
	if a := sums[oa.URL]; a == nil || a.Requests != 5 || a.Refused["disallowed"] != 2 || a.Status["2xx"] != 3 {
		t.Fatalf("volume records of %s: %+v (want 5 requests, 2 refused, 3 2xx)", oa.URL, a)
	}
	t.Run("json", func(t *testing.T) {
		code, out, errs := runReportTest(t, "-format", "json", path)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var rep crawlReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if len(rep.Origins) != 2 || rep.Origins[0].Origin != oa.URL {
			t.Fatalf("origins %+v, want %s first", rep.Origins, oa.URL)
		}
		for _, o := range rep.Origins {
			s := sums[o.Origin]
			if o.Requests != s.Requests || o.Bytes != s.Bytes || o.Status["2xx"] != s.Status["2xx"] ||
				o.Status["4xx"] != s.Status["4xx"] || o.Refused["disallowed"] != s.Refused["disallowed"] {
				t.Errorf("%s: report %+v, records %+v", o.Origin, o, s)
			}
		}
		if rep.Total.Requests != 6 || rep.Total.Refused["disallowed"] != 3 {
			t.Errorf("total %+v", rep.Total)
		}
	})
	t.Run("csv", func(t *testing.T) {
		code, out, errs := runReportTest(t, "-format", "csv", path)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		checkReportCSV(t, out, sums)
	})
	t.Run("table", func(t *testing.T) {
		code, out, _ := runReportTest(t, path)
		if code != 0 || !strings.Contains(out, oa.URL) || !strings.Contains(out, "disallowed") || !strings.Contains(out, "robots:disallow=2") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
}

// writeVolumeLog writes the volume records of two intervals through the
// Auditor (two identities, an overflow bucket), a decision naming a
// robots.txt version, and moves the first interval to a gzipped rotated
// sibling. It returns the live file.
func writeVolumeLog(t *testing.T, t0 time.Time) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	var first, second bytes.Buffer
	clock := enforcetest.NewClock(t0)
	for i, buf := range []*bytes.Buffer{&first, &second} {
		a := volume.New(audit.New(nopWriteCloser{buf}), clock, 3)
		a.Add(volume.Observation{Origin: "https://big.example", Status: 200, Bytes: 1000})
		a.Add(volume.Observation{Origin: "https://big.example", User: "alice", Status: 200, Bytes: 50})
		a.Note(&audit.Event{Origin: "https://big.example", User: "alice", Decision: audit.DecisionBlocked, Reason: "tdm-reserved",
			TDM: &audit.TDM{Reservation: "1"}})
		a.Add(volume.Observation{Origin: "https://<small>.example", Status: 503, Bytes: 7})
		a.Add(volume.Observation{Origin: "https://folded.example", Status: 200, Bytes: 3}) // beyond 3 keys
		clock.Advance(5 * time.Minute)
		if err := a.Flush(); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(buf, `{"time":%q,"decision":"allowed","origin":"https://big.example","robots_sha256":"%064d"}`+"\n",
			clock.Now().Format(time.RFC3339Nano), i)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(first.Bytes())
	zw.Close()
	for name, b := range map[string][]byte{"audit-2026-01-02T03-04-05.000.log.gz": gz.Bytes(), "audit.log": second.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestReportOfVolumeRecords reads volume records written by the Auditor
// over two intervals, the first in a gzipped rotated sibling: the
// report sums both, filters by identity and by time, lists the overflow
// bucket last, counts robots.txt versions and escapes origins in HTML.
func TestReportOfVolumeRecords(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	path := writeVolumeLog(t, t0)
	report := func(t *testing.T, args ...string) crawlReport {
		t.Helper()
		code, out, errs := runReportTest(t, append(append([]string{"-format", "json"}, args...), path)...)
		if code != 0 || errs != "" {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var rep crawlReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return rep
	}
	t.Run("all", func(t *testing.T) {
		rep := report(t)
		if rep.Records != 8 || rep.Total.Requests != 8 || rep.Total.Refused["tdm-reserved"] != 2 {
			t.Fatalf("records %d, total %+v", rep.Records, rep.Total)
		}
		big := rep.Origins[0]
		if big.Origin != "https://big.example" || big.Requests != 4 || big.Bytes != 2100 || big.OptOuts["tdm:reserved"] != 2 ||
			len(big.RobotsSHA256) != 2 {
			t.Errorf("first origin %+v", big)
		}
		last := rep.Origins[len(rep.Origins)-1]
		if !last.Other || last.Requests != 2 || last.Folded != 2 {
			t.Errorf("overflow %+v", last)
		}
	})
	t.Run("identity", func(t *testing.T) {
		rep := report(t, "-identity", "alice")
		if rep.Identity != "alice" || len(rep.Origins) != 1 || rep.Origins[0].Requests != 2 || rep.Origins[0].Bytes != 100 {
			t.Errorf("%+v", rep)
		}
	})
	t.Run("since", func(t *testing.T) {
		rep := report(t, "-since", t0.Add(7*time.Minute).Format(time.RFC3339))
		if rep.Records != 4 || rep.Total.Requests != 4 {
			t.Errorf("records %d, total %+v; want the second interval only", rep.Records, rep.Total)
		}
	})
	t.Run("html", func(t *testing.T) {
		code, out, _ := runReportTest(t, "-format", "html", path)
		if code != 0 || !strings.Contains(out, `id="top-domains"`) || strings.Contains(out, "<small>") ||
			!strings.Contains(out, "&lt;small&gt;") || strings.Contains(out, "<script") || strings.Contains(out, "http://") && !strings.Contains(out, "xmlns") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
}

func TestReportUsageErrors(t *testing.T) {
	for _, c := range []struct {
		name, want string
		args       []string
	}{
		{"format", `did you mean "html"`, []string{"-format", "htm", "x"}},
		{"top", "-top must be at least 1", []string{"-top", "0", "x"}},
		{"since", "-since", []string{"-since", "yesterday", "x"}},
		{"flag after file", "flags must precede files", []string{"x", "-format", "csv"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runReportTest(t, c.args...)
			if code != 2 || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, %q; want 2 and %q", code, errs, c.want)
			}
		})
	}
}

// checkReportCSV checks that the CSV report out has one row per origin of
// sums, with its counts.
func checkReportCSV(t *testing.T, out string, sums map[string]*audit.Volume) {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != len(sums)+1 {
		t.Fatalf("%v: %q", err, out)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, row := range rows[1:] {
		s := sums[row[col["origin"]]]
		if s == nil {
			t.Fatalf("row of an unknown origin: %q", row)
		}
		want := map[string]int64{"requests": s.Requests, "bytes": s.Bytes, "2xx": s.Status["2xx"], "4xx": s.Status["4xx"], "refused": s.Refused["disallowed"]}
		for k, n := range want {
			if row[col[k]] != strconv.FormatInt(n, 10) {
				t.Errorf("%s %s: %s, records %d", row[0], k, row[col[k]], n)
			}
		}
	}
}
