package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// auditFixture runs a real robotsgate with an audit file, gets three
// requests refused (two to origin a, one to b) and stops it; then it
// appends a record of a two hours ago and a malformed line.
func auditFixture(t *testing.T) (path, a, b string) {
	t.Helper()
	oa, _ := newTestOrigin(t, nil)
	ob, _ := newTestOrigin(t, nil)
	path = filepath.Join(t.TempDir(), "audit.log")
	r := startServe(t, []string{"-audit-log", path, "-agent", "AuditBot", "-audit-volume-interval", "0"}, nil) // line numbers below count decisions only
	r.getAll(t, oa.URL+"/private/1", ob.URL+"/private/x", oa.URL+"/private/2", oa.URL+"/public")
	if code := r.stop(t); code != 0 {
		t.Fatalf("serve exit %d: %s", code, r.stderr)
	}
	old := time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339Nano)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"` + old + `","decision":"blocked","reason":"disallowed","url":"` + oa.URL + `/private/old","origin":"` + oa.URL + `","agent":"AuditBot","rule":"Disallow: /private","line":2}` + "\n")
	f.WriteString(`{"time":"` + old + `","decision":"blocked","reason":"disallow` + "\n") // cut short
	f.Close()
	return path, oa.URL, ob.URL
}

func runAuditTest(t *testing.T, stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	code = runAudit(context.Background(), args, testsupport.EnvMap(nil), stdin, &out, &errb, auditEnv{now: time.Now, followInterval: time.Millisecond})
	return code, out.String(), errb.String()
}

// TestAuditLastHourOfOrigin answers "which URLs were blocked for origin X
// in the last hour, and why?" from the audit file of a real robotsgate,
// as a table, as JSON lines and as a summary; the malformed line is
// reported on stderr and does not stop the query.
func TestAuditLastHourOfOrigin(t *testing.T) {
	path, a, b := auditFixture(t)
	code, out, errOut := runAuditTest(t, nil, "-origin", a, "-since", "1h", "-decision", "blocked", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "TIME ") {
		t.Fatalf("table:\n%s", out)
	}
	for i, u := range []string{a + "/private/1", a + "/private/2"} {
		l := lines[i+1]
		if !strings.Contains(l, " blocked ") || !strings.Contains(l, " disallowed ") || !strings.Contains(l, " AuditBot ") ||
			!strings.Contains(l, " "+u+" ") || !strings.HasSuffix(l, "Disallow: /private (line 2)") {
			t.Errorf("row %d %q, want %s blocked by Disallow: /private (line 2)", i, l, u)
		}
	}
	if !strings.Contains(errOut, "1 malformed line(s) skipped: "+path+":6 (first: "+path+":6: ") {
		t.Errorf("stderr %q, want the malformed line counted and named", errOut)
	}

	// The host form matches; -json prints the records as written.
	_, out, _ = runAuditTest(t, nil, "-origin", strings.TrimPrefix(a, "http://"), "-json", path)
	var urls []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("-json line %q: %v", l, err)
		}
		urls = append(urls, m["url"].(string))
	}
	if strings.Join(urls, " ") != a+"/private/1 "+a+"/private/2 "+a+"/private/old" {
		t.Errorf("-json urls %q", urls)
	}

	_, out, _ = runAuditTest(t, nil, "-summary", "-since", "1h", path)
	for _, want := range []string{"3 matching records (6 lines read in 1 file)", "      2  disallowed          " + a, "      1  disallowed          " + b,
		"      2  Disallow: /private (line 2)               " + a} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = runAuditTest(t, nil, "-summary", "-json", "-origin", b, path)
	var sum struct {
		Matched  int `json:"matched"`
		ByReason []struct {
			Origin, Reason string
			Count          int
		} `json:"by_origin_reason"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Matched != 1 || len(sum.ByReason) != 1 || sum.ByReason[0].Origin != b {
		t.Errorf("-summary -json %s: %+v %v", out, sum, err)
	}
}

// TestAuditStdinGzip reads a gzip-compressed log from standard input.
func TestAuditStdinGzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, `{"time":"2001-02-03T04:05:06Z","decision":"blocked","reason":"robots-unreachable","url":"https://x.test/a","origin":"https://x.test","agent":"*"}`+"\n")
	zw.Close()
	code, out, errOut := runAuditTest(t, &buf, "-reason", "robots-unreachable", "-")
	if code != 0 || !strings.Contains(out, "2001-02-03T04:05:06Z  blocked   robots-unreachable  *      https://x.test/a  -") {
		t.Fatalf("exit %d, out:\n%s\nstderr: %s", code, out, errOut)
	}
}

// TestAuditFollow prints records appended to the live file until the
// context ends.
func TestAuditFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	os.WriteFile(path, []byte(`{"reason":"disallowed","url":"https://x.test/first"}`+"\n"), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	code := make(chan int, 1)
	go func() {
		code <- runAudit(ctx, []string{"-f", "-json", path}, testsupport.EnvMap(nil), strings.NewReader(""), out, io.Discard,
			auditEnv{now: time.Now, followInterval: time.Millisecond})
	}()
	waitFor := func(s string) {
		t.Helper()
		testsupport.WaitFor(t, s+" printed", func() bool { return strings.Contains(out.String(), s) })
	}
	waitFor("/first")
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"reason":"disallowed","url":"https://x.test/second"}` + "\n")
	f.Close()
	waitFor("/second")
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit %d", c)
		}
	case <-time.After(testTimeout):
		t.Fatal("audit -f did not stop")
	}
}

