package proxy

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/audit/query"
)

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
