package proxy

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/bodyscan"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// rangePage has its meta robots within its first 61 bytes: bytes=61-
// is the page without it.
var rangePage = `<html><head><meta name="robots" content="noindex, noai"></head><body>SECRET ` +
	strings.Repeat("body ", 2000) + `</body></html>`

// plainRangePage has no robot tags.
var plainRangePage = `<html><head><title>t</title></head><body>` + strings.Repeat("kept ", 2000) + `</body></html>`

// wholeOrigin serves the pages of the whole-representation tests and
// keeps the headers of the last page request.
type wholeOrigin struct {
	mu   sync.Mutex
	last http.Header
	enc  map[string][]byte // path → encoded body
}

func newWholeOrigin() *wholeOrigin {
	o := &wholeOrigin{enc: map[string][]byte{}}
	for _, page := range []struct{ name, body string }{{"noindex", rangePage}, {"plain", plainRangePage}} {
		o.enc["/gzip/"+page.name] = encodeGzip(page.body)
		o.enc["/deflate/"+page.name] = encodeZlib(page.body)
		o.enc["/rawdeflate/"+page.name] = encodeFlate(page.body)
		o.enc["/br/"+page.name] = []byte("\x1b not really brotli " + page.body)
	}
	return o
}

func (o *wholeOrigin) header() http.Header {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.last
}

func (o *wholeOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		io.WriteString(w, "User-agent: *\nAllow: /\n")
		return
	}
	o.mu.Lock()
	o.last = r.Header.Clone()
	o.mu.Unlock()
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	switch p := r.URL.Path; {
	case p == "/page":
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(rangePage))
	case p == "/plain":
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(plainRangePage))
	case p == "/always206": // a partial answer, asked or not
		h.Set("Content-Range", "bytes 61-"+strconv.Itoa(len(rangePage)-1)+"/"+strconv.Itoa(len(rangePage)))
		w.WriteHeader(http.StatusPartialContent)
		io.WriteString(w, rangePage[61:])
	case p == "/multipart":
		h.Set("Content-Type", "multipart/byteranges; boundary=XX")
		io.WriteString(w, "--XX\r\nContent-Type: text/html\r\nContent-Range: bytes 0-60/9999\r\n\r\n"+rangePage[:61]+"\r\n--XX--\r\n")
	case p == "/png206":
		h.Set("Content-Type", "image/png")
		h.Set("Content-Range", "bytes 0-3/100")
		w.WriteHeader(http.StatusPartialContent)
		io.WriteString(w, "\x89PNG")
	case o.enc[p] != nil:
		h.Set("Content-Encoding", strings.Split(p, "/")[1])
		if strings.HasPrefix(p, "/rawdeflate/") {
			h.Set("Content-Encoding", "deflate")
		}
		h.Set("Content-Length", strconv.Itoa(len(o.enc[p])))
		w.Write(o.enc[p])
	default:
		http.NotFound(w, r)
	}
}

// encodeWith returns s compressed by the writer newW makes.
func encodeWith(s string, newW func(io.Writer) io.WriteCloser) []byte {
	var b bytes.Buffer
	w := newW(&b)
	io.WriteString(w, s)
	w.Close()
	return b.Bytes()
}

func encodeGzip(s string) []byte {
	return encodeWith(s, func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })
}

func encodeZlib(s string) []byte {
	return encodeWith(s, func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) })
}

func encodeFlate(s string) []byte {
	return encodeWith(s, func(w io.Writer) io.WriteCloser {
		fw, _ := flate.NewWriter(w, flate.BestSpeed)
		return fw
	})
}

// wholeRig is a proxy (plain HTTP or MITM) in front of a wholeOrigin.
type wholeRig struct {
	o     *wholeOrigin
	base  string // the origin's URL
	c     *http.Client
	audit *memAudit
}

