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

	"github.com/robotsgate/robotsgate/internal/config"
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
