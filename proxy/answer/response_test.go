package answer

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/politeness"
)

func TestRefuse(t *testing.T) {
	d := enforce.Decision{
		Reason: enforce.ReasonRobotsUnreachable, Origin: "http://a.test", URL: "http://a.test/x",
		RobotsStatus: enforce.StatusUnreachable, RobotsHTTPStatus: 503, RobotsAge: time.Minute,
		Detail: "robots.txt unreachable (HTTP 503): all URLs disallowed",
	}
	r := httptest.NewRequest(http.MethodGet, "http://a.test/x", nil)
	resp := Refusal(r, http.StatusForbidden, d, PSDenied)
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	if resp.StatusCode != 403 || resp.Header.Get(HeaderDecision) != "robots-unreachable" || resp.Header.Get(HeaderRule) != "" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	for _, want := range []string{"agent:    * (no agent known", "HTTP 503", "could not be fetched", d.Detail} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	if resp.Header.Get("Content-Length") != strconv.Itoa(len(b)) || resp.ContentLength != int64(len(b)) {
		t.Errorf("Content-Length %q for %d bytes", resp.Header.Get("Content-Length"), len(b))
	}

	// Retry-After, rounded up to seconds; HEAD gets no body.
	d.RetryAfter = 1500 * time.Millisecond
	d.Reason = politeness.ReasonOriginPaused
	r = httptest.NewRequest(http.MethodHead, "http://a.test/x", nil)
	resp = Refusal(r, http.StatusTooManyRequests, d, PSDenied)
	if resp.Header.Get("Retry-After") != "2" || resp.StatusCode != 429 {
		t.Fatalf("Retry-After %q status %d", resp.Header.Get("Retry-After"), resp.StatusCode)
	}
	if b, _ := io.ReadAll(resp.Body); len(b) != 0 {
		t.Fatalf("HEAD refusal has a body: %q", b)
	}

	// Rule header values are single lines.
	d = enforce.Decision{Reason: enforce.ReasonDisallowed, Rule: "Disallow: /a\x01b", Line: 4}
	if got := ruleHeader(d); got != "Disallow: /ab; line 4" {
		t.Fatalf("ruleHeader = %q", got)
	}
}

func TestWantsJSON(t *testing.T) {
	cases := map[string]bool{
		"":                                  false,
		"text/html":                         false,
		"application/json":                  true,
		"text/html, application/json;q=0.5": true,
		"application/problem+json":          true,
		"*/*":                               false,
		"application/jsonx":                 false,
	}
	for accept, want := range cases {
		r := httptest.NewRequest(http.MethodGet, "http://a.test/", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := wantsJSON(r); got != want {
			t.Errorf("Accept %q: %v, want %v", accept, got, want)
		}
	}
}

// TestRefusalKeepsClientConnection: a plain-HTTP refusal (403, audited)
// leaves the client's keep-alive connection open: the next request on it,
// allowed, is forwarded and answered on the same connection.
// The statuses statusLine spells out are those net/http would build, and
// a value of a refusal's headers grows on its own when added to.
func TestAnswerStatusLineAndHeaders(t *testing.T) {
	for code := 100; code < 600; code++ {
		if got, want := statusLine(code), strconv.Itoa(code)+" "+http.StatusText(code); got != want {
			t.Errorf("statusLine(%d) = %q, want %q", code, got, want)
		}
	}
	for _, d := range []enforce.Decision{{Reason: enforce.ReasonDisallowed}, {Reason: ReasonUpstreamError, Origin: "http://a.test"}} {
		if got, want := headline(http.StatusForbidden, d), "robotsgate: "+strings.ToLower(http.StatusText(403)); !strings.HasPrefix(got, want) {
			t.Errorf("headline(403, %s) = %q", d.Reason, got)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "http://a.test/x", nil)
	resp := Refusal(r, http.StatusForbidden, enforce.Decision{Reason: enforce.ReasonDisallowed, Rule: "Disallow: /x", Line: 2}, PSDenied)
	resp.Header.Add(HeaderDecision, "second")
	if got := resp.Header.Values(HeaderDecision); len(got) != 2 || got[0] != "disallowed" {
		t.Errorf("%s after Add: %q", HeaderDecision, got)
	}
	if got := resp.Header.Get(HeaderAgent); got != "*" {
		t.Errorf("%s after an Add to another header: %q", HeaderAgent, got)
	}
	for k := range resp.Header {
		if k != http.CanonicalHeaderKey(k) {
			t.Errorf("header key %q is not canonical", k)
		}
	}
}
