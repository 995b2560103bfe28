package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// echoConnect is a CONNECT handler standing in for goproxy: it marks
// targets starting with "mitm" as intercepted, hijacks, answers 200 and
// then echoes lines until a read fails. done receives once it has closed
// the connection.
func echoConnect(done chan<- string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Host, "mitm") {
			connInfoFrom(r.Context()).mitm.Store(true)
		}
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		if _, ok := c.(halfCloser); !ok {
			io.WriteString(c, "HTTP/1.1 500 lost half-close\r\n\r\n")
		} else {
			io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\n")
		}
		go func() {
			br := bufio.NewReader(c)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					break
				}
				io.WriteString(c, line)
			}
			c.Close()
			done <- r.Host
		}()
	})
}

// dialConnect opens a CONNECT session with echoConnect through addr and
// checks that it echoes.
func dialConnect(t *testing.T, addr, target string) (net.Conn, *bufio.Reader) {
	t.Helper()
	resp, c, br := rawConnect(t, addr, target)
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT %s: %s", target, resp.Status)
	}
	// The session works.
	io.WriteString(c, "ping\n")
	if line, err := br.ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("echo: %q %v", line, err)
	}
	return c, br
}

func TestConnTrackerShutdown(t *testing.T) {
	tr := newHijackTracker()
	done := make(chan string, 4)
	srv := httptest.NewServer(tr.wrap(echoConnect(done)))
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	mitm, mitmR := dialConnect(t, addr, "mitm.test:443")
	tunnel, tunnelR := dialConnect(t, addr, "tunnel.test:443")
	if n := tr.active(); n != 2 {
		t.Fatalf("tracking %d connections, want 2", n)
	}

	// http.Server.Shutdown returns at once: it does not know hijacked
	// connections.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Config.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	res := make(chan error, 1)
	go func() { res <- tr.shutdown(ctx) }()

	// The idle MITM session is ended by the drain; the client sees EOF.
	if h := <-done; h != "mitm.test:443" {
		t.Fatalf("first connection to end: %s, want the MITM session", h)
	}
	if _, err := mitmR.ReadString('\n'); !errors.Is(err, io.EOF) {
		t.Fatalf("MITM client read after drain: %v, want EOF", err)
	}
	_ = mitm

	// The tunnel is still open and working: shutdown waits for it.
	io.WriteString(tunnel, "still there\n")
	if line, err := tunnelR.ReadString('\n'); err != nil || line != "still there\n" {
		t.Fatalf("tunnel during drain: %q %v", line, err)
	}
	select {
	case err := <-res:
		t.Fatalf("shutdown returned (%v) while a tunnel was open", err)
	default:
	}
	// The client ends the tunnel; shutdown completes without error.
	tunnel.(*net.TCPConn).CloseWrite()
	<-done
	if err := <-res; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if n := tr.active(); n != 0 {
		t.Fatalf("%d connections still tracked", n)
	}
}

func TestConnTrackerShutdownDeadline(t *testing.T) {
	tr := newHijackTracker()
	done := make(chan string, 4)
	srv := httptest.NewServer(tr.wrap(echoConnect(done)))
	defer srv.Close()
	tunnel, tunnelR := dialConnect(t, srv.Listener.Addr().String(), "tunnel.test:443")
	_ = tunnel

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the shutdown bound has passed
	err := tr.shutdown(ctx)
	if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "closed 1 CONNECT") {
		t.Fatalf("shutdown past its deadline: %v", err)
	}
	<-done
	if _, err := tunnelR.ReadString('\n'); err == nil {
		t.Fatal("tunnel still open after the forced close")
	}
	if n := tr.active(); n != 0 {
		t.Fatalf("%d connections still tracked", n)
	}
	// Nothing tracked: shutdown returns nil at once.
	if err := newHijackTracker().shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
