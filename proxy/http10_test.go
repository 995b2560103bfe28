package proxy

import (
	"bufio"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
)

// headerOrigin is an origin that records the header (and Close flag) of
// the last request for a page and serves:
//
//	/len     "hello" with a Content-Length
//	/stream  "part1part2", flushed in between (no length: chunked)
//	/gzip    a gzip body, Content-Encoding: gzip, when the request accepts gzip
//	/tagged  a page with X-Robots-Tag: noindex, of unknown length
type headerOrigin struct {
	mu     sync.Mutex
	header http.Header
	close  bool
	n      int
}

const headerOriginGzipText = "compressed text"

func (o *headerOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		io.WriteString(w, "User-agent: *\nAllow: /\n")
		return
	}
	o.mu.Lock()
	o.header, o.close = r.Header.Clone(), r.Close
	o.n++
	o.mu.Unlock()
	switch r.URL.Path {
	case "/len":
		w.Header().Set("Content-Length", "5")
		io.WriteString(w, "hello")
	case "/stream":
		io.WriteString(w, "part1")
		w.(http.Flusher).Flush()
		io.WriteString(w, "part2")
	case "/gzip":
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			io.WriteString(w, headerOriginGzipText)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(encodeGzip(headerOriginGzipText))
	case "/tagged":
		w.Header().Set("X-Robots-Tag", "noindex")
		io.WriteString(w, "tagged page")
		w.(http.Flusher).Flush()
	}
}

// last returns the header and Close flag of the last page request.
func (o *headerOrigin) last() (http.Header, bool, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.header, o.close, o.n
}

// checkNoAddedHeaders fails when the origin saw a header the client did
// not send (the client sent Host and, when accept is set, Accept-Encoding).
func checkNoAddedHeaders(t *testing.T, what string, o *headerOrigin, accept bool) {
	t.Helper()
	h, closed, n := o.last()
	if n == 0 {
		t.Fatalf("%s: the origin got no request", what)
	}
	for k, v := range h {
		if k == "Accept-Encoding" && accept {
			continue
		}
		t.Errorf("%s: the origin got %s: %q, which the client did not send", what, k, v)
	}
	if closed {
		t.Errorf("%s: the origin was asked to close the connection", what)
	}
}

// startHeaderOrigin starts a headerOrigin over plain HTTP and a proxy
// harness.
func startHeaderOrigin(t *testing.T) (*headerOrigin, *httptest.Server, *harness) {
	o := &headerOrigin{}
	return o, startTestServer(t, o, false), newHarness(t, harnessOpts{})
}

