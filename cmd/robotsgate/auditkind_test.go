package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// auditKindFile writes an audit file with two request records and a
// configuration reload's record, as robotsgate writes them.
func auditKindFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "audit.log")
	lines := `{"time":"2026-11-27T10:00:00Z","decision":"blocked","reason":"disallowed","url":"http://a.example/private","origin":"http://a.example","agent":"Bot","rule":"Disallow: /private","line":2}
{"time":"2026-11-27T10:00:01Z","kind":"config-reload","reason":"ok","mode":"enforce","method":"SIGHUP","detail":"changed: agent"}
{"time":"2026-11-27T10:00:02Z","decision":"blocked","reason":"robots-unreachable","url":"http://b.example/x","origin":"http://b.example","agent":"Bot"}
`
	if err := os.WriteFile(p, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAuditKinds: reload records stay out of request views unless asked
// for with -kind, and are labelled by their kind when shown.
func TestAuditKinds(t *testing.T) {
	p := auditKindFile(t)
	for _, tc := range []struct {
		args       []string
		want, lack []string
	}{
		{[]string{p}, []string{"disallowed", "robots-unreachable"}, []string{"config-reload", " ok "}},
		{[]string{"-summary", p}, []string{"disallowed", "robots-unreachable"}, []string{"config-reload", " ok "}},
		{[]string{"-kind", "config-reload", p}, []string{"config-reload  ok"}, []string{"disallowed"}},
		{[]string{"-kind", "all", "-summary", p}, []string{"(config-reload)", "disallowed"}, nil},
		{[]string{"-kind", "config-reload", "-json", p}, []string{`"method":"SIGHUP"`}, []string{"a.example"}},
	} {
		code, out, errOut := runAuditTest(t, nil, tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, out)
			}
		}
		for _, l := range tc.lack {
			if strings.Contains(out, l) {
				t.Errorf("%v: output holds %q:\n%s", tc.args, l, out)
			}
		}
	}
}

// TestAuditRefusesUnknownValues: a misspelled -reason or -kind is refused
// with the known values and a suggestion, as -decision is, and a
// mistyped flag gets a suggestion.
func TestAuditRefusesUnknownValues(t *testing.T) {
	p := auditKindFile(t)
	for args, want := range map[string]string{
		"-reason dissallowed":     `-reason: "dissallowed" is not a reason robotsgate records (did you mean "disallowed"?) (reasons: `,
		"-reason disallowed,nope": `"nope" is not a reason`,
		"-kind reload":            `-kind: "reload" is not one of request, config-reload, audit-digest, volume, all`,
		"-orign http://a.example": `flag provided but not defined: -orign (did you mean -origin?)`,
	} {
		code, out, errOut := runAuditTest(t, nil, append(strings.Fields(args), p)...)
		if code != 2 || out != "" || !strings.Contains(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2 and one line with %q", args, code, out, errOut, want)
		}
	}
	if code, _, errOut := runAuditTest(t, nil, "-reason", "tunnel-unenforced,ok,site-denied", p); code != 0 {
		t.Errorf("known reasons refused: %s", errOut)
	}
}
