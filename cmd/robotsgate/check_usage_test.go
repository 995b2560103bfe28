package main

import (
	"bytes"
	"strings"
	"testing"
)

// checkAttach is the attach draft's example file.
const checkAttach = "User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n" +
	"Content-Signal: ai-input=yes\n"

func TestCheckUsage(t *testing.T) {
	file := writeRobots(t, checkAttach)
	for _, tt := range []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{
			name:     "purpose train-ai",
			args:     []string{"-robots", file, "-agent", "x", "-purpose", "train-ai", "http://e/test", "http://e/never/test", "http://e/ai-ok/test"},
			wantCode: 1,
			wantOut: "usage-disallowed http://e/test  (Content-Usage: train-ai=n, line 4; purpose train-ai disallowed)\n" +
				"disallowed http://e/never/test  (Disallow: /never/, line 3)\n" +
				"allowed http://e/ai-ok/test  (Allow: /, line 2)  usage: train-ai allowed (Content-Usage: /ai-ok/ train-ai=y, line 5)\n",
		},
		{
			name:     "purpose search: unknown is allowed",
			args:     []string{"-robots", file, "-agent", "x", "-purpose", "search", "http://e/test"},
			wantCode: 0,
			wantOut:  "allowed http://e/test  (Allow: /, line 2)  usage: search unknown\n",
		},
		{
			name:     "no purpose: reported, never blocks",
			args:     []string{"-robots", file, "-agent", "x", "http://e/test"},
			wantCode: 0,
			wantOut: "allowed http://e/test  (Allow: /, line 2)  usage: train-ai disallowed (Content-Usage: train-ai=n, line 4); " +
				"ai-input allowed (Content-Signal: ai-input=yes, line 6)\n",
		},
		{
			name:     "spelling of an allowing path",
			args:     []string{"-robots", file, "-agent", "x", "-purpose", "train-ai,ai-input", "http://e/ai-ok/%2e%2e/test"},
			wantCode: 1,
			wantOut: "usage-disallowed http://e/ai-ok/%2e%2e/test  (Content-Usage: train-ai=n, line 4; purpose train-ai disallowed; " +
				"decided on the normalised path /test (dot segments resolved, repeated slashes merged, as origins do))\n",
		},
		{
			name:     "spelling of a disallowed path",
			args:     []string{"-robots", file, "-agent", "x", "http://e/a/..//never/x"},
			wantCode: 1,
			wantOut: "disallowed http://e/a/..//never/x  (Disallow: /never/, line 3; " +
				"decided on the normalised path /never/x (dot segments resolved, repeated slashes merged, as origins do))\n",
		},
		{
			name:     "json",
			args:     []string{"-robots", file, "-agent", "x", "-json", "-purpose", "train-ai,search", "http://e/test", "http://e/ai-ok/x", "http://e/never/x"},
			wantCode: 1,
			wantOut: `{"url":"http://e/test","allowed":false,"rule":"Content-Usage: train-ai=n","line":4,"reason":"usage-disallowed","detail":"purpose train-ai disallowed","purposes":["train-ai","search"],"usage_disallowed":["train-ai"],"usage":{"ai-input":{"pref":"allowed","source":"content-signal","rule":"Content-Signal: ai-input=yes","line":6},"search":{"pref":"unknown"},"train-ai":{"pref":"disallowed","source":"content-usage","rule":"Content-Usage: train-ai=n","line":4}}}
{"url":"http://e/ai-ok/x","allowed":true,"rule":"Allow: /","line":2,"purposes":["train-ai","search"],"usage":{"ai-input":{"pref":"allowed","source":"content-signal","rule":"Content-Signal: ai-input=yes","line":6},"search":{"pref":"unknown"},"train-ai":{"pref":"allowed","source":"content-usage","rule":"Content-Usage: /ai-ok/ train-ai=y","line":5}}}
{"url":"http://e/never/x","allowed":false,"rule":"Disallow: /never/","line":3,"purposes":["train-ai","search"]}
`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := runCheck(tt.args, strings.NewReader(""), &out, &errOut)
			if code != tt.wantCode || out.String() != tt.wantOut || errOut.Len() != 0 {
				t.Errorf("exit %d, want %d; stderr %q; stdout =\n%s\nwant\n%s", code, tt.wantCode, errOut.String(), out.String(), tt.wantOut)
			}
		})
	}
}

func TestCheckBadPurpose(t *testing.T) {
	var out, errOut bytes.Buffer
	code := runCheck([]string{"-robots", writeRobots(t, checkAttach), "-agent", "x", "-purpose", "train-ai,training", "http://e/"},
		strings.NewReader(""), &out, &errOut)
	if code != 2 || out.Len() != 0 || !strings.Contains(errOut.String(), `-purpose: unknown purpose "training": allowed values are train-ai, search, ai-input`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
