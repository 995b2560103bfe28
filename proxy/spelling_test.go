package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/audit/query"
)

// rawGet sends the request line "GET target HTTP/1.1" to the proxy at
// addr as raw bytes, so that no client library rewrites target, and
// returns the status and body of the answer.
func rawGet(t *testing.T, addr, target, host string) (int, string) {
	t.Helper()
	c := dialRaw(t, addr)
	defer c.Close()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: TestBot/1.0\r\nConnection: close\r\n\r\n", target, host)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", target, err)
	}
	return resp.StatusCode, string(b)
}

// TestPathSpellingsThroughProxy sends spellings of a disallowed path that
// origins resolve to it (path parameters, backslashes, escaped reserved
// characters, dot segments) as raw request lines: none may reach the
// origin, and each refusal is audited with the spelling that decided.
func TestPathSpellingsThroughProxy(t *testing.T) {
	o := newOrigin(t, robotsBody("User-agent: *\nAllow: /public\nDisallow: /private\n"), nil)
	h := newHarness(t, harnessOpts{})
	host := strings.TrimPrefix(o.URL, "http://")
	blocked := []string{
		"/;x/private",
		"/;jsessionid=1/private",
		`/\private`,
		"/%5Cprivate",
		"/%5cprivate/x",
		"/%3Bx/private",
		"/%2e%2e/;x/%5Cprivate",
		"/public%2F..%2Fprivate",
		"/public;a/..;b/private",
	}
	for _, p := range blocked {
		if code, body := rawGet(t, h.addr, o.URL+p, host); code != http.StatusForbidden {
			t.Errorf("GET %s: %d %q, want 403", p, code, body)
		}
	}
	if n := o.hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the origin", n)
	}
	n := 0
	for _, r := range h.audit.Records(t) {
		if r["reason"] == string(enforce.ReasonDisallowed) &&
			strings.Contains(fmt.Sprint(r["detail"]), "normalised path /private") {
			n++
		}
	}
	if n != len(blocked) {
		t.Errorf("%d audit records name the normalised path /private, want %d:\n%s", n, len(blocked), h.audit.String())
	}
	for _, p := range []string{"/public;x", `/public\x`, "/public?next=;/private"} {
		if code, body := rawGet(t, h.addr, o.URL+p, host); code != http.StatusOK {
			t.Errorf("GET %s: %d %q, want 200", p, code, body)
		}
	}
}

// TestOriginSpellingsAgree: GET /v1/robots?origin= and "robotsgate audit
// -origin" (its query.Filter) accept the same spellings of an origin: the
// origin, any URL of it, the bare host:port, in any case.
func TestOriginSpellingsAgree(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), nil)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.Audit = config.AuditAll }})
	if r, _ := h.get(t, o.URL+"/private/x"); r.StatusCode != http.StatusForbidden {
		t.Fatalf("proxy: %d", r.StatusCode)
	}
	hostPort := strings.TrimPrefix(o.URL, "http://")
	for _, sp := range []string{o.URL, o.URL + "/", o.URL + "/any/page?q=1", hostPort, "HTTP://" + strings.ToUpper(hostPort), " " + hostPort} {
		code, body := adminDo(t, http.MethodGet, "http://"+h.addr, "/v1/robots?origin="+url.QueryEscape(sp), "", nil)
		if code != http.StatusOK || !strings.Contains(body, `"origin": "`+o.URL+`"`) {
			t.Errorf("/v1/robots?origin=%s: %d %s", sp, code, body)
		}
		sc, err := query.NewScanner(query.Filter{Origin: sp})
		if err != nil {
			t.Errorf("audit -origin %q: %v", sp, err)
			continue
		}
		n := 0
		if err := sc.Scan(strings.NewReader(h.audit.String()), "audit", func(*query.Fields, []byte) error { n++; return nil }); err != nil || n != 1 {
			t.Errorf("audit -origin %q: %d records, %v; want 1", sp, n, err)
		}
	}
	for _, bad := range []string{"ftp://" + hostPort, "http://", "http:///x"} {
		code, _ := adminDo(t, http.MethodGet, "http://"+h.addr, "/v1/robots?origin="+url.QueryEscape(bad), "", nil)
		_, err := query.NewScanner(query.Filter{Origin: bad})
		if code != http.StatusBadRequest || err == nil {
			t.Errorf("%q: /v1/robots %d, audit %v; want both refused", bad, code, err)
		}
	}
}

// TestOriginUserInfoRefused: user information is no part of an origin,
// for /v1/robots as for audit -origin.
func TestOriginUserInfoRefused(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	for _, bad := range []string{"https://user@example.com", "user:pw@example.com"} {
		code, _ := adminDo(t, http.MethodGet, "http://"+h.addr, "/v1/robots?origin="+url.QueryEscape(bad), "", nil)
		_, err := query.NewScanner(query.Filter{Origin: bad})
		if code != http.StatusBadRequest || err == nil {
			t.Errorf("%q: /v1/robots %d, audit %v; want both refused", bad, code, err)
		}
	}
}
