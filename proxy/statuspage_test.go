package proxy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
)

// statusGet sends GET path to the admin API at addr with the
// Authorization value auth ("" for none).
func statusGet(t *testing.T, addr, path, auth string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	c := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: testTimeout}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp
}

// TestStatusPage: the page and its data and stream need the admin token
// when one is set, even on loopback (bearer, or basic authentication as a
// browser sends it); a refusal appears on the stream and in the counts;
// the summary holds no secret; an open stream does not hold up shutdown.
func TestStatusPage(t *testing.T) {
	const token = "s3cret-admin-token"
	o := newOrigin(t, robotsBody(privateRobots), nil)
	var stream io.Closer
	t.Cleanup(func() { // after the harness's shutdown, which must not wait for the stream
		if stream != nil {
			stream.Close()
		}
	})
	h := newHarness(t, harnessOpts{config: func(c *config.Config) {
		c.AdminToken = token
		c.Cache = "redis://user:pw-in-url@127.0.0.1:1/0"
	}})
	basic := "Basic " + "b3BlcmF0b3I6czNjcmV0LWFkbWluLXRva2Vu" // operator:s3cret-admin-token
	statusRefusedWithoutToken(t, h.addr)
	resp := statusGet(t, h.addr, "/", basic)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "/status/app.js") ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("GET / with the token: %d %v\n%s", resp.StatusCode, resp.Header, page)
	}

	ev := statusGet(t, h.addr, "/v1/events", "Bearer "+token)
	stream = ev.Body
	if ev.StatusCode != http.StatusOK || ev.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /v1/events: %d %v", ev.StatusCode, ev.Header)
	}
	br := bufio.NewReader(ev.Body)
	if l, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(l, ":") {
		t.Fatalf("first line of the stream: %q %v", l, err)
	}
	if r, _ := h.get(t, o.URL+"/private/<b>x</b>"); r.StatusCode != http.StatusForbidden {
		t.Fatalf("proxy: %d", r.StatusCode)
	}
	var got map[string]any
	for got == nil {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		if data, ok := strings.CutPrefix(l, "data: "); ok {
			if err := json.Unmarshal([]byte(data), &got); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
		}
	}
	if got["decision"] != "blocked" || got["reason"] != "disallowed" || !strings.HasSuffix(fmt.Sprint(got["url"]), "/private/%3Cb%3Ex%3C/b%3E") {
		t.Errorf("event %v", got)
	}

	checkStatusData(t, h.addr, basic, o.URL, token)
}

// statusRefusedWithoutToken: the page, its assets, data and stream
// answer 401 asking for basic authentication without the token and with
// a wrong one.
func statusRefusedWithoutToken(t *testing.T, addr string) {
	t.Helper()
	for _, path := range []string{"/", "/status/app.js", "/v1/status", "/v1/events"} {
		resp := statusGet(t, addr, path, "")
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(strings.Join(resp.Header.Values("WWW-Authenticate"), ","), "Basic") {
			t.Errorf("GET %s without the token: %d %v, want 401 asking for basic authentication", path, resp.StatusCode, resp.Header)
		}
		resp = statusGet(t, addr, path, "Basic b3BlcmF0b3I6d3Jvbmc=") // operator:wrong
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s with a wrong password: %d, want 401", path, resp.StatusCode)
		}
	}
}

// checkStatusData: /v1/status counts the one refusal of origin, shows the
// cache mode without credentials and no secret.
func checkStatusData(t *testing.T, addr, auth, origin, token string) {
	t.Helper()
	resp := statusGet(t, addr, "/v1/status", auth)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var st struct {
		Refusals int64 `json:"refusals"`
		Top      []struct {
			Origin string `json:"origin"`
			Count  int64  `json:"count"`
		} `json:"top_refused_origins"`
		Cache struct {
			Mode string `json:"mode"`
		} `json:"cache"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("/v1/status: %v\n%s", err, body)
	}
	if st.Refusals != 1 || len(st.Top) != 1 || st.Top[0].Origin != origin || st.Cache.Mode != "redis://127.0.0.1:1" {
		t.Errorf("/v1/status: %s", body)
	}
	for _, secret := range []string{token, "pw-in-url", "user:"} {
		if strings.Contains(string(body), secret) {
			t.Errorf("/v1/status shows the secret %q: %s", secret, body)
		}
	}
}

// TestStatusStreamStalledAuditComplete: an event stream whose client
// reads nothing never holds up or loses an audit record.
func TestStatusStreamStalledAuditComplete(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), nil)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.AdminToken = "tok" }})
	conn, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096) // fills at once: the server's writes block
	}
	fmt.Fprintf(conn, "GET /v1/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer tok\r\n\r\n", h.addr)
	const n = 600 // more than a stream's buffer
	for i := range n {
		if r, _ := h.get(t, fmt.Sprintf("%s/private/%d-%s", o.URL, i, strings.Repeat("p", 2000))); r.StatusCode != http.StatusForbidden {
			t.Fatalf("request %d: %d", i, r.StatusCode)
		}
	}
	// Each record is written before its refusal is answered.
	if got := len(h.audit.Records(t)); got != n {
		t.Fatalf("%d audit records, want %d", got, n)
	}
}
