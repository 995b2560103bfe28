package enforce

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// compressed returns b written through the writer newWriter makes.
func compressed(b []byte, newWriter func(io.Writer) io.WriteCloser) []byte {
	var buf bytes.Buffer
	zw := newWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// gzipped returns b gzip-compressed.
func gzipped(b []byte) []byte {
	return compressed(b, func(w io.Writer) io.WriteCloser {
		zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
		return zw
	})
}

// zlibbed returns b zlib-wrapped (HTTP's "deflate").
func zlibbed(b []byte) []byte {
	return compressed(b, func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) })
}

// rawDeflated returns b as a raw deflate stream (what some servers send
// as "deflate").
func rawDeflated(b []byte) []byte {
	return compressed(b, func(w io.Writer) io.WriteCloser {
		zw, _ := flate.NewWriter(w, flate.BestCompression)
		return zw
	})
}

// serveBytes returns a handler answering 200 with body and the given
// Content-Encoding, whatever the request's Accept-Encoding says (as
// object stores serving files stored compressed do).
func serveBytes(body []byte, encoding string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if encoding != "" {
			w.Header().Set("Content-Encoding", encoding)
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write(body)
	}
}

// stallingBody returns a handler that sends the headers and the start of
// a robots.txt, then stalls until the test ends.
func stallingBody(t testing.TB) http.HandlerFunc {
	block := blocking(t)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(200)
		fmt.Fprint(w, "User-agent: *\n")
		w.(http.Flusher).Flush()
		block(w, r)
	}
}

// edgeStatusCases are the rows of the status table that RFC 9309 leaves
// open or that need decoding; statusCases includes them.
func edgeStatusCases() []statusCase {
	fixed := func(h http.HandlerFunc) func(testing.TB) http.HandlerFunc {
		return func(testing.TB) http.HandlerFunc { return h }
	}
	rb := []byte(testRobots)
	return []statusCase{
		// Content codings, sent whether asked for or not.
		{"gzip", fixed(serveBytes(gzipped(rb), "gzip")), StatusOK, 200, "", "/robots.txt", false, ReasonDisallowed},
		{"x-gzip", fixed(serveBytes(gzipped(rb), "x-gzip")), StatusOK, 200, "", "/robots.txt", false, ReasonDisallowed},
		{"GZIP upper case", fixed(serveBytes(gzipped(rb), "GZIP")), StatusOK, 200, "", "/robots.txt", false, ReasonDisallowed},
		{"deflate zlib", fixed(serveBytes(zlibbed(rb), "deflate")), StatusOK, 200, "", "/robots.txt", false, ReasonDisallowed},
		{"deflate raw", fixed(serveBytes(rawDeflated(rb), "deflate")), StatusOK, 200, "", "/robots.txt", false, ReasonDisallowed},
		{"gzip, gzip", fixed(serveBytes(gzipped(gzipped(rb)), "gzip, gzip")), StatusOK, 200, "", "/robots.txt", false, ReasonDisallowed},
		{"deflate then gzip", fixed(serveBytes(gzipped(zlibbed(rb)), "deflate,identity, gzip")), StatusOK, 200, "", "/robots.txt", false, ReasonDisallowed},
		{"identity", fixed(serveBytes(rb, "identity")), StatusOK, 200, "", "/robots.txt", false, ReasonDisallowed},
		{"br", fixed(serveBytes(rb, "br")), StatusUnreachable, 200, `"br" cannot be decoded`, "/robots.txt", false, ReasonRobotsUnreachable},
		{"compress", fixed(serveBytes(rb, "compress")), StatusUnreachable, 200, "cannot be decoded", "/robots.txt", false, ReasonRobotsUnreachable},
		{"unknown after gzip", fixed(serveBytes(gzipped(rb), "gzip, zstd")), StatusUnreachable, 200, "cannot be decoded", "/robots.txt", false, ReasonRobotsUnreachable},
		{"corrupt gzip", fixed(serveBytes(append(gzipped(rb)[:20:20], "garbage"...), "gzip")), StatusUnreachable, 200, "decoding", "/robots.txt", false, ReasonRobotsUnreachable},
		{"plain text as gzip", fixed(serveBytes(rb, "gzip")), StatusUnreachable, 200, "gzip", "/robots.txt", false, ReasonRobotsUnreachable},
		{"too many codings", fixed(serveBytes(rb, "gzip,gzip,gzip,gzip,gzip")), StatusUnreachable, 200, "more than 4", "/robots.txt", false, ReasonRobotsUnreachable},
		// Statuses RFC 9309 does not name: unreachable, never allow-all.
		{"3xx without Location", fixed(serve(302, "")), StatusUnreachable, 302, "without a Location", "/robots.txt", false, ReasonRobotsUnreachable},
		{"300 with Location", fixed(serve(300, "", "Location", "/r1")), StatusUnreachable, 300, "cannot be followed", "/robots.txt", false, ReasonRobotsUnreachable},
		{"304 unasked", fixed(serve(304, "")), StatusUnreachable, 304, "304", "/robots.txt", false, ReasonRobotsUnreachable},
		{"redirect loop", fixed(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/robots.txt", http.StatusFound)
		}), StatusUnavailable, 302, "too many redirects", "/robots.txt", true, ReasonRobotsUnavailable},
		{"200 text/html", fixed(serve(200, testRobots, "Content-Type", "text/html")), StatusOK, 200, "", "/robots.txt", false, ReasonDisallowed},
		{"body stalls", stallingBody, StatusUnreachable, 200, "reading robots.txt body", "/robots.txt", false, ReasonOriginUnreachable},
	}
}

