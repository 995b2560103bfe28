package proxy

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
	resp := refuseResponse(r, http.StatusForbidden, d, psDenied)
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
	resp = refuseResponse(r, http.StatusTooManyRequests, d, psDenied)
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
