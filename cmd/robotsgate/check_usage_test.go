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
				"ai-input allowed (Content-Signal: ai-input=yes, line 6); ai-use allowed (Content-Signal: ai-input=yes, line 6)\n",
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
			wantOut: `{"url":"http://e/test","allowed":false,"rule":"Content-Usage: train-ai=n","line":4,"reason":"usage-disallowed","detail":"purpose train-ai disallowed","purposes":["train-ai","search"],"usage_disallowed":["train-ai"],"usage":{"ai-input":{"pref":"allowed","source":"content-signal","rule":"Content-Signal: ai-input=yes","line":6},"ai-use":{"pref":"allowed","source":"content-signal","rule":"Content-Signal: ai-input=yes","line":6},"search":{"pref":"unknown"},"train-ai":{"pref":"disallowed","source":"content-usage","rule":"Content-Usage: train-ai=n","line":4}}}
{"url":"http://e/ai-ok/x","allowed":true,"rule":"Allow: /","line":2,"purposes":["train-ai","search"],"usage":{"ai-input":{"pref":"allowed","source":"content-signal","rule":"Content-Signal: ai-input=yes","line":6},"ai-use":{"pref":"allowed","source":"content-signal","rule":"Content-Signal: ai-input=yes","line":6},"search":{"pref":"unknown"},"train-ai":{"pref":"allowed","source":"content-usage","rule":"Content-Usage: /ai-ok/ train-ai=y","line":5}}}
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

// checkSignals states ai-use (aipref vocabulary 08), a search-only path
// and a Content Signals content-use level.
const checkSignals = "User-agent: *\nContent-Signal: search=yes, ai-train=no, use=reference\nContent-Usage: ai-use=n\n" +
	"Content-Usage: /search-only/ search=y\nAllow: /\n"

func TestCheckAIUseAndContentUse(t *testing.T) {
	file := writeRobots(t, checkSignals)
	for _, tt := range []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{
			name:     "ai-use refused by Content-Usage ai-use=n",
			args:     []string{"-robots", file, "-agent", "x", "-purpose", "ai-use", "http://e/x"},
			wantCode: 1,
			wantOut: "usage-disallowed http://e/x  (Content-Usage: ai-use=n, line 3; purpose ai-use disallowed)  " +
				"use: reference (Content-Signal: search=yes, ai-train=no, use=reference, line 2)\n",
		},
		{
			name:     "ai-use allowed where only search is stated",
			args:     []string{"-robots", file, "-agent", "x", "-purpose", "ai-use", "http://e/search-only/x"},
			wantCode: 0,
			wantOut: "allowed http://e/search-only/x  (Allow: /, line 5)  usage: ai-use unknown  " +
				"use: reference (Content-Signal: search=yes, ai-train=no, use=reference, line 2)\n",
		},
		{
			name:     "search is not held to train-ai or ai-use",
			args:     []string{"-robots", file, "-agent", "x", "-purpose", "search", "http://e/x"},
			wantCode: 0,
			wantOut: "allowed http://e/x  (Allow: /, line 5)  usage: search allowed (Content-Signal: search=yes, ai-train=no, use=reference, line 2)  " +
				"use: reference (Content-Signal: search=yes, ai-train=no, use=reference, line 2)\n",
		},
		{
			name:     "content use above the site's level",
			args:     []string{"-robots", file, "-agent", "x", "-content-use", "full", "http://e/x"},
			wantCode: 1,
			wantOut: "usage-disallowed http://e/x  (Content-Signal: search=yes, ai-train=no, use=reference, line 2; content use full is above the site's level reference)  " +
				"use: reference (Content-Signal: search=yes, ai-train=no, use=reference, line 2)\n",
		},
		{
			name:     "content use at the site's level",
			args:     []string{"-robots", file, "-agent", "x", "-content-use", "reference", "-json", "http://e/search-only/x"},
			wantCode: 0,
			wantOut: `{"url":"http://e/search-only/x","allowed":true,"rule":"Allow: /","line":5,"usage":{"search":{"pref":"allowed","source":"content-usage","rule":"Content-Usage: /search-only/ search=y","line":4},"train-ai":{"pref":"disallowed","source":"content-signal","rule":"Content-Signal: search=yes, ai-train=no, use=reference","line":2}},` +
				`"content_use":"reference","site_use":{"level":"reference","source":"content-signal","rule":"Content-Signal: search=yes, ai-train=no, use=reference","line":2}}` + "\n",
		},
		{
			name:     "content use refused, json",
			args:     []string{"-robots", file, "-agent", "x", "-content-use", "full", "-json", "http://e/x"},
			wantCode: 1,
			wantOut: `{"url":"http://e/x","allowed":false,"rule":"Content-Signal: search=yes, ai-train=no, use=reference","line":2,"reason":"usage-disallowed","detail":"content use full is above the site's level reference",` +
				`"usage":{"ai-input":{"pref":"disallowed","source":"content-usage","rule":"Content-Usage: ai-use=n","line":3},"ai-use":{"pref":"disallowed","source":"content-usage","rule":"Content-Usage: ai-use=n","line":3},"search":{"pref":"allowed","source":"content-signal","rule":"Content-Signal: search=yes, ai-train=no, use=reference","line":2},"train-ai":{"pref":"disallowed","source":"content-signal","rule":"Content-Signal: search=yes, ai-train=no, use=reference","line":2}},` +
				`"content_use":"full","site_use":{"level":"reference","source":"content-signal","rule":"Content-Signal: search=yes, ai-train=no, use=reference","line":2},"content_use_disallowed":true}` + "\n",
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
	var out, errOut bytes.Buffer
	if code := runCheck([]string{"-robots", file, "-agent", "x", "-content-use", "partial", "http://e/x"}, strings.NewReader(""), &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), "-content-use: unknown content use \"partial\": allowed values are immediate, reference, full") {
		t.Errorf("bad -content-use: exit %d, stderr %q", code, errOut.String())
	}
}