// TestHTTPFetcherGzipWithoutTransportDecoding fetches with a transport
// that does not decode gzip itself, as robotsgate's own does (it passes
// bodies to clients as the origin sent them).
func TestHTTPFetcherGzipWithoutTransportDecoding(t *testing.T) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	t.Cleanup(tr.CloseIdleConnections)
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Accept-Encoding"); got != acceptEncoding {
			t.Errorf("Accept-Encoding = %q", got)
		}
		serveBytes(gzipped([]byte(testRobots)), "gzip")(w, r)
	})
	f := &HTTPFetcher{MaxRedirects: testRedirects, Transport: tr}
	if r := f.Fetch(context.Background(), o.srv.URL); r.Status != StatusOK || string(r.Body) != testRobots {
		t.Fatalf("Fetch = %s %q (%s)", r.Status, r.Body, r.Err)
	}
	e := newTestEnforcer(t, Config{Fetcher: f}, nil)
	if d := e.Decide(context.Background(), o.url("/private/x"), "", DecideOptions{}); d.Allowed || d.Rule != "Disallow: /private" {
		t.Fatalf("Decide = %+v", d)
	}
}

// TestHTTPFetcherDecompressionBomb checks that the size limit applies to
// the decoded bytes, and that streams built to decode for long fail.
func TestHTTPFetcherDecompressionBomb(t *testing.T) {
	const limit = 4 << 10
	huge := append([]byte("User-agent: *\nDisallow: /early\n"), make([]byte, 64<<20)...)
	emptyMember := gzipped(nil)
	endless := bytes.Repeat(emptyMember, (1<<20)/len(emptyMember)) // empty gzip members, no output
	tests := []struct {
		name      string
		body      []byte
		encoding  string
		wantOK    bool
		wantError string
	}{
		{"64 MiB of zeros", gzipped(huge), "gzip", true, ""},
		{"64 MiB of zeros, twice compressed", gzipped(gzipped(huge)), "gzip, gzip", true, ""},
		{"endless empty members", endless, "gzip", false, "far longer"},
		{"endless empty members, inner layer", gzipped(endless), "gzip, gzip", false, "far longer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOrigin(t, serveBytes(tt.body, tt.encoding))
			r := (&HTTPFetcher{MaxRedirects: testRedirects, MaxBytes: limit}).Fetch(context.Background(), o.srv.URL)
			if tt.wantOK {
				if r.Status != StatusOK || !r.Truncated || len(r.Body) != limit || !strings.HasPrefix(string(r.Body), "User-agent") {
					t.Fatalf("Fetch: %s truncated %v len %d (%s)", r.Status, r.Truncated, len(r.Body), r.Err)
				}
				return
			}
			if r.Status != StatusUnreachable || !strings.Contains(r.Err, tt.wantError) {
				t.Fatalf("Fetch: %s (%s), want unreachable with %q", r.Status, r.Err, tt.wantError)
			}
		})
	}
}