// startWholeRig starts a wholeOrigin and a proxy configured by mutate,
// reached over plain HTTP or, with tlsOrigin, inside an MITM session.
func startWholeRig(t *testing.T, overTLS bool, mutate func(*config.Config)) *wholeRig {
	t.Helper()
	o := newWholeOrigin()
	if !overTLS {
		srv := httptest.NewServer(o)
		t.Cleanup(srv.Close)
		h := newHarness(t, harnessOpts{config: mutate})
		return &wholeRig{o: o, base: srv.URL, c: h.client, audit: h.audit}
	}
	to := &tlsOrigin{}
	to.Server = quietTLSServer(o)
	t.Cleanup(to.Close)
	cfg := mitmConfig(t, to)
	mutate(&cfg)
	p := startHTTPSProxy(t, cfg)
	c := p.client(p.ca)
	c.Transport.(*http.Transport).DisableCompression = true
	return &wholeRig{o: o, base: to.URL, c: c, audit: p.audit}
}

func enforceTags(c *config.Config)  { c.RobotTags.Mode = config.RobotTagsEnforce }
func annotateTags(c *config.Config) { c.RobotTags.Mode = config.RobotTagsAnnotate }

// TestWholeRangeEnforce: with robot_tags enforce, a Range request for a
// page whose meta robots lies before the range is answered from the
// whole page: the origin never sees Range (or If-Range), the page is
// scanned whole and refused, and the audit record says Range was
// removed. A page without tags comes whole (200), not partial.
func TestWholeRangeEnforce(t *testing.T) {
	for _, tlsOrigin := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "mitm"}[tlsOrigin], func(t *testing.T) {
			r := startWholeRig(t, tlsOrigin, enforceTags)
			for _, rng := range []string{"bytes=61-", "bytes=0-60,61-"} {
				resp, body := get(t, r.c, r.base+"/page", "Range", rng)
				if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "SECRET") || resp.Header.Get(answer.HeaderDecision) != "robot-tag" {
					t.Fatalf("Range %s: %d %s, origin body reached the client: %v", rng, resp.StatusCode, resp.Header.Get(answer.HeaderDecision), strings.Contains(body, "SECRET"))
				}
				if got := r.o.header().Get("Range"); got != "" {
					t.Errorf("Range %s: the origin saw Range %q", rng, got)
				}
			}
			// If-Range goes with Range (here it would have made the origin
			// send the whole page anyway: its validator does not match).
			if resp, _ := get(t, r.c, r.base+"/page", "Range", "bytes=61-", "If-Range", `"x"`, "Request-Range", "bytes=61-"); resp.StatusCode != http.StatusForbidden {
				t.Errorf("Range with If-Range: %d", resp.StatusCode)
			}
			if h := r.o.header(); h.Get("Range") != "" || h.Get("If-Range") != "" || h.Get("Request-Range") != "" {
				t.Errorf("the origin saw Range %q If-Range %q Request-Range %q", h.Get("Range"), h.Get("If-Range"), h.Get("Request-Range"))
			}
			recs := 0
			for _, rec := range r.audit.Records(t) {
				if rec["reason"] == "robot-tag" {
					recs++
					if rec["decision"] != audit.DecisionBlocked || !strings.Contains(rec["detail"].(string), "Range removed") {
						t.Errorf("audit record: %v", rec)
					}
				}
			}
			if recs != 3 {
				t.Errorf("%d robot-tag records, want 3", recs)
			}
			resp, body := get(t, r.c, r.base+"/plain", "Range", "bytes=61-")
			if resp.StatusCode != 200 || body != plainRangePage {
				t.Errorf("untagged page with Range: %d, whole %v", resp.StatusCode, body == plainRangePage)
			}
		})
	}
}

