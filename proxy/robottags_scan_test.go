package proxy

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"golang.org/x/text/encoding/charmap"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/bodyscan"
)

// TestScanRobotTagsCompressed: a gzip body is decoded for the scan, and
// the client reads the bytes the origin sent; a body the scan cannot
// decode is marked so, its headers still counting.
func TestScanRobotTagsCompressed(t *testing.T) {
	zb := encodeGzip(noindexPage)
	resp, _ := tagResp(200, "text/html", string(zb), "Content-Encoding", "gzip")
	_, ev := applyRobotTags(resp.Request, resp, "", tagsCfg("enforce"))
	if ev == nil || !ev.Refused || len(ev.Meta) == 0 {
		t.Fatalf("a gzip body with meta noindex was not refused: %+v", ev)
	}
	resp, _ = tagResp(200, "text/html", string(zb), "Content-Encoding", "gzip")
	if s := bodyscan.RobotTags(resp, tagsCfg("annotate")); len(s.Meta) == 0 || s.Incomplete {
		t.Errorf("gzip scan: %+v", s)
	}
	if b, _ := io.ReadAll(resp.Body); !bytes.Equal(b, zb) {
		t.Error("the client did not get the gzip bytes as sent")
	}
	// X-Robots-Tag still counts on compressed responses.
	resp, _ = tagResp(200, "text/html", string(zb), "Content-Encoding", "br", "X-Robots-Tag", "noindex")
	if _, ev := applyRobotTags(resp.Request, resp, "", tagsCfg("annotate")); ev == nil || !ev.Incomplete {
		t.Error("X-Robots-Tag on a br response ignored, or its body not marked undecodable")
	}
}

func TestScanRobotTagsHeadRequest(t *testing.T) {
	resp, cc := tagResp(200, "text/html", noindexPage)
	resp.Request.Method = http.MethodHead
	if _, ev := applyRobotTags(resp.Request, resp, "", tagsCfg("annotate")); ev != nil || cc.read != 0 {
		t.Errorf("HEAD: event %+v, %d bytes read", ev, cc.read)
	}
}

// TestScanRobotTagsStreams checks against a real origin that the scan
// reads no more than max_scan_bytes (less when the head ends), and that
// the client gets the whole body, Content-Length untouched.
func TestScanRobotTagsStreams(t *testing.T) {
	head := `<html><head><meta name="robots" content="noindex"></head>`
	tail := "<body>" + strings.Repeat("0123456789", 100_000) + "</body></html>" // 1 MB
	late := "<html><head>" + strings.Repeat("<!-- padding -->", 10_000) + `<meta name="robots" content="noindex"></head>` + tail
	pages := map[string]string{"/early": head + tail, "/late": late}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(len(pages[r.URL.Path])))
		io.WriteString(w, pages[r.URL.Path])
	}))
	defer origin.Close()
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()

	for _, tc := range []struct {
		path    string
		maxScan int // bytes the scan may read
		found   bool
	}{
		{"/early", 8 << 10, true},  // stops at </head>: the tokenizer reads 4 KiB at a time
		{"/late", 64 << 10, false}, // the meta lies past the first 64 KiB
		{"/late", 1 << 20, true},   // ... and within a larger limit
	} {
		t.Run(tc.path+"/"+strconv.Itoa(tc.maxScan), func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, origin.URL+tc.path, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			cfg := config.RobotTagsConfig{Mode: "annotate", MaxScanBytes: 64 << 10}
			if tc.maxScan > cfg.MaxScanBytes {
				cfg.MaxScanBytes = tc.maxScan
			}
			out, ev := applyRobotTags(req, resp, "", cfg)
			if (ev != nil) != tc.found {
				t.Fatalf("found = %v, want %v", ev != nil, tc.found)
			}
			s := bodyscan.RobotTags(out, cfg)
			if s.Scanned > tc.maxScan+1 { // the byte past the window tells that the head goes on
				t.Errorf("scanned %d bytes, want at most %d", s.Scanned, tc.maxScan+1)
			}
			if want := int64(len(pages[tc.path])); out.ContentLength != want {
				t.Errorf("ContentLength = %d, want %d", out.ContentLength, want)
			}
			b, err := io.ReadAll(out.Body)
			out.Body.Close()
			if err != nil || string(b) != pages[tc.path] {
				t.Errorf("body: %d bytes, err %v; want the page's %d bytes", len(b), err, len(pages[tc.path]))
			}
		})
	}
}

func TestScanRobotTagsReadError(t *testing.T) {
	boom := errors.New("connection reset")
	resp, _ := tagResp(200, "text/html", "")
	resp.ContentLength = -1
	prefix := `<html><head><meta name="robots" content="noindex">`
	resp.Body = io.NopCloser(io.MultiReader(strings.NewReader(prefix), iotest.ErrReader(boom)))
	out, ev := applyRobotTags(resp.Request, resp, "", tagsCfg("annotate"))
	if ev == nil || !strings.Contains(ev.NotScanned, "connection reset") {
		t.Fatalf("event %+v: want the directive found before the error, and the error noted", ev)
	}
	b, err := io.ReadAll(out.Body)
	if string(b) != prefix || !errors.Is(err, boom) {
		t.Errorf("client got %q, %v; want the bytes before the error, then the error", b, err)
	}
}

// TestScanRobotTagsCodedReadError: a gzip body whose reading fails before
// the head is decoded is undecodable (an enforcing step refuses it); the
// client still gets the coded bytes read, then the error.
func TestScanRobotTagsCodedReadError(t *testing.T) {
	boom := errors.New("connection reset")
	z := encodeGzip(noindexPage + strings.Repeat("x", 10_000))
	resp, _ := tagResp(200, "text/html", "", "Content-Encoding", "gzip")
	resp.ContentLength = -1
	resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(z[:5]), iotest.ErrReader(boom)))
	s := bodyscan.RobotTags(resp, tagsCfg("enforce"))
	if !s.Incomplete || !strings.Contains(s.NotScanned, "connection reset") {
		t.Fatalf("scan %+v: want undecodable, the error noted", s)
	}
	b, err := io.ReadAll(resp.Body)
	if !bytes.Equal(b, z[:5]) || !errors.Is(err, boom) {
		t.Errorf("client got %q, %v; want the bytes before the error, then the error", b, err)
	}
}

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
