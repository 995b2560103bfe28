package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
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