// TestWholeRangeUsageEnforce: usage.response enforce, for a crawler
// declaring train-ai, reads the whole page too (meta noai), robot tags
// off.
func TestWholeRangeUsageEnforce(t *testing.T) {
	r := startWholeRig(t, false, func(c *config.Config) {
		c.RobotTags.Mode = config.RobotTagsOff
		c.Purposes = aipref.SetOf(aipref.TrainAI)
		c.Usage.Response = config.UsageResponseEnforce
	})
	for _, rng := range []string{"bytes=61-", "bytes=0-60,61-"} {
		resp, body := get(t, r.c, r.base+"/page", "Range", rng)
		if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "SECRET") || resp.Header.Get(answer.HeaderDecision) != "usage-disallowed" {
			t.Fatalf("Range %s: %d %s", rng, resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
		}
		if got := r.o.header().Get("Range"); got != "" {
			t.Errorf("the origin saw Range %q", got)
		}
	}
	resp, body := get(t, r.c, r.base+"/gzip/noindex", "Accept-Encoding", "gzip")
	if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "SECRET") || resp.Header.Get(answer.HeaderDecision) != "usage-disallowed" {
		t.Fatalf("gzip noai: %d %s", resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
	}
}

// TestWholeRangeAnnotate: annotate mode leaves Range alone.
func TestWholeRangeAnnotate(t *testing.T) {
	r := startWholeRig(t, false, annotateTags)
	resp, body := get(t, r.c, r.base+"/page", "Range", "bytes=61-")
	if resp.StatusCode != http.StatusPartialContent || body != rangePage[61:] {
		t.Fatalf("annotate, Range: %d %q", resp.StatusCode, body)
	}
	if got := r.o.header().Get("Range"); got != "bytes=61-" {
		t.Errorf("the origin saw Range %q, want bytes=61-", got)
	}
	resp, _ = get(t, r.c, r.base+"/always206")
	if resp.StatusCode != http.StatusPartialContent {
		t.Errorf("annotate, unasked 206: %d", resp.StatusCode)
	}
}

// TestWholePartialRefused: in enforce mode, a partial answer the origin
// sends although the request had no Range (206 of HTML,
// multipart/byteranges) is refused, response-unscannable, audited; a
// partial image passes (its body is not scanned).
func TestWholePartialRefused(t *testing.T) {
	for _, tlsOrigin := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "mitm"}[tlsOrigin], func(t *testing.T) {
			r := startWholeRig(t, tlsOrigin, enforceTags)
			for _, path := range []string{"/always206", "/multipart"} {
				resp, body := get(t, r.c, r.base+path)
				if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "SECRET") || strings.Contains(body, "noindex") ||
					resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonResponseUnscannable) {
					t.Fatalf("%s: %d %s", path, resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
				}
			}
			rec := r.audit.Find(t, string(answer.ReasonResponseUnscannable))
			if rec["decision"] != audit.DecisionBlocked || !strings.Contains(rec["detail"].(string), "partial response") {
				t.Errorf("audit record: %v", rec)
			}
			if resp, body := get(t, r.c, r.base+"/png206"); resp.StatusCode != http.StatusPartialContent || body != "\x89PNG" {
				t.Errorf("partial image: %d %q", resp.StatusCode, body)
			}
		})
	}
}

// TestWholeCompressedEnforce: gzip and deflate (zlib and raw) pages are
// scanned: noindex refuses; an untagged page reaches the client as the
// origin's compressed bytes, unchanged. Accept-Encoding is narrowed to
// what the scan decodes; a br body the client did not get to ask for is
// refused.
func TestWholeCompressedEnforce(t *testing.T) {
	for _, tlsOrigin := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "mitm"}[tlsOrigin], func(t *testing.T) {
			r := startWholeRig(t, tlsOrigin, enforceTags)
			for _, enc := range []string{"gzip", "deflate", "rawdeflate"} {
				resp, body := get(t, r.c, r.base+"/"+enc+"/noindex", "Accept-Encoding", "br, zstd, gzip, deflate")
				if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "robot-tag" || strings.Contains(body, "SECRET") {
					t.Fatalf("%s noindex: %d %s", enc, resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
				}
				if got := r.o.header().Get("Accept-Encoding"); got != "gzip, deflate" {
					t.Errorf("the origin saw Accept-Encoding %q, want gzip, deflate", got)
				}
				resp, body = get(t, r.c, r.base+"/"+enc+"/plain", "Accept-Encoding", "gzip, deflate")
				want := string(r.o.enc["/"+enc+"/plain"])
				if resp.StatusCode != 200 || body != want || resp.Header.Get("Content-Encoding") == "" || resp.ContentLength != int64(len(want)) {
					t.Errorf("%s plain: %d, %q, length %d, bytes unchanged %v", enc, resp.StatusCode, resp.Header.Get("Content-Encoding"), resp.ContentLength, body == want)
				}
			}
			resp, body := get(t, r.c, r.base+"/br/plain", "Accept-Encoding", "gzip")
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonResponseUnscannable) || strings.Contains(body, "kept") {
				t.Fatalf("br: %d %s", resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
			}
			if rec := r.audit.Find(t, string(answer.ReasonResponseUnscannable)); !strings.Contains(rec["detail"].(string), `"br"`) {
				t.Errorf("audit record: %v", rec)
			}
		})
	}
}

