package proxy

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/robots/robottag"
)

// closeCounter is a response body that records reads and closes.
type closeCounter struct {
	r      io.Reader
	read   int
	closed int
}

func (c *closeCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}

func (c *closeCounter) Close() error { c.closed++; return nil }

// tagResp builds a response to GET http://example.test/page.
func tagResp(status int, ctype, body string, hdr ...string) (*http.Response, *closeCounter) {
	req, _ := http.NewRequest(http.MethodGet, "http://example.test/page", nil)
	h := make(http.Header)
	if ctype != "" {
		h.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		h.Add(hdr[i], hdr[i+1])
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	cc := &closeCounter{r: strings.NewReader(body)}
	return &http.Response{StatusCode: status, Header: h, Body: cc, ContentLength: int64(len(body)), Request: req}, cc
}

func tagsCfg(mode string) config.RobotTagsConfig {
	c := config.Default().RobotTags
	c.Mode = mode
	return c
}

const noindexPage = `<!doctype html><html><head><title>t</title><meta name="robots" content="noindex"></head><body>secret text</body></html>`

func TestApplyRobotTags(t *testing.T) {
	html := "text/html; charset=utf-8"
	tests := []struct {
		name   string
		status int
		ctype  string
		body   string
		hdr    []string
		agent  string
		cfg    config.RobotTagsConfig
		index  string // expected HeaderIndex, "" = not denied
	}{
		{"header noindex", 200, "application/pdf", "%PDF", []string{"X-Robots-Tag", "noindex"}, "Mandelbot", tagsCfg("annotate"), "noindex"},
		{"header mandelbot: noindex for Mandelbot", 200, "image/png", "png", []string{"X-Robots-Tag", "mandelbot: noindex"}, "Mandelbot", tagsCfg("annotate"), "noindex"},
		{"header mandelbot: noindex for Googlebot", 200, "image/png", "png", []string{"X-Robots-Tag", "mandelbot: noindex"}, "Googlebot", tagsCfg("annotate"), ""},
		{"header none", 200, "text/plain", "x", []string{"X-Robots-Tag", "none"}, "", tagsCfg("annotate"), "noindex, none"},
		{"header list", 200, "text/plain", "x", []string{"X-Robots-Tag", "nofollow,noindex,noarchive"}, "", tagsCfg("annotate"), "noindex, none"},
		{"header nofollow only", 200, "text/plain", "x", []string{"X-Robots-Tag", "nofollow"}, "", tagsCfg("annotate"), ""},
		{"several headers", 200, "text/plain", "x", []string{"X-Robots-Tag", "noarchive", "X-Robots-Tag", "NOINDEX"}, "", tagsCfg("annotate"), "noindex"},
		{"meta robots noindex", 200, html, noindexPage, nil, "Mandelbot", tagsCfg("annotate"), "noindex"},
		{"meta mandelbot for another agent", 200, html, `<head><meta name="mandelbot" content="noindex"></head>`, nil, "Otherbot", tagsCfg("annotate"), ""},
		{"meta in a non-HTML response ignored", 200, "text/plain", noindexPage, nil, "", tagsCfg("annotate"), ""},
		{"meta in body ignored", 200, html, `<head></head><body><meta name="robots" content="noindex">`, nil, "", tagsCfg("annotate"), ""},
		{"header and meta combine into none", 200, html, `<head><meta name="robots" content="nofollow"></head>`,
			[]string{"X-Robots-Tag", "noindex"}, "", tagsCfg("annotate"), "noindex, none"},
		{"404 is left alone", 404, html, noindexPage, []string{"X-Robots-Tag", "noindex"}, "", tagsCfg("annotate"), ""},
		{"off", 200, html, noindexPage, []string{"X-Robots-Tag", "noindex"}, "", tagsCfg("off"), ""},
		{"noai not denied by default", 200, "image/png", "png", []string{"X-Robots-Tag", "noai"}, "", tagsCfg("annotate"), ""},
		{"noai added to deny", 200, "image/png", "png", []string{"X-Robots-Tag", "noai"}, "",
			config.RobotTagsConfig{Mode: "annotate", Deny: []string{"noindex", "noai"}, MaxScanBytes: 1024}, "noai"},
		{"nil deny means the default", 200, "text/plain", "x", []string{"X-Robots-Tag", "none"}, "",
			config.RobotTagsConfig{Mode: "annotate"}, "noindex, none"},
		{"empty deny denies nothing", 200, "text/plain", "x", []string{"X-Robots-Tag", "none"}, "",
			config.RobotTagsConfig{Mode: "annotate", Deny: []string{}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, cc := tagResp(tt.status, tt.ctype, tt.body, tt.hdr...)
			out, ev := applyRobotTags(resp.Request, resp, tt.agent, tt.cfg)
			if out != resp {
				t.Fatalf("annotate mode replaced the response")
			}
			if got := out.Header.Get(HeaderIndex); got != tt.index {
				t.Errorf("%s = %q, want %q", HeaderIndex, got, tt.index)
			}
			if (ev != nil) != (tt.index != "") {
				t.Errorf("event = %+v, want one only when denied", ev)
			}
			if ev != nil && strings.Join(ev.Matched, ", ") != tt.index {
				t.Errorf("event matched %q, want %q", ev.Matched, tt.index)
			}
			b, err := io.ReadAll(out.Body)
			if err != nil || string(b) != tt.body {
				t.Errorf("body = %q, %v; want it intact: %q", b, err, tt.body)
			}
			if out.ContentLength != int64(len(tt.body)) || out.Header.Get("Content-Length") != strconv.Itoa(len(tt.body)) {
				t.Errorf("Content-Length changed: %d %q", out.ContentLength, out.Header.Get("Content-Length"))
			}
			out.Body.Close()
			if cc.closed != 1 {
				t.Errorf("origin body closed %d times, want 1", cc.closed)
			}
		})
	}
}

func TestApplyRobotTagsEnforce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ctype string
		hdr   []string
	}{
		{"meta", "text/html", nil},
		{"header", "text/plain", []string{"X-Robots-Tag", "mandelbot: noindex"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, cc := tagResp(200, tc.ctype, noindexPage, tc.hdr...)
			out, ev := applyRobotTags(resp.Request, resp, "Mandelbot", tagsCfg("enforce"))
			if ev == nil || !ev.Refused {
				t.Fatalf("event = %+v, want a refusal", ev)
			}
			if out == resp || out.StatusCode != http.StatusForbidden {
				t.Fatalf("status %d, want a 403 from robotsgate", out.StatusCode)
			}
			if cc.closed != 1 {
				t.Errorf("origin body closed %d times, want 1", cc.closed)
			}
			b, _ := io.ReadAll(out.Body)
			if strings.Contains(string(b), "secret text") {
				t.Errorf("origin body reached the 403: %q", b)
			}
			if !strings.Contains(string(b), "robot-tag") || !strings.Contains(string(b), "noindex") {
				t.Errorf("403 body does not explain: %q", b)
			}
			if out.Header.Get(HeaderDecision) != "robot-tag" || out.Header.Get(HeaderIndex) != "noindex" {
				t.Errorf("403 headers: %v", out.Header)
			}
		})
	}
}

