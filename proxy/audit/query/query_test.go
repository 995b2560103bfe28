package query_test

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/audit/query"
)

// base is the time of the test records: far in the past, and the
// filters' times are relative to it, never to the real clock.
var base = time.Date(2001, 2, 3, 10, 0, 0, 0, time.UTC)

// testEvents are audit records as robotsgate writes them.
func testEvents() []audit.Event {
	return []audit.Event{
		{Time: base.Add(-3 * time.Hour), URL: "https://example.com/old", Origin: "https://example.com", Agent: "FooBot", Reason: "disallowed", Decision: "blocked", Rule: "Disallow: /old", Line: 2},
		{Time: base.Add(-30 * time.Minute), URL: "https://example.com/private/a", Origin: "https://example.com", Agent: "FooBot", Reason: "disallowed", Decision: "blocked", Rule: "Disallow: /private", Line: 3, User: "Carol"},
		{Time: base.Add(-20 * time.Minute), URL: "http://example.com/private/b", Origin: "http://example.com", Agent: "foobot", Reason: "disallowed", Decision: "blocked", Rule: "Disallow: /private", Line: 3},
		{Time: base.Add(-10 * time.Minute), URL: "https://example.com:8443/x", Origin: "https://example.com:8443", Agent: "BarBot", Reason: "robots-unreachable", Decision: "blocked", User: "carol"},
		{Time: base.Add(-5 * time.Minute), URL: "http://[::1]:8080/p", Origin: "http://[::1]:8080", Agent: "FooBot", Reason: "disallowed", Decision: "reported", Rule: "Disallow: /p", Line: 1},
		{Time: base.Add(-time.Minute), URL: "https://other.test/q\"uote", Origin: "https://other.test", Agent: "*", Reason: "allowed", Decision: "allowed"},
	}
}