func TestAuditUsageErrors(t *testing.T) {
	path := testsupport.WriteFile(t, "audit.log", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-decision", "denied", path}, `-decision: "denied" is not one of allowed, blocked, reported`},
		{[]string{"-since", "yesterday", path}, `-since: "yesterday" is neither a duration`},
		{[]string{"-origin", "ftp://x.test/path", path}, `-origin: origin "ftp://x.test/path": want http or https`},
		{[]string{"-f", "-"}, "-f follows one audit file, not standard input"},
		{[]string{"-f", "-summary", path}, "-f and -summary cannot be combined"},
		{[]string{path, "-json"}, `flags must precede files: "-json" comes after a file`},
		{nil, "no FILE given, and audit_log is standard output"},
		{[]string{filepath.Join(t.TempDir(), "none.log")}, "audit files: "},
	} {
		code, _, errOut := runAuditTest(t, nil, tc.args...)
		if code != 2 || !strings.HasPrefix(errOut, "robotsgate audit: ") || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	// The configured audit_log is read when no FILE is given.
	os.WriteFile(path, []byte(`{"reason":"disallowed","url":"https://x.test/c"}`+"\n"), 0o600)
	var out bytes.Buffer
	code := runAudit(context.Background(), nil, testsupport.EnvMap(map[string]string{"ROBOTSGATE_AUDIT_LOG": path}), nil, &out, io.Discard, auditEnv{now: time.Now})
	if code != 0 || !strings.Contains(out.String(), "https://x.test/c") {
		t.Errorf("audit_log from the environment: exit %d, %q", code, out.String())
	}
}

// TestAuditCorruptBackupReportedNotFatal: a rotated file that cannot be
// read (a corrupt gzip stream) is reported and exits 1, and the other
// files are still read.
func TestAuditCorruptBackupReportedNotFatal(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "audit.log")
	os.WriteFile(live, []byte(`{"reason":"disallowed","url":"https://x.test/live"}`+"\n"), 0o600)
	bad := filepath.Join(dir, "audit-2001-02-03T04-05-06.000.log.gz")
	os.WriteFile(bad, []byte("\x1f\x8b\x08\x00garbage that is no deflate stream"), 0o600)
	code, out, errOut := runAuditTest(t, nil, "-json", live)
	if code != 1 || !strings.Contains(out, "https://x.test/live") || !strings.Contains(errOut, bad) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestAuditTableNoControlCharacters: escapes in a record (a rule from a
// hostile robots.txt) are not written to the terminal by the table: they
// are shown escaped.
func TestAuditTableNoControlCharacters(t *testing.T) {
	in := `{"time":"2001-02-03T04:05:06Z","decision":"blocked","reason":"disallowed","url":"https://x.test/a\tb","agent":"X","rule":"Disallow: /\u001b[2J\u009b31m","line":1}` + "\n"
	code, out, _ := runAuditTest(t, strings.NewReader(in), "-")
	if code != 0 || strings.ContainsAny(out, "\x1b\t\u009b") || !strings.Contains(out, `https://x.test/a\tb`) || !strings.Contains(out, `Disallow: /\x1b[2J\u009b31m (line 1)`) {
		t.Fatalf("exit %d, table %q", code, out)
	}
}

// TestAuditMalformedLinesNamed: the lines robotsgate audit skips as
// malformed (a record cut short, one glued to a fragment) are counted
// and named by line number on stderr and in -summary, as text and JSON.
func TestAuditMalformedLinesNamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	good := `{"time":"2001-02-03T04:05:06Z","decision":"blocked","reason":"disallowed","url":"https://x.test/a","origin":"https://x.test"}`
	log := good + "\n" + `{"time":"2001-02-03T04:05:06Z","decis` + good + "\n" + good + "\n" + `{"time":"20` + "\n"
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "2 malformed line(s) skipped: " + path + ":2, " + path + ":4"
	t.Run("stderr", func(t *testing.T) {
		code, _, errOut := runAuditTest(t, nil, path)
		if code != 0 || !strings.Contains(errOut, want) {
			t.Errorf("exit %d, stderr %q, want %q", code, errOut, want)
		}
	})
	t.Run("summary", func(t *testing.T) {
		_, out, _ := runAuditTest(t, nil, "-summary", path)
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	})
	t.Run("summary json", func(t *testing.T) {
		_, out, _ := runAuditTest(t, nil, "-summary", "-json", path)
		var sum struct {
			Malformed   int      `json:"malformed"`
			MalformedAt []string `json:"malformed_lines"`
		}
		if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Malformed != 2 ||
			!slices.Equal(sum.MalformedAt, []string{path + ":2", path + ":4"}) {
			t.Errorf("-summary -json %s: %+v %v", out, sum, err)
		}
	})
}
