package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/safetext"
)

// unsafeIn returns the unsafe runes of s (see safetext.Unsafe), line
// feeds aside, quoted; "" when there are none.
func unsafeIn(s string) string {
	var bad []string
	for _, r := range s {
		if r != '\n' && safetext.Unsafe(r) {
			bad = append(bad, safetext.Escape(string(r)))
		}
	}
	return strings.Join(bad, " ")
}

// TestControlCharactersEscapedEverywhere: a hostile robots.txt rule and a
// client's agent override holding C1 controls (CSI, OSC) and bidi
// controls reach the 403 body (text and JSON), the X-Robotsgate-*
// headers and the audit line only escaped.
func TestControlCharactersEscapedEverywhere(t *testing.T) {
	o := newOrigin(t, robotsBody("User-agent: *\nDisallow: /p\u009b31m\u202e\u009d0;x\u0007\n"), nil)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.Agent, c.Audit = "MyBot", config.AuditAll }})
	for _, accept := range []string{"text/plain", "application/json"} {
		resp, body := h.get(t, o.URL+"/p%C2%9B31m%E2%80%AE%C2%9D0;x%07", "Accept", accept,
			"X-Robots-Agent", "Evil\u009b2J\u202eBot\u2066")
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("%s: %d, want 403", accept, resp.StatusCode)
		}
		if bad := unsafeIn(body); bad != "" {
			t.Errorf("%s body holds %s:\n%s", accept, bad, body)
		}
		for k, vs := range resp.Header {
			if bad := unsafeIn(strings.Join(vs, ",")); bad != "" {
				t.Errorf("%s header %s holds %s: %q", accept, k, bad, vs)
			}
		}
	}
	lines := h.audit.String()
	if !strings.Contains(lines, "agent_override_refused") || !strings.Contains(lines, `\u009b31m`) {
		t.Fatalf("audit lacks the refused override or the rule:\n%s", lines)
	}
	if bad := unsafeIn(lines); bad != "" {
		t.Errorf("audit lines hold %s:\n%s", bad, lines)
	}
	rec := h.audit.Find(t, "disallowed")
	if rec["agent_override_refused"] != "Evil\u009b2J\u202eBot\u2066" || !strings.Contains(rec["rule"].(string), "\u009b31m\u202e") {
		t.Errorf("the audit record does not decode to the original text: %q %q", rec["agent_override_refused"], rec["rule"])
	}
}