// writeAudit writes evs with a real Auditor to a file and returns its path.
func writeAudit(t testing.TB, evs []audit.Event) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "audit.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	a := audit.New(f)
	for _, e := range evs {
		if err := a.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// scan returns the URLs of the records of the file at p matching f.
func scan(t *testing.T, p string, f query.Filter) ([]string, query.Stats) {
	t.Helper()
	sc, err := query.NewScanner(f)
	if err != nil {
		t.Fatal(err)
	}
	r, err := query.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var urls []string
	err = sc.Scan(r, p, func(fs *query.Fields, line []byte) error {
		urls = append(urls, fs.URL)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return urls, sc.Stats()
}

func TestScanFilters(t *testing.T) {
	p := writeAudit(t, testEvents())
	for _, tc := range []struct {
		name string
		f    query.Filter
		want []string
	}{
		{"all", query.Filter{}, []string{"https://example.com/old", "https://example.com/private/a", "http://example.com/private/b", "https://example.com:8443/x", "http://[::1]:8080/p", "https://other.test/q\"uote"}},
		{"origin", query.Filter{Origin: "https://example.com"}, []string{"https://example.com/old", "https://example.com/private/a"}},
		{"origin spelled otherwise", query.Filter{Origin: "HTTPS://Example.COM:443/"}, []string{"https://example.com/old", "https://example.com/private/a"}},
		{"host: http and https", query.Filter{Origin: "example.com"}, []string{"https://example.com/old", "https://example.com/private/a", "http://example.com/private/b"}},
		{"host with port", query.Filter{Origin: "example.com:8443"}, []string{"https://example.com:8443/x"}},
		{"ipv6 origin", query.Filter{Origin: "HTTP://[0:0::1]:08080"}, []string{"http://[::1]:8080/p"}},
		{"last hour, blocked by a rule", query.Filter{Origin: "example.com", Since: base.Add(-time.Hour), Reasons: []string{"disallowed"}}, []string{"https://example.com/private/a", "http://example.com/private/b"}},
		{"until", query.Filter{Until: base.Add(-20 * time.Minute)}, []string{"https://example.com/old", "https://example.com/private/a"}},
		{"reasons", query.Filter{Reasons: []string{"robots-unreachable", "allowed"}}, []string{"https://example.com:8443/x", "https://other.test/q\"uote"}},
		{"decision", query.Filter{Decisions: []string{"reported"}}, []string{"http://[::1]:8080/p"}},
		{"agent any case", query.Filter{Agent: "FOOBOT"}, []string{"https://example.com/old", "https://example.com/private/a", "http://example.com/private/b", "http://[::1]:8080/p"}},
		{"user, exactly", query.Filter{User: "carol"}, []string{"https://example.com:8443/x"}},
		{"url prefix", query.Filter{URLPrefix: "https://example.com/priv"}, []string{"https://example.com/private/a"}},
		{"url prefix with an escaped quote", query.Filter{URLPrefix: "https://other.test/q\"u"}, []string{"https://other.test/q\"uote"}},
		{"none", query.Filter{Origin: "https://nowhere.test"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, st := scan(t, p, tc.f)
			if !slices.Equal(got, tc.want) {
				t.Errorf("matched %q, want %q", got, tc.want)
			}
			if st.Lines != 6 || st.Malformed != 0 || st.Matched != int64(len(tc.want)) {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestScanBadOrigin(t *testing.T) {
	for _, o := range []string{"https://", "ftp://example.com", "http://h:99999", "https://user@h"} {
		if _, err := query.NewScanner(query.Filter{Origin: o}); err == nil {
			t.Errorf("origin %q: no error", o)
		}
	}
	// Any URL of an origin names it, as /v1/robots?origin= reads one.
	if _, err := query.NewScanner(query.Filter{Origin: "https://example.com/path?q"}); err != nil {
		t.Errorf("a URL of the origin: %v", err)
	}
}

// TestScanMalformedCountedNotFatal: broken lines are counted, the first
// named, and the records around them still match.
func TestScanMalformedCountedNotFatal(t *testing.T) {
	good := `{"time":"2001-02-03T10:00:00Z","decision":"blocked","reason":"disallowed","origin":"https://a.test","url":"https://a.test/x","agent":"B"}`
	in := strings.Join([]string{
		good,
		`{"time":"2001-02-03T10:00:00Z","decision":"blocked","reason":"disallowed","origin":"https://a.test","url":"https://a.test/trunc`,
		`not json at all, disallowed`,
		``,
		`{"time":"yesterday","decision":"blocked","reason":"disallowed","origin":"https://a.test"}`,
		`{"time":"2001-02-03T10:00:00Z","reason":"disallowed","line":"three"}`,
		`{"time":"2001-02-03T10:00:00Z","decision":"blocked","reason":"disallowed"} trailing`,
		// An escape spells the reason: the byte pre-filter must not drop it.
		`{"time":"2001-02-03T10:00:01Z","decision":"blocked","reason":"dis\u0061llowed","origin":"https://a.test","url":"https://a.test/esc","usage":{"train-ai":{"pref":"disallowed"}},"agent":"B"}`,
	}, "\n")
	sc, err := query.NewScanner(query.Filter{Reasons: []string{"disallowed"}, Since: base.Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	err = sc.Scan(strings.NewReader(in), "in", func(f *query.Fields, _ []byte) error {
		urls = append(urls, f.URL)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st := sc.Stats()
	if !slices.Equal(urls, []string{"https://a.test/x", "https://a.test/esc"}) || st.Malformed != 5 || st.Lines != 8 {
		t.Fatalf("urls %q, stats %+v", urls, st)
	}
	if !strings.HasPrefix(st.FirstMalformed, "in:2: ") {
		t.Errorf("FirstMalformed %q, want it to name in:2", st.FirstMalformed)
	}
}

// TestScanLongLine: a line longer than the read buffer is read whole; one
// longer than MaxLineBytes is counted as malformed.
func TestScanLongLine(t *testing.T) {
	long := `{"reason":"disallowed","url":"https://a.test/` + strings.Repeat("x", 600<<10) + `"}`
	huge := `{"reason":"disallowed","url":"` + strings.Repeat("y", query.MaxLineBytes) + `"}`
	sc, _ := query.NewScanner(query.Filter{})
	n := 0
	err := sc.Scan(strings.NewReader(long+"\n"+huge+"\n"+long), "in", func(f *query.Fields, _ []byte) error {
		if len(f.URL) != len("https://a.test/")+600<<10 {
			t.Errorf("url of %d bytes", len(f.URL))
		}
		n++
		return nil
	})
	if err != nil || n != 2 || sc.Stats().Malformed != 1 {
		t.Fatalf("err %v, matched %d, stats %+v", err, n, sc.Stats())
	}
}

// TestFilesRotatedAndCompressed: the rotated siblings of a log, in the
// order of the times in their names, a gzip one decompressed, then the
// live file; other files sharing the name's start are not read.
func TestFilesRotatedAndCompressed(t *testing.T) {
	dir := t.TempDir()
	line := func(u string) string { return `{"reason":"disallowed","url":"` + u + `"}` + "\n" }
	write := func(name, content string, gz bool) {
		b := []byte(content)
		if gz {
			b = testsupport.Gzip(b)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("audit.log", line("live"), false)
	write("audit-2001-02-03T10-00-00.000.log.gz", line("second"), true)
	write("audit-2001-02-03T09-59-59.999.log", line("first"), false)
	write("audit-2001-02-03T10-00-01.000.log", line("third"), false)
	write("audit-notes.log", line("not a backup"), false)
	write("audit.log.bak", line("not a backup"), false)
	files, err := query.Files(filepath.Join(dir, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, f := range files {
		got, _ := scan(t, f, query.Filter{})
		urls = append(urls, got...)
	}
	if want := []string{"first", "second", "third", "live"}; !slices.Equal(urls, want) {
		t.Fatalf("read %q from %q, want %q", urls, files, want)
	}
	if _, err := query.Files(filepath.Join(dir, "none.log")); err == nil {
		t.Error("Files of a log with no file: no error")
	}
}

// TestScanOriginCanonical: records name origins as enforce.Origin spells
// them (the proxy writes enforce.Origin of the request URL), and -origin
// is brought to the same form, so that another spelling of the same
// origin finds them.
func TestScanOriginCanonical(t *testing.T) {
	for _, tc := range []struct{ request, filter string }{
		{"HTTP://Bücher.Example:80/x", "http://bücher.example"},
		{"https://EXAMPLE.com:0443/x", "example.com"},
		{"http://[::1]:8080/x", "http://[::1]:08080/"},
		{"http://[0:0::1]:8080/x", "http://[::0:1]:8080"},
		{"http://xn--bcher-kva.example/x", "Bücher.example"},
		{"https://example.com./x", "https://EXAMPLE.com"},
	} {
		u, err := url.Parse(tc.request)
		if err != nil {
			t.Fatal(err)
		}
		o, err := enforce.Origin(u)
		if err != nil {
			t.Fatal(err)
		}
		p := writeAudit(t, []audit.Event{{Time: base, URL: tc.request, Origin: o, Reason: "disallowed", Decision: "blocked"}})
		if got, _ := scan(t, p, query.Filter{Origin: tc.filter}); len(got) != 1 {
			t.Errorf("-origin %q did not find the record of %q (origin %q)", tc.filter, tc.request, o)
		}
	}
}

// TestFilesOfRealRotation: after robotsgate's own rotation (lumberjack,
// audit_max_size_mb 1), Files returns the backup and the live file and
// every record written is read back once, in order.
func TestFilesOfRealRotation(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := audit.Open(p, audit.Rotation{MaxSizeMB: 1, MaxBackups: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := audit.New(w)
	pad := strings.Repeat("x", 1000)
	const n = 1200 // about 1.3 MB: one rotation
	for i := range n {
		if err := a.Record(audit.Event{Time: base, URL: fmt.Sprintf("https://r.test/%d/%s", i, pad), Reason: "disallowed", Decision: "blocked"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	files, err := query.Files(p)
	if err != nil || len(files) != 2 || files[1] != p {
		t.Fatalf("Files: %q %v; want the backup, then %s", files, err, p)
	}
	next := 0
	for _, f := range files {
		urls, st := scan(t, f, query.Filter{URLPrefix: "https://r.test/"})
		if st.Malformed != 0 {
			t.Fatalf("%s: %+v", f, st)
		}
		for _, u := range urls {
			if want := fmt.Sprintf("https://r.test/%d/", next); !strings.HasPrefix(u, want) {
				t.Fatalf("%s: read %.20s..., want %s...", f, u, want)
			}
			next++
		}
	}
	if next != n {
		t.Fatalf("read %d records of %d", next, n)
	}
}
