package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
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
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
	host := strings.TrimPrefix(o.URL, "http://")
	io.WriteString(c, "GET /page HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status %d, want 403 not-redirected", resp.StatusCode)
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
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
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
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
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
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: origin.test\r\nX-Big: "+strings.Repeat("a", 64<<10)+"\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("oversized head: %d, want 431", resp.StatusCode)
	}

	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slow.SetDeadline(time.Now().Add(testTimeout))
	io.WriteString(slow, "GET / HTTP/1.1\r\nHost: orig") // and nothing more
	if b, err := io.ReadAll(slow); err != nil || len(b) != 0 && !strings.HasPrefix(string(b), "HTTP/1.1 408") {
		t.Errorf("a head that never ends: read %q, %v; want the connection closed", b, err)
	}
}