func TestScanRobotTagsCompressed(t *testing.T) {
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	io.WriteString(zw, noindexPage)
	zw.Close()
	resp, cc := tagResp(200, "text/html", zb.String(), "Content-Encoding", "gzip")
	out, ev := applyRobotTags(resp.Request, resp, "", tagsCfg("enforce"))
	if ev != nil || out != resp {
		t.Fatalf("a gzip body was acted on: %+v", ev)
	}
	if cc.read != 0 {
		t.Errorf("read %d bytes of a gzip body", cc.read)
	}
	if s := scanRobotTags(resp, tagsCfg("enforce")); !strings.Contains(s.NotScanned, "gzip") {
		t.Errorf("NotScanned = %q, want it to name gzip", s.NotScanned)
	}
	// X-Robots-Tag still counts on compressed responses.
	resp, _ = tagResp(200, "text/html", zb.String(), "Content-Encoding", "br", "X-Robots-Tag", "noindex")
	if _, ev := applyRobotTags(resp.Request, resp, "", tagsCfg("annotate")); ev == nil {
		t.Error("X-Robots-Tag on a compressed response ignored")
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
			s := scanRobotTags(out, cfg)
			if s.Scanned > tc.maxScan {
				t.Errorf("scanned %d bytes, want at most %d", s.Scanned, tc.maxScan)
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

func TestTagEventDetail(t *testing.T) {
	resp, _ := tagResp(200, "text/html", `<head><meta name="robots" content="nofollow"></head>`, "X-Robots-Tag", "mandelbot: noindex")
	_, ev := applyRobotTags(resp.Request, resp, "Mandelbot", tagsCfg("annotate"))
	if ev == nil {
		t.Fatal("not denied")
	}
	want := "deny noindex, none; X-Robots-Tag: mandelbot: noindex; meta: nofollow"
	if got := ev.detail(); got != want {
		t.Errorf("detail = %q, want %q", got, want)
	}
	long := &tagEvent{Matched: []string{"noindex"}, tagScan: tagScan{Header: manyDirectives(500)}}
	if got := long.detail(); len(got) > maxTagDetail+3 || !strings.HasSuffix(got, "...") {
		t.Errorf("long detail not truncated: %d bytes", len(got))
	}
}

// manyDirectives returns n distinct directives, for length tests.
func manyDirectives(n int) []robottag.Directive {
	var ds []robottag.Directive
	for i := range n {
		ds = append(ds, robottag.Directive{Name: "directive" + strconv.Itoa(i)})
	}
	return ds
}

// tagPages is an origin's pages for the end-to-end robot-tag tests.
func tagPages(secret string) http.HandlerFunc {
	page := `<!doctype html><html><head><title>t</title><meta name="robots" content="noindex"></head><body>` + secret + `</body></html>`
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/meta-noindex":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Length", strconv.Itoa(len(page)))
			io.WriteString(w, page)
		case "/meta-in-text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, page)
		case "/mandelbot":
			w.Header().Set("Content-Type", "application/pdf")
			w.Header().Set("X-Robots-Tag", "mandelbot: noindex")
			io.WriteString(w, secret)
		case "/none":
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("X-Robots-Tag", "none")
			io.WriteString(w, secret)
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><head><title>ok</title></head><body>"+secret+"</body></html>")
		}
	}
}

