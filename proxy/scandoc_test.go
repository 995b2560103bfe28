package proxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// utf16Bytes is s in UTF-16, little or big endian, with a byte order mark
// when bom.
func utf16Bytes(s string, big, bom bool) string {
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xfeff}, units...)
	}
	b := make([]byte, 0, 2*len(units))
	for _, u := range units {
		if big {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return string(b)
}

// scanPage is a page of the scan tests: its Content-Type values (none
// at all when nil) and body.
type scanPage struct {
	ctypes []string
	body   string
}

// longHead is a page whose head goes on past the default
// robot_tags.max_scan_bytes (64 KiB) before its meta robots.
var longHead = "<html><head>" + strings.Repeat("<!-- padding -->", 5000) + `<meta name="robots" content="noindex, noai"></head><body>secret</body></html>`

const noaiPage = `<!doctype html><html><head><title>t</title><meta name="robots" content="noindex, noai"></head><body>secret text</body></html>`

var scanPages = map[string]scanPage{
	"/xhtml":          {[]string{"application/xhtml+xml; charset=utf-8"}, `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><meta name="robots" content="noindex, noai"/></head><body>secret</body></html>`},
	"/no-type":        {nil, noaiPage},
	"/bad-params":     {[]string{"text/html;;charset"}, noaiPage},
	"/no-subtype":     {[]string{"html"}, noaiPage},
	"/two-types":      {[]string{"text/plain", "text/html"}, noaiPage},
	"/utf16le-bom":    {[]string{"text/html"}, utf16Bytes(noaiPage, false, true)},
	"/utf16be-bom":    {[]string{"text/html; charset=utf-8"}, utf16Bytes(noaiPage, true, true)},
	"/utf16-charset":  {[]string{`text/html; charset="UTF-16"`}, utf16Bytes(noaiPage, false, false)},
	"/no-type-utf16":  {nil, utf16Bytes(noaiPage, false, true)},
	"/utf8-bom":       {[]string{"text/html"}, "\xef\xbb\xbf" + noaiPage},
	"/long-head":      {[]string{"text/html"}, longHead},
	"/utf32":          {[]string{"text/html"}, "\xff\xfe\x00\x00" + strings.Repeat("<\x00\x00\x00", 10)},
	"/utf16-no-label": {[]string{"text/html"}, utf16Bytes(noaiPage, true, false)},
	"/utf16-mislabel": {[]string{"text/html; charset=utf-16le"}, utf16Bytes(noaiPage, true, false)},
	"/stray-nul":      {[]string{"text/html"}, "<html><head>\x00" + noaiPage[len("<!doctype html><html><head>"):]},
	"/utf32-no-bom":   {[]string{"text/html"}, "<\x00\x00\x00h\x00\x00\x00" + strings.Repeat("t\x00\x00\x00", 20)},
	"/plain":          {[]string{"text/plain"}, noaiPage},
	"/no-type-text":   {nil, "just some text, " + strings.Repeat("no markup ", 10000)},
	"/long-body":      {[]string{"text/html"}, "<html><head><title>t</title></head><body>" + strings.Repeat("kept ", 20000) + "</body></html>"},
	"/implicit-head":  {[]string{"text/html"}, "<title>t</title><p>" + strings.Repeat("kept ", 20000)},
}

func serveScanPages(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		w.Write([]byte("User-agent: *\nAllow: /\n"))
		return
	}
	p, ok := scanPages[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header()["Content-Type"] = p.ctypes // nil: net/http sends none
	w.Write([]byte(p.body))
}

// TestScanSeesEveryHTML: in enforce mode the head scan reads every body a
// client could take for HTML, in the encoding a browser would decode:
// application/xhtml+xml, no Content-Type (sniffed), a Content-Type whose
// parameters do not parse or that is not a type, an HTML type among
// several, UTF-16 (byte order mark, or none: by its NUL bytes, whatever
// the label says), a UTF-8 byte order mark. A head it cannot read whole
// (longer than max_scan_bytes, UTF-32) is refused
// response-unscannable. Before, each of these was forwarded unscanned.
func TestScanSeesEveryHTML(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(serveScanPages))
	defer origin.Close()
	h := newHarness(t, harnessOpts{config: enforceTags})
	want := map[string]string{
		"/xhtml": "robot-tag", "/no-type": "robot-tag", "/bad-params": "robot-tag", "/no-subtype": "robot-tag",
		"/two-types": "robot-tag", "/utf16le-bom": "robot-tag", "/utf16be-bom": "robot-tag",
		"/utf16-charset": "robot-tag", "/no-type-utf16": "robot-tag", "/utf8-bom": "robot-tag",
		"/utf16-no-label": "robot-tag", "/utf16-mislabel": "robot-tag",
		"/long-head": "response-unscannable", "/utf32": "response-unscannable", "/utf32-no-bom": "response-unscannable",
		"/stray-nul": "response-unscannable",
		"/plain":     "", "/no-type-text": "", "/long-body": "", "/implicit-head": "",
	}
	for path, reason := range want {
		resp, body := h.get(t, origin.URL+path)
		switch {
		case reason == "" && (resp.StatusCode != 200 || body != scanPages[path].body):
			t.Errorf("%s: %d %s, want the page", path, resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
		case reason != "" && (resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != reason):
			t.Errorf("%s: %d %q, want 403 %s", path, resp.StatusCode, resp.Header.Get(answer.HeaderDecision), reason)
		}
	}
}

// TestScanUsageAndAnnotate: the usage step reads the same scan (meta
// noai in UTF-16 refuses a train-ai crawler), and in annotate mode a head
// the scan cannot read whole is forwarded marked X-Robotsgate-Unscanned.
func TestScanUsageAndAnnotate(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(serveScanPages))
	defer origin.Close()
	h := newHarness(t, harnessOpts{config: func(c *config.Config) {
		c.RobotTags.Mode = config.RobotTagsOff
		c.Purposes = aipref.SetOf(aipref.TrainAI)
		c.Usage.Response = config.UsageResponseEnforce
	}})
	for _, path := range []string{"/utf16le-bom", "/xhtml", "/no-type"} {
		if resp, _ := h.get(t, origin.URL+path); resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "usage-disallowed" {
			t.Errorf("usage enforce %s: %d %q", path, resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
		}
	}
	if resp, _ := h.get(t, origin.URL+"/long-head"); resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "response-unscannable" {
		t.Errorf("usage enforce, long head: %d %q", resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
	}

	a := newHarness(t, harnessOpts{config: annotateTags})
	resp, body := a.get(t, origin.URL+"/long-head")
	if resp.StatusCode != 200 || body != longHead || !strings.Contains(resp.Header.Get(HeaderUnscanned), "max_scan_bytes") {
		t.Errorf("annotate, long head: %d, %s %q", resp.StatusCode, HeaderUnscanned, resp.Header.Get(HeaderUnscanned))
	}
}
