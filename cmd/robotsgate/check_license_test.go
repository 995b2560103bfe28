package main

import (
	"bytes"
	"strings"
	"testing"
)

// checkLicenseFile is rsl.md's worked example, with a content that needs
// a License Server's token.
const checkLicenseFile = `<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/"><license><permits type="usage">all</permits></license></content>
  <content url="/articles/"><license><prohibits type="usage">ai-train</prohibits></license></content>
  <content url="https://p.com/paid/" server="https://ls.example"><license/></content>
  <content url="/x/"><license><unknown/></license></content>
</rsl>`

func TestCheckLicense(t *testing.T) {
	file := writeRobots(t, checkLicenseFile)
	for _, tc := range []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		wantOut  []string
		wantErr  string
	}{
		{"prohibited", []string{"-license", file, "-purpose", "train-ai", "https://p.com/articles/1", "https://p.com/news"}, "", 1,
			[]string{`prohibited https://p.com/articles/1  (ai-train by <content url="/articles/">)`, "permitted https://p.com/news"}, "unknown RSL element <unknown>"},
		{"search permitted", []string{"-license", file, "-purpose", "search", "https://p.com/articles/1"}, "", 0,
			[]string{"permitted https://p.com/articles/1"}, "note"},
		{"spelling", []string{"-license", file, "-purpose", "train-ai", "https://p.com/x/../articles/1"}, "", 1,
			[]string{"prohibited https://p.com/x/../articles/1", "decided on the normalised path"}, "note"},
		{"server", []string{"-license", file, "-purpose", "search", "-json", "https://P.com:443/paid/1", "https://q.com/paid/1"}, "", 1,
			[]string{`"license":"required","license_use":"search","license_content":"https://p.com/paid/","license_server":"https://ls.example"`,
				`{"url":"https://q.com/paid/1","license":"permitted"}`}, "note"},
		{"no purpose", []string{"-license", file, "https://p.com/"}, "", 2, nil, "-license needs -purpose"},
		{"not rsl", []string{"-license", "-", "-purpose", "search", "https://p.com/"}, `<rsl><content url="/"/></rsl>`, 2, nil, "not an RSL document"},
		{"with robots", []string{"-robots", writeRobots(t, "User-agent: *\nAllow: /\n"), "-agent", "Bot", "-purpose", "train-ai",
			"-license", file, "https://p.com/articles/1"}, "", 1, []string{"allowed https://p.com/articles/1", "prohibited https://p.com/articles/1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errb := runCheckInOrder(t, tc.args, tc.stdin, tc.wantCode, tc.wantOut)
			if tc.wantErr != "" && !strings.Contains(errb, tc.wantErr) {
				t.Fatalf("stderr lacks %q: %s", tc.wantErr, errb)
			}
		})
	}
}

// runCheckInOrder runs the check subcommand on args with stdin, checks its
// exit code and that stdout holds each of wantOut in order, and returns
// stderr.
func runCheckInOrder(t *testing.T, args []string, stdin string, wantCode int, wantOut []string) string {
	t.Helper()
	var out, errb bytes.Buffer
	code := runCheck(args, strings.NewReader(stdin), &out, &errb)
	if code != wantCode {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, wantCode, out.String(), errb.String())
	}
	rest := out.String()
	for _, w := range wantOut {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("stdout lacks %q (in order):\n%s", w, out.String())
		}
		rest = rest[i+len(w):]
	}
	return errb.String()
}
