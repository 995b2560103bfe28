package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// nearMissPage is a page of the near-miss tests: its status, headers
// (name, value pairs) and body.
type nearMissPage struct {
	status int
	hdr    []string
	body   string
}

const (
	nearMissPlain   = `<!doctype html><html><head><title>t</title></head><body>kept</body></html>`
	nearMissNoindex = `<!doctype html><html><head><title>t</title><meta name="robots" content="noindex"></head><body>secret</body></html>`
)

// ebcdic is s in EBCDIC (IBM code page 037).
func ebcdic(s string) string {
	b, err := charmap.CodePage037.NewEncoder().String(s)
	if err != nil {
		panic(err)
	}
	return b
}

var nearMissPages = map[string]nearMissPage{
	"/semicolon":    {200, []string{"X-Robots-Tag", "noindex; nofollow"}, nearMissPlain},
	"/quoted":       {200, []string{"X-Robots-Tag", `"noindex"`}, nearMissPlain},
	"/spaced":       {200, []string{"X-Robots-Tag", "nofollow noindex"}, nearMissPlain},
	"/scoped-other": {200, []string{"X-Robots-Tag", "googlebot: noindex"}, nearMissPlain},
	"/scoped-self":  {200, []string{"X-Robots-Tag", "testbot: noindex; nofollow"}, nearMissPlain},
	"/404-meta":     {404, nil, nearMissNoindex},
	"/404-plain":    {404, nil, nearMissPlain},
	"/500-header":   {500, []string{"X-Robots-Tag", "noindex"}, nearMissPlain},
	"/304":          {304, []string{"X-Robots-Tag", "noindex"}, ""},
	"/304-plain":    {304, nil, ""},
	"/noscript": {200, nil, `<html><head><title>t</title><noscript><meta name="robots" content="noindex"></noscript>` +
		`</head><body>secret</body></html>`},
	"/noscript-body": {200, nil, `<html><head><title>t</title></head><body><noscript><meta name="robots" content="noindex"></noscript>kept</body></html>`},
	"/ibm037":        {200, []string{"Content-Type", "text/html; charset=ibm037"}, ebcdic(nearMissNoindex)},
	"/utf7":          {200, []string{"Content-Type", "text/html; charset=UTF-7"}, `+ADw-html+AD4APA-head+AD4APA-meta name=+ACI-robots+ACI- content=+ACI-noindex+ACI-+AD4-`},
	"/meta-utf7":     {200, nil, `<html><head><meta charset="utf-7">+ADw-meta name=+ACI-robots+ACI- content=+ACI-noindex+ACI-+AD4-</head></html>`},
	"/equiv-ibm037":  {200, nil, `<html><head><meta http-equiv="Content-Type" content="text/html; charset=IBM037"></head><body>kept</body></html>`},
	"/unknown-label": {200, []string{"Content-Type", `text/html; charset="x-frob"`}, nearMissPlain},
	"/latin1":        {200, []string{"Content-Type", "text/html; charset=ISO-8859-1"}, nearMissPlain},
	"/shift-jis":     {200, []string{"Content-Type", "text/html; charset=Shift_JIS"}, nearMissPlain},
	"/404-br":        {404, []string{"Content-Encoding", "br"}, "\x8b\x02\x80garbage"},
}

func serveNearMiss(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		io.WriteString(w, "User-agent: *\nAllow: /\n")
		return
	}
	p := nearMissPages[r.URL.Path]
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	for i := 0; i+1 < len(p.hdr); i += 2 {
		w.Header().Set(p.hdr[i], p.hdr[i+1])
	}
	w.WriteHeader(p.status)
	io.WriteString(w, p.body)
}

// TestRobotTagNearMisses: under robot_tags enforce, each page that says
// "do not keep" in a way robotsgate used to miss is refused, and each
// page it cannot read is unscannable: an X-Robots-Tag separated by ';'
// or white space, or quoted; a noindex on a 404, a 500 or a 304 (whose
// header updates the cached page); a meta inside <noscript> in the head;
// a charset the scan cannot decode (EBCDIC, UTF-7, an unknown label),
// declared by the header or by a meta. Before the fix each was forwarded.
// The pages around them (another agent's scope, a 404 without tags, a
// meta in the body's <noscript>, Latin-1, Shift_JIS) still pass.
func TestRobotTagNearMisses(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(serveNearMiss))
	defer origin.Close()
	h := newHarness(t, harnessOpts{config: enforceTags})
	tests := []struct {
		path   string
		status int
		reason string // X-Robotsgate-Decision, "" for a forwarded response
	}{
		{"/semicolon", 403, "robot-tag"},
		{"/quoted", 403, "robot-tag"},
		{"/spaced", 403, "robot-tag"},
		{"/scoped-other", 200, ""},
		{"/scoped-self", 403, "robot-tag"},
		{"/404-meta", 403, "robot-tag"},
		{"/404-plain", 404, ""},
		{"/500-header", 403, "robot-tag"},
		{"/304", 403, "robot-tag"},
		{"/304-plain", 304, ""},
		{"/noscript", 403, "robot-tag"},
		{"/noscript-body", 200, ""},
		{"/ibm037", 403, "response-unscannable"},
		{"/utf7", 403, "response-unscannable"},
		{"/meta-utf7", 403, "response-unscannable"},
		{"/equiv-ibm037", 403, "response-unscannable"},
		{"/unknown-label", 403, "response-unscannable"},
		{"/latin1", 200, ""},
		{"/shift-jis", 200, ""},
		{"/404-br", 403, "response-unscannable"},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.path, "/"), func(t *testing.T) {
			resp, body := h.get(t, origin.URL+tt.path, "If-None-Match", `"v1"`)
			if resp.StatusCode != tt.status || resp.Header.Get(answer.HeaderDecision) != tt.reason {
				t.Fatalf("%d %q, want %d %q (%s)", resp.StatusCode, resp.Header.Get(answer.HeaderDecision), tt.status, tt.reason, resp.Header.Get(answer.HeaderIndex))
			}
			if tt.reason != "" && strings.Contains(body, "secret") {
				t.Errorf("the origin's body reached the client: %q", body)
			}
		})
	}
}

// TestRobotTagNon2xxAnnotate: in annotate mode a 404 page whose meta says
// noindex is forwarded with X-Robotsgate-Index, as a 200 is.
func TestRobotTagNon2xxAnnotate(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(serveNearMiss))
	defer origin.Close()
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.RobotTags.Mode = config.RobotTagsAnnotate }})
	resp, body := h.get(t, origin.URL+"/404-meta")
	if resp.StatusCode != 404 || body != nearMissNoindex || resp.Header.Get(answer.HeaderIndex) != "noindex" {
		t.Errorf("%d %s=%q, body intact %v", resp.StatusCode, answer.HeaderIndex, resp.Header.Get(answer.HeaderIndex), body == nearMissNoindex)
	}
}
