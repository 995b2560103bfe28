package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/robots"
)

const checkRobots = `User-agent: *
Disallow: /private
Allow: /private/ok

User-agent: MJ12bot
Disallow: /
`

func writeRobots(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunCheck(t *testing.T) {
	file := writeRobots(t, checkRobots)
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantOut    string
		wantErrSub string // substring of the one-line stderr message; "" means stderr must be empty
	}{
		{
			name:     "all allowed",
			args:     []string{"-robots", file, "-agent", "FooBot", "http://example.com/", "http://example.com/private/ok?x=1"},
			wantCode: 0,
			wantOut:  "allowed http://example.com/\nallowed http://example.com/private/ok?x=1  (Allow: /private/ok, line 3)\n",
		},
		{
			name:     "one disallowed",
			args:     []string{"-robots", file, "-agent", "FooBot", "http://example.com/a", "http://example.com/private/x"},
			wantCode: 1,
			wantOut:  "allowed http://example.com/a\ndisallowed http://example.com/private/x  (Disallow: /private, line 2)\n",
		},
		{
			name:     "agent compared whole and case-insensitively",
			args:     []string{"-robots", file, "-agent", "mj12BOT", "http://example.com/a"},
			wantCode: 1,
			wantOut:  "disallowed http://example.com/a  (Disallow: /, line 6)\n",
		},
		{
			name:       "a whole User-Agent is read as the proxy reads one",
			args:       []string{"-robots", file, "-agent", "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", "http://example.com/a"},
			wantCode:   1,
			wantOut:    "disallowed http://example.com/a  (Disallow: /, line 6)\n",
			wantErrSub: `is read as a User-Agent, as the proxy reads one: agent MJ12bot`,
		},
		{
			name:       "a browser's User-Agent names no crawler",
			args:       []string{"-robots", file, "-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36", "http://example.com/private/x"},
			wantCode:   1,
			wantOut:    "disallowed http://example.com/private/x  (Disallow: /private, line 2)\n",
			wantErrSub: `names no crawler`,
		},
		{
			name:       "robots.txt over the parse limit",
			args:       []string{"-robots", "-", "-agent", "x", "http://example.com/late"},
			stdin:      "User-agent: *\n#" + strings.Repeat("x", robots.DefaultMaxBytes) + "\nDisallow: /late\n",
			wantCode:   0,
			wantOut:    "allowed http://example.com/late\n",
			wantErrSub: "note: the robots.txt is larger than 512000 bytes",
		},
		{
			name:       "flag after a URL",
			args:       []string{"-robots", file, "-agent", "x", "http://example.com/", "-json"},
			wantCode:   2,
			wantErrSub: `flags must precede URLs: "-json" comes after a URL`,
		},
		{
			name:     "robots.txt itself is always allowed",
			args:     []string{"-robots", file, "-agent", "MJ12bot", "http://example.com/robots.txt"},
			wantCode: 0,
			wantOut:  "allowed http://example.com/robots.txt\n",
		},
		{
			name:     "another spelling of robots.txt is decided by the rules",
			args:     []string{"-robots", file, "-agent", "MJ12bot", "http://example.com/%72obots.txt"},
			wantCode: 1,
			wantOut:  "disallowed http://example.com/%72obots.txt  (Disallow: /, line 6)\n",
		},
		{
			name:     "json",
			args:     []string{"-robots", file, "-agent", "FooBot", "-json", "http://example.com/a?b=1&c=2", "http://example.com/private/x", "http://example.com/private/ok"},
			wantCode: 1,
			wantOut: `{"url":"http://example.com/a?b=1&c=2","allowed":true,"rule":"","line":0}
{"url":"http://example.com/private/x","allowed":false,"rule":"Disallow: /private","line":2}
{"url":"http://example.com/private/ok","allowed":true,"rule":"Allow: /private/ok","line":3}
`,
		},
		{
			name:     "stdin",
			args:     []string{"-robots", "-", "-agent", "x", "http://example.com/no"},
			stdin:    "User-agent: *\r\nDisallow: /no\r\n",
			wantCode: 1,
			wantOut:  "disallowed http://example.com/no  (Disallow: /no, line 2)\n",
		},
		{
			name:     "empty robots allows everything",
			args:     []string{"-robots", "-", "-agent", "x", "http://example.com/"},
			wantCode: 0,
			wantOut:  "allowed http://example.com/\n",
		},
		{name: "missing -robots", args: []string{"-agent", "x", "http://e/"}, wantCode: 2, wantErrSub: "-robots is required"},
		{name: "missing -agent", args: []string{"-robots", file, "http://e/"}, wantCode: 2, wantErrSub: "-agent is required"},
		{name: "no URL", args: []string{"-robots", file, "-agent", "x"}, wantCode: 2, wantErrSub: "no URL given"},
		{name: "unknown flag", args: []string{"-robots", file, "-agent", "x", "-bogus", "http://e/"}, wantCode: 2, wantErrSub: "flag provided but not defined: -bogus"},
		{name: "unreadable file", args: []string{"-robots", filepath.Join(t.TempDir(), "nope"), "-agent", "x", "http://e/"}, wantCode: 2, wantErrSub: "read robots.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := runCheck(tt.args, strings.NewReader(tt.stdin), &out, &errOut)
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tt.wantCode, errOut.String())
			}
			if tt.wantCode != 2 && out.String() != tt.wantOut {
				t.Errorf("stdout =\n%s\nwant\n%s", out.String(), tt.wantOut)
			}
			if tt.wantErrSub == "" {
				if errOut.Len() != 0 {
					t.Errorf("stderr = %q, want empty", errOut.String())
				}
				return
			}
			msg := errOut.String()
			if !strings.Contains(msg, tt.wantErrSub) || strings.Count(msg, "\n") != 1 || !strings.HasSuffix(msg, "\n") {
				t.Errorf("stderr = %q, want one line containing %q", msg, tt.wantErrSub)
			}
			if tt.wantCode == 2 && out.Len() != 0 {
				t.Errorf("stdout = %q on a usage error, want empty", out.String())
			}
		})
	}
}

