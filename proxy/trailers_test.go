package proxy

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
)

// trailerFields are the fields a client sends in the trailer section of
// a chunked request: its robotsgate credentials, its overrides, a field
// its Connection header names, and a Host.
var trailerFields = []string{"Proxy-Authorization", "X-Robots-Agent", "X-Robots-Purpose", "X-Conn-Secret", "Host"}

// trailerRequest is a chunked POST of target (an absolute URL for the
// proxy listener, a path otherwise) to host whose trailer section holds
// every [trailerFields]; declared lists them in a Trailer header first.
func trailerRequest(target, host string, declared bool) string {
	var b strings.Builder
	b.WriteString("POST " + target + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: TestBot/1.0\r\n")
	b.WriteString("Connection: X-Conn-Secret, close\r\nTransfer-Encoding: chunked\r\n")
	if declared {
		b.WriteString("Trailer: " + strings.Join(trailerFields, ", ") + "\r\n")
	}
	b.WriteString("\r\n4\r\nbody\r\n0\r\n")
	b.WriteString("Proxy-Authorization: Basic Y3Jhd2xlcjpzZWNyZXQ=\r\nX-Robots-Agent: OtherBot\r\n")
	b.WriteString("X-Robots-Purpose: search\r\nX-Conn-Secret: s\r\nHost: evil.example\r\n\r\n")
	return b.String()
}

// trailerOrigin is an origin handler that allows every path (robots.txt
// 404) and keeps the body, the header and the trailer of each request.
type trailerOrigin struct {
	mu       sync.Mutex
	bodies   []string
	headers  []http.Header
	trailers []http.Header
}

func (o *trailerOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		http.NotFound(w, r)
		return
	}
	b, _ := io.ReadAll(r.Body) // the trailer is read with the body's end
	o.mu.Lock()
	o.bodies = append(o.bodies, string(b))
	o.headers = append(o.headers, r.Header.Clone())
	o.trailers = append(o.trailers, r.Trailer.Clone())
	o.mu.Unlock()
	io.WriteString(w, "ok")
}

// check fails t unless the origin saw exactly one request, with its body
// and without any of the [trailerFields] in its trailer (nor a trailer
// section at all) or a Trailer header announcing one.
func (o *trailerOrigin) check(t *testing.T) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.bodies) != 1 || o.bodies[0] != "body" {
		t.Fatalf("origin saw bodies %q, want one \"body\"", o.bodies)
	}
	for _, k := range trailerFields {
		if v, ok := o.trailers[0][k]; ok {
			t.Errorf("origin got trailer field %s: %q", k, v)
		}
	}
	if len(o.trailers[0]) != 0 {
		t.Errorf("origin got a trailer section: %v", o.trailers[0])
	}
	if v, ok := o.headers[0]["Trailer"]; ok {
		t.Errorf("origin got a Trailer header: %q", v)
	}
}

// TestRequestTrailersDropped: the trailer section of a chunked request,
// declared in a Trailer header or not, never reaches the origin, on the
// proxy listener, inside an MITM session and on the transparent
// listener. Before the fix the declared fields (the client's
// Proxy-Authorization, its overrides, a Connection-named field, a Host)
// were forwarded in the trailer as sent.
func TestRequestTrailersDropped(t *testing.T) {
	for _, declared := range []bool{true, false} {
		name := map[bool]string{true: "declared", false: "undeclared"}[declared]
		t.Run("plain/"+name, func(t *testing.T) { testTrailersPlain(t, declared) })
		t.Run("mitm/"+name, func(t *testing.T) { testTrailersMITM(t, declared) })
		t.Run("transparent/"+name, func(t *testing.T) { testTrailersTransparent(t, declared) })
	}
}

func testTrailersPlain(t *testing.T, declared bool) {
	o := &trailerOrigin{}
	srv := httptest.NewServer(o)
	defer srv.Close()
	h := newHarness(t, harnessOpts{})
	host := strings.TrimPrefix(srv.URL, "http://")
	resp, body := rawRoundTrip(t, h.addr, trailerRequest(srv.URL+"/p", host, declared))
	if resp.StatusCode != http.StatusOK || body != "ok" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	o.check(t)
}

func testTrailersMITM(t *testing.T, declared bool) {
	o := &trailerOrigin{}
	to := &tlsOrigin{Server: quietTLSServer(o)}
	defer to.Close()
	p := startHTTPSProxy(t, mitmConfig(t, to))
	host := to.Listener.Addr().String()
	resp, _, c := p.rawConnect(t, host)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %d", resp.StatusCode)
	}
	tc := tls.Client(c, &tls.Config{RootCAs: p.ca, ServerName: "127.0.0.1"})
	if _, err := io.WriteString(tc, trailerRequest("/p", host, declared)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "ok" {
		t.Fatalf("%d %q", resp.StatusCode, b)
	}
	o.check(t)
}

func testTrailersTransparent(t *testing.T, declared bool) {
	o := &trailerOrigin{}
	srv := httptest.NewServer(o)
	defer srv.Close()
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.Transparent.Listen = "127.0.0.1:0" }})
	dst := netip.MustParseAddrPort(srv.Listener.Addr().String())
	h.srv.originalDst = func(net.Conn) (netip.AddrPort, error) { return dst, nil }
	addr := startTransparent(t, h)
	resp, body := rawRoundTrip(t, addr, trailerRequest("/p", dst.String(), declared))
	if resp.StatusCode != http.StatusOK || body != "ok" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	o.check(t)
}
