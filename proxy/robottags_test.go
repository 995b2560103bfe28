package proxy

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
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

func tagsCfg(mode config.RobotTagsMode) config.RobotTagsConfig {
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
		index  string // expected answer.HeaderIndex, "" = not denied
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
		{"404 counts too", 404, html, noindexPage, []string{"X-Robots-Tag", "noindex"}, "", tagsCfg("annotate"), "noindex"},
		{"404 meta alone", 404, html, noindexPage, nil, "", tagsCfg("annotate"), "noindex"},
		{"304 header", 304, html, "", []string{"X-Robots-Tag", "noindex"}, "", tagsCfg("annotate"), "noindex"},
		{"301 header", 301, html, "", []string{"X-Robots-Tag", "nofollow noindex"}, "", tagsCfg("annotate"), "noindex, none"},
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
			if got := out.Header.Get(answer.HeaderIndex); got != tt.index {
				t.Errorf("%s = %q, want %q", answer.HeaderIndex, got, tt.index)
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
			if out.Header.Get(answer.HeaderDecision) != "robot-tag" || out.Header.Get(answer.HeaderIndex) != "noindex" {
				t.Errorf("403 headers: %v", out.Header)
			}
		})
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

// BenchmarkApplyRobotTags measures the robot-tag step on a 100 KB HTML
// page (meta in its head), the same page without a meta element, and a
// non-HTML response with an X-Robots-Tag header; and gzip-encoded pages,
// decoded for the scan.
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
		{"gzip-html-meta-noindex", "text/html", string(encodeGzip(head + `<meta name="robots" content="noindex"></head><body>` + pad)), []string{"Content-Encoding", "gzip"}},
		{"gzip-html-no-head-end", "text/html", string(encodeGzip("<html><head>" + pad)), []string{"Content-Encoding", "gzip"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := tagsCfg(config.RobotTagsAnnotate)
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
	ev, o := robotTagOutcome(req, resp, agent, cfg)
	if o.auditAs == audit.DecisionBlocked {
		return refusal(req, o, false), ev
	}
	return resp, ev
}