// TestCheckBinary runs the real command once, through main's dispatch.
func TestCheckBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
	bin := filepath.Join(t.TempDir(), "robotsgate")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	file := writeRobots(t, checkRobots)
	cmd := exec.Command(bin, "check", "-robots", file, "-agent", "FooBot", "http://example.com/", "http://example.com/private")
	var out bytes.Buffer
	cmd.Stdout = &out
	err = cmd.Run()
	var exitErr *exec.ExitError
	if err == nil || !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
		t.Fatalf("run: err = %v, want exit status 1", err)
	}
	want := "allowed http://example.com/\ndisallowed http://example.com/private  (Disallow: /private, line 2)\n"
	if out.String() != want {
		t.Errorf("stdout =\n%s\nwant\n%s", out.String(), want)
	}
}

// TestCheckSiteExceptions: check -config applies the per-site exceptions
// as the proxy does and shows them (text and JSON).
func TestCheckSiteExceptions(t *testing.T) {
	file := writeRobots(t, checkRobots)
	conf := testsupport.WriteFile(t, "c.yaml", `sites:
  - match: "*.example.org"
    policy: deny
  - match: https://partner.example.org
    policy: allow
    note: "ticket 7"
`)
	var out, errb bytes.Buffer
	code := runCheck([]string{"-robots", file, "-agent", "Bot", "-config", conf,
		"https://www.example.org/page", "https://partner.example.org/private", "https://other.example/private"}, nil, &out, &errb)
	want := []string{
		"site-denied https://www.example.org/page  (the site exception *.example.org denies every request to this site; site *.example.org)",
		"site-exception https://partner.example.org/private  (Disallow: /private, line 2; robots.txt refuses the URL (disallowed); allowed by the site exception https://partner.example.org: ticket 7; site https://partner.example.org)",
		"disallowed https://other.example/private  (Disallow: /private, line 2)",
	}
	if code != 1 || strings.TrimSpace(out.String()) != strings.Join(want, "\n") || errb.Len() != 0 {
		t.Fatalf("exit %d\n%s\nstderr %s", code, out.String(), errb.String())
	}
	out.Reset()
	runCheck([]string{"-robots", file, "-agent", "Bot", "-config", conf, "-json", "https://partner.example.org/private"}, nil, &out, &errb)
	var res checkResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || !res.Allowed || res.Reason != "site-exception" || res.SiteNote != "ticket 7" {
		t.Fatalf("JSON: %v %s", err, out.String())
	}
	bad := testsupport.WriteFile(t, "bad.yaml", "sites:\n  - match: x.example\n    policy: allow\n")
	errb.Reset()
	if code := runCheck([]string{"-robots", file, "-agent", "Bot", "-config", bad, "https://x.example/"}, nil, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), "needs a note") {
		t.Fatalf("invalid -config: %d %s", code, errb.String())
	}
}