// tagRecords returns the audit records with reason robot-tag.
func tagRecords(t *testing.T, h *harness) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range h.audit.records(t) {
		if r["reason"] == "robot-tag" {
			out = append(out, r)
		}
	}
	return out
}

func TestRobotTagsEndToEndAnnotate(t *testing.T) {
	secret := strings.Repeat("kept body ", 20_000) // 200 KB, past the scan window
	o := newOrigin(t, robotsBody("User-agent: *\nAllow: /\n"), tagPages(secret))
	h := newHarness(t, harnessOpts{}) // default: robot_tags annotate

	resp, body := h.get(t, o.URL+"/meta-noindex", "User-Agent", "Mandelbot/1.0")
	if resp.StatusCode != 200 || !strings.Contains(body, secret) {
		t.Fatalf("annotate: status %d, body intact %v", resp.StatusCode, strings.Contains(body, secret))
	}
	if got := resp.Header.Get(HeaderIndex); got != "noindex" {
		t.Errorf("%s = %q, want noindex", HeaderIndex, got)
	}
	if resp.ContentLength != int64(len(body)) {
		t.Errorf("Content-Length %d, want the origin's %d (kept, not chunked)", resp.ContentLength, len(body))
	}
	recs := tagRecords(t, h)
	if len(recs) != 1 {
		t.Fatalf("robot-tag audit records: %v", recs)
	}
	r := recs[0]
	if r["decision"] != audit.DecisionReported || r["agent"] != "Mandelbot" || r["status"] != 200.0 ||
		r["url"] != o.URL+"/meta-noindex" || !strings.Contains(r["detail"].(string), "meta: noindex") {
		t.Errorf("audit record: %v", r)
	}

	// No tag, no header, no record.
	resp, body = h.get(t, o.URL+"/plain", "User-Agent", "Mandelbot/1.0")
	if resp.StatusCode != 200 || resp.Header.Get(HeaderIndex) != "" || !strings.Contains(body, secret) {
		t.Errorf("untagged page: %d %q", resp.StatusCode, resp.Header.Get(HeaderIndex))
	}

	// X-Robots-Tag: none.
	resp, body = h.get(t, o.URL+"/none")
	if resp.StatusCode != 200 || body != secret || resp.Header.Get(HeaderIndex) != "noindex, none" {
		t.Errorf("X-Robots-Tag none: %d %q", resp.StatusCode, resp.Header.Get(HeaderIndex))
	}
	if n := len(tagRecords(t, h)); n != 2 {
		t.Errorf("%d robot-tag records, want 2", n)
	}
}