// TestForwardAddsNoHeaders: a request leaves with the client's headers
// only, in plain HTTP and inside an MITM session: no
// "User-Agent: Go-http-client/1.1", no "Accept-Encoding: gzip" (which the
// transport would also decode behind the client's back), no
// "Connection: close" for an HTTP/1.0 client. A client's own
// Accept-Encoding passes, and the encoded body reaches it as sent. Before
// the fix the origin saw Go's User-Agent.
func TestForwardAddsNoHeaders(t *testing.T) {
	o, plain, h := startHeaderOrigin(t)
	host := strings.TrimPrefix(plain.URL, "http://")
	for _, proto := range []string{"HTTP/1.1", "HTTP/1.0"} {
		head, body := rawExchange(t, h.addr, "GET "+plain.URL+"/len "+proto+"\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
		if !strings.Contains(head, " 200 ") || body != "hello" {
			t.Fatalf("plain %s: %q %q", proto, head, body)
		}
		checkNoAddedHeaders(t, "plain "+proto, o, false)
	}
	head, body := rawExchange(t, h.addr, "GET "+plain.URL+"/gzip HTTP/1.1\r\nHost: "+host+"\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n")
	checkNoAddedHeaders(t, "plain with Accept-Encoding", o, true)
	if !strings.Contains(head, "Content-Encoding: gzip") || body != string(encodeGzip(headerOriginGzipText)) {
		t.Errorf("gzip body not passed as sent: %q %q", head, body)
	}

	tlsO := &tlsOrigin{}
	tlsO.Server = quietTLSServer(o)
	t.Cleanup(tlsO.Close)
	p := startHTTPSProxy(t, mitmConfig(t, tlsO))
	target := strings.TrimPrefix(tlsO.URL, "https://")
	for _, proto := range []string{"HTTP/1.1", "HTTP/1.0"} {
		tc := mitmConn(t, p, target)
		io.WriteString(tc, "GET /len "+proto+"\r\nHost: "+target+"\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
		if err != nil {
			t.Fatalf("MITM %s: %v", proto, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(b) != "hello" {
			t.Fatalf("MITM %s: %d %q", proto, resp.StatusCode, b)
		}
		checkNoAddedHeaders(t, "MITM "+proto, o, false)
	}
}

// rawExchange sends req to addr over a new connection, reads until the
// server closes it, and returns the response head and the rest.
func rawExchange(t *testing.T, addr, req string) (head, body string) {
	t.Helper()
	c := dialRaw(t, addr)
	defer c.Close()
	io.WriteString(c, req)
	return splitResponse(t, c)
}

// splitResponse reads r to its end (the server closing the connection)
// and splits what it got at the end of the response head.
func splitResponse(t *testing.T, r io.Reader) (head, body string) {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading the response until the connection closes: %v (got %q)", err, b)
	}
	head, body, ok := strings.Cut(string(b), "\r\n\r\n")
	if !ok {
		t.Fatalf("no response head in %q", b)
	}
	return head, body
}

// mitmConn opens an MITM session to target through p: a TLS connection,
// trusting p's CA, with a deadline of testTimeout.
func mitmConn(t *testing.T, p *httpsProxy, target string) *tls.Conn {
	t.Helper()
	resp, _, c := p.rawConnect(t, target)
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT %s: %d", target, resp.StatusCode)
	}
	c.SetDeadline(time.Now().Add(testTimeout))
	tc := tls.Client(c, &tls.Config{RootCAs: p.ca, ServerName: "127.0.0.1"})
	t.Cleanup(func() { tc.Close() })
	return tc
}

// TestMITMHTTP10: inside an MITM session an HTTP/1.0 request gets an
// HTTP/1.0 answer: never chunked (Content-Length, or a body ended by
// closing), and the session closes after it unless the client asked for
// keep-alive and the length is known. Checked with raw bytes over the TLS
// connection; a session left open would fail the read at its deadline.
// Before the fix the body came chunked and the connection stayed open.
func TestMITMHTTP10(t *testing.T) {
	o := &headerOrigin{}
	tlsO := &tlsOrigin{}
	tlsO.Server = quietTLSServer(o)
	t.Cleanup(tlsO.Close)
	cfg := mitmConfig(t, tlsO)
	cfg.RobotTags.Mode = config.RobotTagsEnforce
	p := startHTTPSProxy(t, cfg)
	target := strings.TrimPrefix(tlsO.URL, "https://")

	for _, tc := range []struct {
		path, want string
		length     bool
	}{
		{"/stream", "part1part2", false},
		{"/len", "hello", true},
		{"/tagged", "", true}, // replaced by robotsgate's 403
	} {
		c := mitmConn(t, p, target)
		io.WriteString(c, "GET "+tc.path+" HTTP/1.0\r\nHost: "+target+"\r\n\r\n")
		head, body := splitResponse(t, c)
		lower := strings.ToLower(head)
		if strings.Contains(lower, "chunked") || !strings.Contains(lower, "\r\nconnection: close") ||
			strings.Contains(lower, "content-length: "+closeDelimited) {
			t.Errorf("GET %s HTTP/1.0: head %q", tc.path, head)
		}
		if tc.length != strings.Contains(lower, "\r\ncontent-length:") {
			t.Errorf("GET %s HTTP/1.0: Content-Length present %v, want %v: %q", tc.path, !tc.length, tc.length, head)
		}
		if tc.want != "" && body != tc.want {
			t.Errorf("GET %s HTTP/1.0: body %q, want %q", tc.path, body, tc.want)
		}
		if tc.path == "/tagged" && (!strings.Contains(head, " 403 ") || strings.Contains(body, "tagged page")) {
			t.Errorf("GET /tagged HTTP/1.0: %q %q, want robotsgate's 403", head, body)
		}
	}

	// Keep-alive asked, length known: the connection stays for the next
	// request; a body of unknown length then ends the session.
	c := mitmConn(t, p, target)
	br := bufio.NewReader(c)
	io.WriteString(c, "GET /len HTTP/1.0\r\nHost: "+target+"\r\nConnection: keep-alive\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "hello" || resp.ContentLength != 5 || resp.Header.Get("Connection") != "keep-alive" || resp.Close {
		t.Errorf("keep-alive: %q, length %d, Connection %q", b, resp.ContentLength, resp.Header.Get("Connection"))
	}
	io.WriteString(c, "GET /stream HTTP/1.0\r\nHost: "+target+"\r\nConnection: keep-alive\r\n\r\n")
	head, body := splitResponse(t, br)
	if strings.Contains(strings.ToLower(head), "chunked") || body != "part1part2" {
		t.Errorf("second request: %q %q", head, body)
	}
}

// TestPlainHTTP10: net/http answers a plain proxied HTTP/1.0 request
// without chunking and closes the connection, also for a streamed body.
func TestPlainHTTP10(t *testing.T) {
	_, plain, h := startHeaderOrigin(t)
	host := strings.TrimPrefix(plain.URL, "http://")
	head, body := rawExchange(t, h.addr, "GET "+plain.URL+"/stream HTTP/1.0\r\nHost: "+host+"\r\n\r\n")
	if !strings.HasPrefix(head, "HTTP/1.0 200") || strings.Contains(strings.ToLower(head), "chunked") || body != "part1part2" {
		t.Errorf("%q %q", head, body)
	}
}
