package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

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
