package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// startTransparent serves a transparent listener of h's Server on
// 127.0.0.1 and returns its address. Without root no connection to it
// is redirected: the redirected paths are tested end to end in a network
// namespace (cmd/robotsgate TestTransparentSidecar).
func startTransparent(t *testing.T, h *harness) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.srv.ServeTransparent(ln) }()
	t.Cleanup(func() { // before startServer's cleanup, which Shutdown would wait for
		shutdown(t, h.srv)
		if err := <-done; err != nil {
			t.Errorf("ServeTransparent: %v", err)
		}
	})
	return ln.Addr().String()
}

func transparentHarness(t *testing.T) *harness {
	return newHarness(t, harnessOpts{config: func(c *config.Config) { c.Transparent.Listen = "127.0.0.1:0" }})
}

// TestTransparentNotRedirected: a connection straight to the transparent
// port (no redirect: its original destination is the listener itself)
// is refused, audited, and never forwarded, whatever its Host names.
func TestTransparentNotRedirected(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), nil)
	h := transparentHarness(t)
	addr := startTransparent(t, h)
	c := dialDeadline(t, addr)
	host := strings.TrimPrefix(o.URL, "http://")
	if st := rawStatus(t, c, "GET /page HTTP/1.1\r\nHost: "+host+"\r\n\r\n"); st != http.StatusForbidden {
		t.Fatalf("status %d, want 403 not-redirected", st)
	}
	if !strings.Contains(h.audit.String(), `"reason":"not-redirected"`) {
		t.Errorf("audit: %s", h.audit.String())
	}
	if n := o.hits.Load(); n != 0 {
		t.Errorf("the origin saw %d requests", n)
	}
}

// TestTransparentTLSNotRedirectedClosed: a TLS client on a connection
// that was not redirected gets its connection closed (no HTTP bytes in
// its TLS stream), and the refusal is audited.
func TestTransparentTLSNotRedirectedClosed(t *testing.T) {
	h := transparentHarness(t)
	addr := startTransparent(t, h)
	c := dialDeadline(t, addr)
	tc := tls.Client(c, &tls.Config{ServerName: "origin.test", InsecureSkipVerify: true})
	if err := tc.Handshake(); err == nil {
		t.Fatal("handshake succeeded")
	}
	// the record is written before the connection is closed
	if !strings.Contains(h.audit.String(), `"reason":"not-redirected"`) {
		t.Errorf("audit: %s", h.audit.String())
	}
}

func shutdown(t *testing.T, s *Server) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// TestTransparentShutdown: Shutdown ends ServeTransparent and a
// connection still waiting to send its first bytes.
func TestTransparentShutdown(t *testing.T) {
	h := transparentHarness(t)
	addr := startTransparent(t, h)
	c := dialDeadline(t, addr)
	shutdown(t, h.srv)
	c.SetReadDeadline(time.Now().Add(testTimeout))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the silent connection is still open after Shutdown")
	}
}

// TestTransparentClientLimits: the transparent listener applies the
// proxy listener's client limits: a request head over
// client.max_header_bytes is answered 431, and one that does not arrive
// within client.header_timeout has its connection closed.
func TestTransparentClientLimits(t *testing.T) {
	h := newHarness(t, harnessOpts{config: func(c *config.Config) {
		c.Transparent.Listen = "127.0.0.1:0"
		c.Client.MaxHeaderBytes = 4 << 10
		c.Client.HeaderTimeout = 100 * time.Millisecond
	}})
	addr := startTransparent(t, h)
	c := dialDeadline(t, addr)
	if st := rawStatus(t, c, "GET / HTTP/1.1\r\nHost: origin.test\r\nX-Big: "+strings.Repeat("a", 64<<10)+"\r\n\r\n"); st != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("oversized head: %d, want 431", st)
	}

	slow := dialDeadline(t, addr)
	io.WriteString(slow, "GET / HTTP/1.1\r\nHost: orig") // and nothing more
	if b, err := io.ReadAll(slow); err != nil || len(b) != 0 && !strings.HasPrefix(string(b), "HTTP/1.1 408") {
		t.Errorf("a head that never ends: read %q, %v; want the connection closed", b, err)
	}
}

// lenientOrigin is a raw origin on 127.0.0.1 that, like Python's
// http.server, serves any request target, with or without a leading
// "/": it records each request line and answers 200.
func lenientOrigin(t *testing.T) (addr string, lines func() []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	seen := make(chan string, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(testTimeout))
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					target := strings.Fields(line)
					for { // the rest of the head
						h, err := br.ReadString('\n')
						if err != nil || h == "\r\n" {
							break
						}
					}
					body := "User-agent: *\nDisallow: /private\n"
					if len(target) > 1 && target[1] != "/robots.txt" {
						seen <- target[1]
						body = "secret"
					}
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
				}
			}()
		}
	}()
	return ln.Addr().String(), func() []string {
		var out []string
		for {
			select {
			case l := <-seen:
				out = append(out, l)
			default:
				return out
			}
		}
	}
}

// TestTransparentOpaqueTarget: on a redirected connection, the request
// line "GET http:private HTTP/1.1" (a URL with an opaque path, its host
// from the Host header) is refused: it would be sent as the target
// "private", which a lenient origin serves as /private. Before, it was
// decided as the path "/" (allowed) and forwarded.
func TestTransparentOpaqueTarget(t *testing.T) {
	oaddr, lines := lenientOrigin(t)
	h := transparentHarness(t)
	dst := netip.MustParseAddrPort(oaddr)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), redirectedKey{}, &redirected{dst: dst}))
		h.srv.serveRedirected(w, r)
	}))
	defer srv.Close()
	for _, target := range []string{"/private", "http:private", "http:private/x", "HTTP:private"} {
		resp, body := rawRoundTrip(t, srv.Listener.Addr().String(),
			"GET "+target+" HTTP/1.1\r\nHost: "+oaddr+"\r\nUser-Agent: TestBot/1.0\r\nConnection: close\r\n\r\n")
		if resp.StatusCode/100 != 4 || resp.Header.Get(answer.HeaderDecision) == "" || body == "secret" {
			t.Errorf("GET %s: %d %s %q, want robotsgate's refusal", target, resp.StatusCode, resp.Header.Get(answer.HeaderDecision), body)
		}
	}
	if got := lines(); len(got) != 0 {
		t.Errorf("the origin was sent %q", got)
	}
}

// dialDeadline connects to addr, with testTimeout as the connection's
// deadline; the connection is closed when the test ends.
func dialDeadline(t *testing.T, addr string) net.Conn {
	t.Helper()
	c := dialRaw(t, addr)
	t.Cleanup(func() { c.Close() })
	return c
}

// rawStatus writes req on c and returns the status of the answer (its
// body unread).
func rawStatus(t *testing.T, c net.Conn, req string) int {
	t.Helper()
	io.WriteString(c, req)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
