package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// checkTDMFile is the TDMRep report's second tdmrep.json example, with a
// rule of a protocol error added.
const checkTDMFile = `[
  {"location": "/directory-a/", "tdm-reservation": 1},
  {"location": "/directory-b/html/", "tdm-reservation": 1, "tdm-policy": "https://provider.com/policies/policy.json"},
  {"location": "/directory-b/images/*.jpg", "tdm-reservation": 0},
  {"location": "/odd/", "tdm-reservation": 2}
]`

func TestCheckTDMRep(t *testing.T) {
	file := writeRobots(t, checkTDMFile)
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		wantOut  []string // substrings of stdout, in order
		wantErr  string   // substring of stderr; "" means empty
	}{
		{"reserved", []string{"-tdmrep", file, "https://p.com/directory-b/html/x.html"}, "", 1,
			[]string{"reserved https://p.com/directory-b/html/x.html", "rule 2", "tdm-policy: https://provider.com/policies/policy.json"}, "rule 4"},
		{"not reserved and unset", []string{"-tdmrep", file, "https://p.com/directory-b/images/a.jpg", "https://p.com/other", "https://p.com/odd/x"}, "", 0,
			[]string{"not-reserved https://p.com/directory-b/images/a.jpg", "unset https://p.com/other  (no rule matches)", "unset https://p.com/odd/x  (rule 4"}, "protocol error"},
		{"spelling", []string{"-tdmrep", file, "https://p.com/%64irectory-a/x", "https://p.com/a/..//directory-a/x"}, "", 1,
			[]string{"reserved https://p.com/%64irectory-a/x", "reserved https://p.com/a/..//directory-a/x", "decided on the normalised path"}, "rule 4"},
		{"stdin", []string{"-tdmrep", "-", "https://p.com/"}, `[{"location": "/", "tdm-reservation": 1}]`, 1, []string{"reserved https://p.com/"}, ""},
		{"invalid", []string{"-tdmrep", "-", "https://p.com/"}, `<html>not found</html>`, 2, nil, "not a JSON array"},
		{"missing", []string{"-tdmrep", file + ".none", "https://p.com/"}, "", 2, nil, "read tdmrep.json"},
		{"with robots", []string{"-robots", writeRobots(t, "User-agent: *\nAllow: /\n"), "-agent", "Bot", "-tdmrep", file, "https://p.com/directory-a/x"}, "", 1,
			[]string{"allowed https://p.com/directory-a/x", "reserved https://p.com/directory-a/x"}, "rule 4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errb := runCheckInOrder(t, tc.args, tc.stdin, tc.wantCode, tc.wantOut)
			if (tc.wantErr == "") != (errb == "") || !strings.Contains(errb, tc.wantErr) {
				t.Fatalf("stderr %q, want %q", errb, tc.wantErr)
			}
		})
	}
}

func TestCheckTDMRepJSON(t *testing.T) {
	file := writeRobots(t, checkTDMFile)
	var out, errb bytes.Buffer
	if code := runCheck([]string{"-tdmrep", file, "-json", "https://p.com/directory-b/html/x"}, nil, &out, &errb); code != 1 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errb.String())
	}
	var r tdmCheckResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || !r.Reserved || r.Reservation != "1" ||
		r.Policy != "https://provider.com/policies/policy.json" || !strings.HasPrefix(r.Rule, "rule 2:") {
		t.Fatalf("%v %+v", err, r)
	}
}