// TestWholeCompressedAnnotate: annotate mode scans gzip pages too, and
// marks a body it cannot decode, passing it on; Accept-Encoding is left
// as the client sent it.
func TestWholeCompressedAnnotate(t *testing.T) {
	r := startWholeRig(t, false, annotateTags)
	resp, body := get(t, r.c, r.base+"/gzip/noindex", "Accept-Encoding", "br, gzip")
	if resp.StatusCode != 200 || resp.Header.Get(answer.HeaderIndex) != "noindex" || body != string(r.o.enc["/gzip/noindex"]) {
		t.Errorf("gzip noindex: %d %s %q", resp.StatusCode, answer.HeaderIndex, resp.Header.Get(answer.HeaderIndex))
	}
	if got := r.o.header().Get("Accept-Encoding"); got != "br, gzip" {
		t.Errorf("the origin saw Accept-Encoding %q", got)
	}
	resp, body = get(t, r.c, r.base+"/br/noindex", "Accept-Encoding", "br")
	if resp.StatusCode != 200 || body != string(r.o.enc["/br/noindex"]) || !strings.Contains(resp.Header.Get(HeaderUnscanned), `"br"`) {
		t.Errorf("br: %d %s %q", resp.StatusCode, HeaderUnscanned, resp.Header.Get(HeaderUnscanned))
	}
}

// TestScanRobotTagsBombs: the scan reads a bounded number of coded bytes
// whatever the body: a gzip bomb is decoded up to max_scan_bytes (its
// head goes on past them, so it is incomplete), and a
// body of endless empty gzip members (no output at all) is cut at its
// layer limit and undecodable.
func TestScanRobotTagsBombs(t *testing.T) {
	const limit = 2*65536 + 64<<10
	bomb := encodeGzip("<html><head>" + strings.Repeat(" ", 50<<20))
	resp, _ := tagResp(200, "text/html", string(bomb), "Content-Encoding", "gzip")
	s := bodyscan.RobotTags(resp, tagsCfg("enforce"))
	if !strings.Contains(s.NotScanned, "max_scan_bytes") || s.Scanned > limit {
		t.Errorf("gzip bomb: not scanned %q, %d coded bytes read", s.NotScanned, s.Scanned)
	}
	empty := encodeGzip("")
	resp, _ = tagResp(200, "text/html", strings.Repeat(string(empty), 2*limit/len(empty)), "Content-Encoding", "gzip")
	s = bodyscan.RobotTags(resp, tagsCfg("enforce"))
	if !s.Incomplete || s.Scanned > limit {
		t.Errorf("empty members: undecodable %v (%s), %d coded bytes read", s.Incomplete, s.NotScanned, s.Scanned)
	}
	for _, ce := range []string{"br", "zstd", "gzip, gzip, gzip, gzip, gzip", "compress"} {
		resp, _ = tagResp(200, "text/html", string(bomb), "Content-Encoding", ce)
		if s := bodyscan.RobotTags(resp, tagsCfg("enforce")); !s.Incomplete {
			t.Errorf("Content-Encoding %s: scanned", ce)
		}
	}
	resp, _ = tagResp(200, "text/html", string(bomb[:len(bomb)/2])+"garbage", "Content-Encoding", "deflate")
	if s := bodyscan.RobotTags(resp, tagsCfg("enforce")); !s.Incomplete {
		t.Error("corrupt deflate: scanned")
	}
}