func TestRobotTagsEndToEndEnforce(t *testing.T) {
	secret := "SECRET-" + strings.Repeat("x", 100_000)
	o := newOrigin(t, robotsBody("User-agent: *\nAllow: /\n"), tagPages(secret))
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.RobotTags.Mode = RobotTagsEnforce }})

	resp, body := h.get(t, o.URL+"/meta-noindex", "User-Agent", "Mandelbot/1.0")
	if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "SECRET") {
		t.Fatalf("enforce: status %d, origin body reached the client: %v", resp.StatusCode, strings.Contains(body, "SECRET"))
	}
	if resp.Header.Get(HeaderDecision) != "robot-tag" || resp.Header.Get(HeaderIndex) != "noindex" {
		t.Errorf("403 headers: %v", resp.Header)
	}
	recs := tagRecords(t, h)
	if len(recs) != 1 || recs[0]["decision"] != audit.DecisionBlocked || recs[0]["status"] != 403.0 {
		t.Fatalf("audit: %v", recs)
	}
	t.Logf("audit record: %s", strings.TrimSpace(h.audit.buf.String()))

	// A meta tag in a non-HTML response is not a robot tag.
	resp, body = h.get(t, o.URL+"/meta-in-text", "User-Agent", "Mandelbot/1.0")
	if resp.StatusCode != 200 || !strings.Contains(body, "SECRET") || resp.Header.Get(HeaderIndex) != "" {
		t.Errorf("meta in text/plain: status %d", resp.StatusCode)
	}

	// X-Robots-Tag: mandelbot: noindex applies to Mandelbot only.
	resp, body = h.get(t, o.URL+"/mandelbot", "User-Agent", "Mandelbot/2.0 (+https://www.fractle.com/)")
	if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "SECRET") {
		t.Errorf("mandelbot: noindex for Mandelbot: status %d", resp.StatusCode)
	}
	resp, body = h.get(t, o.URL+"/mandelbot", "User-Agent", "Googlebot/2.1")
	if resp.StatusCode != 200 || body != secret {
		t.Errorf("mandelbot: noindex for Googlebot: status %d", resp.StatusCode)
	}

	// X-Robots-Tag: none refuses too.
	resp, _ = h.get(t, o.URL+"/none")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderIndex) != "noindex, none" {
		t.Errorf("X-Robots-Tag none: status %d, %s %q", resp.StatusCode, HeaderIndex, resp.Header.Get(HeaderIndex))
	}
	if n := len(tagRecords(t, h)); n != 3 {
		t.Errorf("%d robot-tag records, want 3", n)
	}
}

func TestRobotTagsEndToEndReportMode(t *testing.T) {
	o := newOrigin(t, robotsBody("User-agent: *\nAllow: /\n"), tagPages("body"))
	h := newHarness(t, harnessOpts{config: func(c *config.Config) {
		c.Mode = ModeReport
		c.RobotTags.Mode = RobotTagsEnforce
	}})
	resp, body := h.get(t, o.URL+"/meta-noindex")
	if resp.StatusCode != 200 || !strings.Contains(body, "body") || resp.Header.Get(HeaderIndex) != "noindex" {
		t.Fatalf("report mode: status %d, %s %q", resp.StatusCode, HeaderIndex, resp.Header.Get(HeaderIndex))
	}
	if recs := tagRecords(t, h); len(recs) != 1 || recs[0]["decision"] != audit.DecisionReported {
		t.Errorf("audit: %v", recs)
	}
}

func TestRobotTagsEndToEndOff(t *testing.T) {
	o := newOrigin(t, robotsBody("User-agent: *\nAllow: /\n"), tagPages("body"))
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.RobotTags.Mode = RobotTagsOff }})
	resp, _ := h.get(t, o.URL+"/none")
	if resp.StatusCode != 200 || resp.Header.Get(HeaderIndex) != "" || len(tagRecords(t, h)) != 0 {
		t.Errorf("off: status %d, %s %q", resp.StatusCode, HeaderIndex, resp.Header.Get(HeaderIndex))
	}
}

