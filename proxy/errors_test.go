package proxy

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// rawRoundTrip writes req to the proxy at addr over its own connection
// and returns the response with its body read.
func rawRoundTrip(t *testing.T, addr, req string) (*http.Response, string) {
	t.Helper()
	c := dialRaw(t, addr)
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%.80q: %v", req, err) // req may be kilobytes long
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// proxyStatus parses resp's Proxy-Status as an RFC 9651 list and returns
// its error and details parameters; the test fails unless robotsgate is
// its one member.
func proxyStatus(t *testing.T, resp *http.Response) (errType, details string) {
	t.Helper()
	l, err := httpsfv.UnmarshalList(resp.Header.Values(answer.HeaderProxyStatus))
	if err != nil || len(l) != 1 {
		t.Fatalf("Proxy-Status %q: %v", resp.Header.Values(answer.HeaderProxyStatus), err)
	}
	item := l[0].(httpsfv.Item)
	if item.Value != httpsfv.Token("robotsgate") {
		t.Fatalf("Proxy-Status names %v", item.Value)
	}
	e, _ := item.Params.Get("error")
	d, _ := item.Params.Get("details")
	et, _ := e.(httpsfv.Token)
	ds, _ := d.(string)
	return string(et), ds
}

// A failed forward is a 502 naming the origin and the error, as JSON or
// text as the client asks, with the decision header and Proxy-Status,
// logged and audited.
func TestUpstreamErrorSaysWhat(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), func(w http.ResponseWriter, r *http.Request) {
		if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
			c.Close() // hang up without answering
		}
	})
	h := newHarness(t, harnessOpts{})
	host := strings.TrimPrefix(o.URL, "http://")
	resp, body := rawRoundTrip(t, h.addr, "GET "+o.URL+"/a?x=1&y=2 HTTP/1.1\r\nHost: "+host+
		"\r\nAccept: application/json\r\nUser-Agent: TestBot/1.0\r\nConnection: close\r\n\r\n")
	var j map[string]any
	if err := json.Unmarshal([]byte(body), &j); err != nil {
		t.Fatalf("%d %q: not JSON: %v", resp.StatusCode, body, err)
	}
	if resp.StatusCode != 502 || resp.Header.Get(answer.HeaderDecision) != "upstream-error" || j["decision"] != "blocked" ||
		j["reason"] != "upstream-error" || j["origin"] != o.URL || !strings.Contains(j["detail"].(string), "EOF") ||
		!strings.Contains(j["error"].(string), o.URL) {
		t.Fatalf("%d %s %v", resp.StatusCode, resp.Header.Get(answer.HeaderDecision), j)
	}
	if strings.Contains(body, `\u0026`) || !strings.Contains(body, "x=1&y=2") {
		t.Errorf("JSON escapes &: %s", body)
	}
	if e, d := proxyStatus(t, resp); e != answer.PSTerminated || !strings.Contains(d, "upstream-error") || !strings.Contains(d, o.URL) {
		t.Errorf("Proxy-Status error=%s details=%q", e, d)
	}
	resp, body = h.get(t, o.URL+"/b")
	if resp.StatusCode != 502 || !strings.HasPrefix(body, "robotsgate: bad gateway: forwarding to "+o.URL+" failed") ||
		!strings.Contains(body, "reason:   upstream-error") {
		t.Errorf("text: %d %q", resp.StatusCode, body)
	}
	if rec := h.audit.Find(t, "upstream-error"); rec["status"] != 502.0 || rec["origin"] != o.URL || rec["decision"] != "blocked" {
		t.Errorf("audit %v", rec)
	}
}

// Every answer robotsgate writes itself says in Proxy-Status (RFC 9209)
// what happened: policy refusals are http_request_denied, unreachable
// origins name their failure, and the origin-unreachable answer says when
// robots.txt is tried again.
func TestProxyStatusOnOwnAnswers(t *testing.T) {
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	slow := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-never:
		case <-r.Context().Done():
		}
	}, nil)
	o := newOrigin(t, robotsBody(privateRobots), nil)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) {
		c.Robots.FetchTimeout = 300 * time.Millisecond
		c.MaxURLBytes = 2048
	}})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	cases := []struct {
		url, errType, reason string
		status               int
	}{
		{o.URL + "/private", answer.PSDenied, "disallowed", 403},
		{o.URL + "/" + strings.Repeat("a", 3000), answer.PSRequestError, "url-too-long", 414},
		{dead + "/x", answer.PSRefused, "origin-unreachable", 502},
		{slow.URL + "/x", answer.PSConnTimeout, "origin-unreachable", 504},
		{"http://no-such-host.invalid/x", answer.PSDNS, "origin-unreachable", 502},
	}
	for _, c := range cases {
		resp, body := h.get(t, c.url)
		e, d := proxyStatus(t, resp)
		if resp.StatusCode != c.status || e != c.errType || resp.Header.Get(answer.HeaderDecision) != c.reason || !strings.HasPrefix(d, c.reason) {
			t.Errorf("%.60s: %d %s error=%s details=%q\n%s", c.url, resp.StatusCode, resp.Header.Get(answer.HeaderDecision), e, d, body)
		}
		if c.reason == "origin-unreachable" && (resp.Header.Get("Retry-After") != "10" ||
			!strings.Contains(body, "robots.txt is tried again in 10s") || !strings.Contains(body, "could not be reached")) {
			t.Errorf("%s: Retry-After %q, body %q", c.url, resp.Header.Get("Retry-After"), body)
		}
	}
	// A CONNECT to a port not allowed says so, in the body and in Proxy-Status.
	resp, body := rawRoundTrip(t, h.addr, "CONNECT 127.0.0.1:8443 HTTP/1.1\r\nHost: 127.0.0.1:8443\r\n\r\n")
	if e, d := proxyStatus(t, resp); resp.StatusCode != 403 || e != answer.PSDenied ||
		!strings.Contains(d, "CONNECT to port 8443 is not allowed (https.allowed_ports)") ||
		!strings.Contains(body, "CONNECT to port 8443 is not allowed (https.allowed_ports)") {
		t.Errorf("CONNECT: %d error=%s details=%q\n%s", resp.StatusCode, e, d, body)
	}
}

// One vocabulary: the 403's JSON, its audit record and /v1/decision use
// the same names for the same things (decision, reason, agent).
func TestVocabularyConsistent(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), nil)
	h := newHarness(t, harnessOpts{})
	resp, body := h.get(t, o.URL+"/private?a=1&b=2", "Accept", "application/json", "User-Agent", "(compatible)")
	var refusal map[string]any
	if err := json.Unmarshal([]byte(body), &refusal); err != nil || resp.StatusCode != 403 {
		t.Fatalf("%d %q: %v", resp.StatusCode, body, err)
	}
	rec := h.audit.Find(t, "disallowed")
	for _, k := range []string{"decision", "reason", "agent", "url", "origin"} {
		if refusal[k] != rec[k] {
			t.Errorf("%s: 403 says %v, audit says %v", k, refusal[k], rec[k])
		}
	}
	if refusal["decision"] != "blocked" || refusal["reason"] != "disallowed" || refusal["agent"] != "*" {
		t.Errorf("403 %v", refusal)
	}
	if strings.Contains(body, `\u0026`) {
		t.Errorf("403 JSON escapes &: %s", body)
	}
}