func TestIsZlibHeader(t *testing.T) {
	for _, level := range []int{flate.NoCompression, flate.BestSpeed, flate.DefaultCompression, flate.BestCompression} {
		var z, raw bytes.Buffer
		zw, _ := zlib.NewWriterLevel(&z, level)
		zw.Write([]byte(testRobots))
		zw.Close()
		fw, _ := flate.NewWriter(&raw, level)
		fw.Write([]byte(testRobots))
		fw.Close()
		if !isZlibHeader(z.Bytes()) || isZlibHeader(raw.Bytes()) {
			t.Errorf("level %d: zlib %v raw %v", level, isZlibHeader(z.Bytes()), isZlibHeader(raw.Bytes()))
		}
	}
}

// TestHTTPFetcherRedirectToOtherScheme: a redirect may only lead to http
// or https, even when the transport knows other schemes.
func TestHTTPFetcherRedirectToOtherScheme(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "robots.txt"), []byte("User-agent: *\nAllow: /\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.RegisterProtocol("file", http.NewFileTransport(http.Dir(dir)))
	t.Cleanup(tr.CloseIdleConnections)
	for _, loc := range []string{"file:///robots.txt", "ftp://user:secret@127.0.0.1/robots.txt", "javascript:alert(1)"} {
		t.Run(loc, func(t *testing.T) {
			o := newOrigin(t, serve(301, "", "Location", loc))
			f := &HTTPFetcher{MaxRedirects: testRedirects, Transport: tr}
			r := f.Fetch(context.Background(), o.srv.URL)
			if r.Status != StatusUnreachable || !strings.Contains(r.Err, "scheme") || strings.Contains(r.FinalURL+r.Err, "secret") {
				t.Fatalf("Fetch = %+v", r)
			}
			e := newTestEnforcer(t, Config{Fetcher: f}, nil)
			if d := e.Decide(context.Background(), o.url("/x"), "", DecideOptions{}); d.Allowed || d.Reason != ReasonRobotsUnreachable {
				t.Fatalf("Decide = %+v", d)
			}
		})
	}
}

// rawOrigin starts a TCP server on 127.0.0.1 that answers every
// connection with resp as it is, and returns its origin.
func rawOrigin(t *testing.T, resp string) string {
	t.Helper()
	return "http://" + testsupport.ServeConns(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		c.Read(buf) // the request; its content does not matter
		c.Write([]byte(resp))
	})
}

// TestHTTPFetcherOddStatuses: statuses outside 2xx-5xx, and 1xx as a
// final answer, are unreachable.
func TestHTTPFetcherOddStatuses(t *testing.T) {
	tests := []struct{ name, resp string }{
		{"101", "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n"},
		{"103 then 503", "HTTP/1.1 103 Early Hints\r\n\r\nHTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n"},
		{"600", "HTTP/1.1 600 Odd\r\nContent-Length: 0\r\n\r\n"},
		{"999", "HTTP/1.1 999 Odd\r\nContent-Length: 0\r\n\r\n"},
		{"099", "HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			origin := rawOrigin(t, tt.resp)
			f := &HTTPFetcher{MaxRedirects: testRedirects, Timeout: 5 * time.Second}
			if r := f.Fetch(context.Background(), origin); r.Status != StatusUnreachable || r.Err == "" {
				t.Fatalf("Fetch = %+v", r)
			}
		})
	}
}