// TestRobotTagsEndToEndMITM checks robot tags inside an HTTPS (MITM)
// session, where the scan wraps the session's own round tripper.
func TestRobotTagsEndToEndMITM(t *testing.T) {
	secret := "SECRET-" + strings.Repeat("y", 100_000)
	o := &tlsOrigin{hits: make(map[string]int)}
	pages := tagPages(secret)
	o.Server = quietTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		pages(w, r)
	}))
	t.Cleanup(o.Close)

	for _, mode := range []string{RobotTagsAnnotate, RobotTagsEnforce} {
		t.Run(mode, func(t *testing.T) {
			cfg := mitmConfig(t, o)
			cfg.RobotTags.Mode = mode
			p := startHTTPSProxy(t, cfg)
			c := p.client(p.ca)
			resp, body := get(t, c, o.URL+"/meta-noindex")
			switch mode {
			case RobotTagsAnnotate:
				if resp.StatusCode != 200 || !strings.Contains(body, secret) || resp.Header.Get(HeaderIndex) != "noindex" {
					t.Fatalf("status %d, %s %q, body intact %v", resp.StatusCode, HeaderIndex, resp.Header.Get(HeaderIndex), strings.Contains(body, secret))
				}
				if resp.ContentLength != int64(len(body)) {
					t.Errorf("Content-Length %d, want %d", resp.ContentLength, len(body))
				}
			case RobotTagsEnforce:
				if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "SECRET") {
					t.Fatalf("status %d, origin body reached the client: %v", resp.StatusCode, strings.Contains(body, "SECRET"))
				}
			}
			if rec := p.audit.find(t, "robot-tag"); rec["url"] != o.URL+"/meta-noindex" {
				t.Errorf("audit record: %v", rec)
			}
			// The session goes on: the next request is unaffected.
			if resp, body := get(t, c, o.URL+"/plain"); resp.StatusCode != 200 || !strings.Contains(body, secret) {
				t.Errorf("next request in the session: %d", resp.StatusCode)
			}
		})
	}
}

// BenchmarkApplyRobotTags measures the robot-tag step on a 100 KB HTML
// page (meta in its head), the same page without a meta element, and a
// non-HTML response with an X-Robots-Tag header.
func BenchmarkApplyRobotTags(b *testing.B) {
	pad := strings.Repeat("<p>lorem ipsum dolor sit amet</p>", 3000)
	head := `<!doctype html><html><head><meta charset="utf-8"><title>t</title>` +
		`<link rel="stylesheet" href="/s.css"><script src="/a.js"></script>`
	for _, bc := range []struct {
		name, ctype, body string
		hdr               []string
	}{
		{"html-meta-noindex", "text/html", head + `<meta name="robots" content="noindex"></head><body>` + pad, nil},
		{"html-no-meta", "text/html", head + `</head><body>` + pad, nil},
		{"html-no-head-end", "text/html", "<html><head>" + pad, nil}, // scans the whole 64 KiB window
		{"pdf-x-robots-tag", "application/pdf", pad, []string{"X-Robots-Tag", "noindex, nofollow"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := tagsCfg(RobotTagsAnnotate)
			b.ReportAllocs()
			for b.Loop() {
				resp, _ := tagResp(200, bc.ctype, bc.body, bc.hdr...)
				out, _ := applyRobotTags(resp.Request, resp, "Mandelbot", cfg)
				io.Copy(io.Discard, out.Body)
				out.Body.Close()
			}
		})
	}
}

// applyRobotTags is the robot-tag verdict on resp together with
// robotsgate's answer when it is a refusal, as the pipeline carries it
// out: the response the client gets, and what was found.
func applyRobotTags(req *http.Request, resp *http.Response, agent string, cfg config.RobotTagsConfig) (*http.Response, *tagEvent) {
	ev, o := robotTagVerdict(req, resp, agent, cfg)
	if o.verdict == audit.DecisionBlocked {
		return answer(req, o, false), ev
	}
	return resp, ev
}
