package proxy

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// TestRobotTagAuditRedacted: a robot-tag refusal of a URL holding
// userinfo neither audits nor answers the password or user name. Before
// the fix the audit record carried the URL as the client gave it.
func TestRobotTagAuditRedacted(t *testing.T) {
	o := newOrigin(t, robotsBody("User-agent: *\nAllow: /\n"), tagPages("body"))
	for _, mode := range []config.RobotTagsMode{config.RobotTagsEnforce, config.RobotTagsAnnotate} {
		h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.RobotTags.Mode = mode }})
		host := strings.TrimPrefix(o.URL, "http://")
		resp, body := rawProxyGet(t, h.addr, "http://tokenuser:hunter2@"+host+"/meta-noindex", host)
		recs := tagRecords(t, h)
		if len(recs) != 1 || recs[0]["url"] != o.URL+"/meta-noindex" {
			t.Errorf("%s: robot-tag records %v, want one for %s/meta-noindex", mode, recs, o.URL)
		}
		for what, s := range map[string]string{"audit log": h.audit.String(), "response body": body} {
			if strings.Contains(s, "hunter2") || strings.Contains(s, "tokenuser") {
				t.Errorf("%s (%d): the %s holds the URL's userinfo:\n%s", mode, resp.StatusCode, what, s)
			}
		}
	}
}

// TestRobotsRedirectErrorRedacted: a robots.txt redirect to a URL with
// userinfo that cannot be fetched is reported (refusal body, audit
// record) without the userinfo, although net/http's error quotes the
// URL with its user name. Before the fix the token reached both.
func TestRobotsRedirectErrorRedacted(t *testing.T) {
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		// Port 1 on loopback: nothing listens, the fetch fails.
		http.Redirect(w, r, "http://sekrit-token:hunter2@127.0.0.1:1/robots.txt", http.StatusMovedPermanently)
	}, nil)
	h := newHarness(t, harnessOpts{})
	for _, accept := range []string{"text/plain", "application/json"} {
		resp, body := h.get(t, o.URL+"/x", "Accept", accept)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "127.0.0.1:1") {
			t.Fatalf("%d %q, want 403 naming the failed redirect", resp.StatusCode, body)
		}
		if strings.Contains(body, "sekrit") || strings.Contains(body, "hunter2") {
			t.Errorf("the refusal (%s) holds the redirect's userinfo:\n%s", accept, body)
		}
	}
	if a := h.audit.String(); !strings.Contains(a, "127.0.0.1:1") || strings.Contains(a, "sekrit") || strings.Contains(a, "hunter2") {
		t.Errorf("audit log, want the redirect named without its userinfo:\n%s", a)
	}
}

// TestUpstreamErrorRedacted: the 502 body quotes the forwarding error
// without the userinfo of URLs in it.
func TestUpstreamErrorRedacted(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "http://u:p@example.test/", nil)
	err := fmt.Errorf(`Get "http://tok:hunter2@example.test/x": dial tcp: %w`, syscall.ECONNREFUSED)
	o := upstreamOutcome(req, "", err)
	resp := refusal(req, o, false)
	b, _ := io.ReadAll(resp.Body)
	if ps := resp.Header.Get(answer.HeaderProxyStatus); strings.Contains(ps, "hunter2") || !strings.Contains(ps, "error=connection_refused") {
		t.Errorf("Proxy-Status %q", ps)
	}
	if resp.StatusCode != http.StatusBadGateway || strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "tok") ||
		strings.Contains(o.d.Detail, "hunter2") ||
		!strings.Contains(string(b), `"http://example.test/x"`) {
		t.Errorf("%d %q", resp.StatusCode, b)
	}
	// A refusal without a decision URL falls back to the request's, redacted.
	resp = answer.Refusal(req, http.StatusForbidden, enforce.Decision{Reason: enforce.ReasonDisallowed}, answer.PSDenied)
	b, _ = io.ReadAll(resp.Body)
	if strings.Contains(string(b), "u:p@") || !strings.Contains(string(b), "http://example.test/") {
		t.Errorf("refusal body %q", b)
	}
}

// TestGoproxyLogRedacted: goproxy's warnings (which quote URLs) and
// net/http's server errors reach the operator log without userinfo.
func TestGoproxyLogRedacted(t *testing.T) {
	var buf memAudit
	l := goproxyLogger{log: zerolog.New(&buf)}
	l.Printf("[%03d] WARN: Cannot parse URL %s: %v\n", 7, "https://user:hunter2@h/x", errors.New(`parse "https://user:hunter2@h/x": bad`))
	httpErrorLogWriter{log: zerolog.New(&buf).Level(zerolog.DebugLevel)}.Write([]byte("http: bad request https://tok@h/\n"))
	if s := buf.String(); strings.Contains(s, "hunter2") || strings.Contains(s, "user") || strings.Contains(s, "tok@") ||
		!strings.Contains(s, "https://h/x") {
		t.Errorf("log: %s", s)
	}
}
