package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/robotsgate/robotsgate/internal/safetext"
)

// hostileAuditLines are audit lines as a hand edit or an older robotsgate
// may have left them: JSON holding raw C1 controls (CSI, OSC), bidi
// controls, a raw BEL (which JSON does not allow raw) and an escaped ESC,
// from a client's agent override and a hostile robots.txt rule.
const hostileAuditLines = `{"time":"2001-02-03T04:05:06Z","decision":"blocked","reason":"disallowed","url":"https://x.test/a","origin":"https://x.test","agent":"X","agent_override_refused":"Evil` + "\u009b2J\u202eBot" + `","rule":"Disallow: /` + "\u009d0;pwned\u0007\u2066" + `","line":1}
{"time":"2001-02-03T04:05:07Z","decision":"blocked","reason":"disallowed","url":"https://x.test/b","origin":"https://x.test` + "\u202e" + `","agent":"X","rule":"Disallow: /\u001b[2J","line":2}
`

// terminalSafe reports the first unsafe rune of out (line feeds and the
// table's tabs aside), or "" when there is none and out is UTF-8.
func terminalSafe(out string) string {
	if !utf8.ValidString(out) {
		return "invalid UTF-8"
	}
	for _, r := range out {
		if r != '\n' && safetext.Unsafe(r) {
			return safetext.Escape(string(r))
		}
	}
	return ""
}

// TestAuditOutputEscaped: robotsgate audit writes no raw control
// character to the terminal in any of its outputs, and its JSON lines
// decode to the records as written.
func TestAuditOutputEscaped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(hostileAuditLines), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-json"}, {"-summary", "-json"}, {"-summary"}, {}} {
		code, out, errOut := runAuditTest(t, nil, append(args, path)...)
		if code != 0 || !strings.Contains(out, "x.test") {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		if bad := terminalSafe(out); bad != "" {
			t.Errorf("%v: the output holds %s:\n%s", args, bad, out)
		}
	}
	_, out, _ := runAuditTest(t, nil, "-json", path)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	in := strings.Split(strings.TrimSpace(hostileAuditLines), "\n")
	for i := range in {
		var got, want map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatalf("line %d is not JSON: %v", i, err)
		}
		if json.Unmarshal([]byte(in[i]), &want) != nil {
			continue // a raw control character inside a string: not JSON as written
		}
		if g, w := toJSON(got), toJSON(want); g != w {
			t.Errorf("line %d decodes to %s, want %s", i, g, w)
		}
	}
}

// TestAuditGzipBomb: a small gzip file that decompresses to hundreds of
// MiB is reported as such, naming the file, and the other files are
// still read.
func TestAuditGzipBomb(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "audit.log")
	os.WriteFile(live, []byte(`{"reason":"disallowed","url":"https://x.test/live"}`+"\n"), 0o600)
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(bytes.Repeat([]byte("\n"), 1<<20))
	zw.Close()
	bomb := filepath.Join(dir, "audit-2001-02-03T04-05-06.000.log.gz")
	// 300 members of 1 MiB each: ~300 KiB that decompress to 300 MiB.
	if err := os.WriteFile(bomb, bytes.Repeat(member.Bytes(), 300), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runAuditTest(t, nil, "-json", live)
	if code != 1 || !strings.Contains(out, "https://x.test/live") || !strings.Contains(errOut, bomb) || !strings.Contains(errOut, "decompression bomb") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestCheckOutputEscaped: robotsgate check prints the rules of a hostile
// robots.txt and tdmrep.json escaped, as text and as JSON.
func TestCheckOutputEscaped(t *testing.T) {
	robotsFile := writeRobots(t, "User-agent: *\nDisallow: /p\u009b2J\u202e\n")
	tdm := filepath.Join(t.TempDir(), "tdmrep.json")
	os.WriteFile(tdm, []byte(`[{"location":"/p","tdm-reservation":1,"tdm-policy":"https://p.test/\u009d0;x\u0007\u2067"}]`), 0o600)
	for _, args := range [][]string{
		{"-robots", robotsFile, "-agent", "Bot", "http://x.test/p%C2%9B2J%E2%80%AE"},
		{"-json", "-robots", robotsFile, "-agent", "Bot", "http://x.test/p%C2%9B2J%E2%80%AE"},
		{"-tdmrep", tdm, "http://x.test/p"},
		{"-json", "-tdmrep", tdm, "http://x.test/p"},
	} {
		var out, errOut bytes.Buffer
		code := runCheck(args, strings.NewReader(""), &out, &errOut)
		if code != 1 {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, code, out.String(), errOut.String())
		}
		if bad := terminalSafe(out.String()); bad != "" {
			t.Errorf("%v: the output holds %s:\n%s", args, bad, out.String())
		}
	}
}

// TestOperatorLogEscaped: the operator log, JSON or console, writes the
// C1 and bidi controls of a logged value escaped.
func TestOperatorLogEscaped(t *testing.T) {
	t.Setenv("NO_COLOR", "1") // the console's own colours are escape sequences
	for _, format := range []string{"json", "console"} {
		var buf bytes.Buffer
		log, err := newLogger("info", format, &buf)
		if err != nil {
			t.Fatal(err)
		}
		log.Warn().Str("agent", "Evil\u009b2J\u202e").Strs("removed", []string{"a\u009d0;x", "\u2066b"}).Msg("from \u009b31m\u202eclient")
		if bad := terminalSafe(buf.String()); bad != "" || !strings.Contains(buf.String(), "client") {
			t.Errorf("%s: the log holds %s:\n%s", format, bad, buf.String())
		}
	}
}
