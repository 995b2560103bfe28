package conns

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

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// echoConnect is a CONNECT handler standing in for goproxy: it marks
// targets starting with "mitm" as intercepted, hijacks, answers 200 and
// then echoes lines until a read fails. done receives once it has closed
// the connection.
func echoConnect(done chan<- string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Host, "mitm") {
			InfoFrom(r.Context()).mitm.Store(true)
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
	resp, c, br := testsupport.RawConnect(t, addr, target)
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
	tr := NewHijackTracker(Limits{headerTimeout: 30 * time.Second, idleTimeout: 120 * time.Second})
	done := make(chan string, 4)
	srv := httptest.NewServer(tr.Wrap(echoConnect(done)))
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	mitm, mitmR := dialConnect(t, addr, "mitm.test:443")
	tunnel, tunnelR := dialConnect(t, addr, "tunnel.test:443")
	if n := tr.Active(); n != 2 {
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
	go func() { res <- tr.Shutdown(ctx) }()

	// The idle MITM session is ended by the drain, and the tunnel (idle
	// here) is closed: shutdown does not wait for it, as an opaque tunnel
	// writes no audit record once open. Both clients see EOF.
	if _, err := mitmR.ReadString('\n'); !errors.Is(err, io.EOF) {
		t.Fatalf("MITM client read after drain: %v, want EOF", err)
	}
	if _, err := tunnelR.ReadString('\n'); err == nil {
		t.Fatal("tunnel still open after the drain")
	}
	_, _ = mitm, tunnel
	ended := map[string]bool{}
	for range 2 {
		select {
		case h := <-done:
			ended[h] = true
		case <-time.After(testsupport.WaitTimeout):
			t.Fatalf("connections ended: %v, want both", ended)
		}
	}
	select {
	case err := <-res:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(testsupport.WaitTimeout):
		t.Fatal("shutdown still waiting after every connection ended")
	}
	if n := tr.Active(); n != 0 {
		t.Fatalf("%d connections still tracked", n)
	}
}

// TestConnTrackerSilentClientClosed: a hijacked connection whose client
// sends nothing after the CONNECT (handshakeTimeout), or goes silent after
// some traffic (idleTimeout), is closed by the proxy rather than held
// forever. The timeouts are tiny here; the client waits up to testsupport.WaitTimeout.
func TestConnTrackerSilentClientClosed(t *testing.T) {
	for _, tc := range []struct {
		name            string
		handshake, idle time.Duration
		traffic         bool
	}{
		{"silent after CONNECT", 50 * time.Millisecond, time.Hour, false},
		{"silent after traffic", time.Hour, 50 * time.Millisecond, true},
		{"mitm silent after CONNECT", 50 * time.Millisecond, time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewHijackTracker(Limits{headerTimeout: 30 * time.Second, idleTimeout: 120 * time.Second})
			tr.limits.headerTimeout, tr.limits.idleTimeout = tc.handshake, tc.idle
			done := make(chan string, 1)
			srv := httptest.NewServer(tr.Wrap(echoConnect(done)))
			defer srv.Close()
			target := "tunnel.test:443"
			if strings.HasPrefix(tc.name, "mitm") {
				target = "mitm.test:443"
			}
			resp, c, br := testsupport.RawConnect(t, srv.Listener.Addr().String(), target)
			if resp.StatusCode != 200 {
				t.Fatalf("CONNECT: %s", resp.Status)
			}
			if tc.traffic {
				io.WriteString(c, "ping\n")
				if line, err := br.ReadString('\n'); err != nil || line != "ping\n" {
					t.Fatalf("echo: %q %v", line, err)
				}
			}
			c.SetReadDeadline(time.Now().Add(testsupport.WaitTimeout))
			if _, err := br.ReadString('\n'); !errors.Is(err, io.EOF) {
				t.Fatalf("silent client's read: %v, want EOF (closed by the proxy)", err)
			}
			select {
			case <-done:
			case <-time.After(testsupport.WaitTimeout):
				t.Fatal("the handler did not end")
			}
			testsupport.WaitFor(t, "connection untracked", func() bool { return tr.Active() == 0 })
		})
	}
}

func TestConnTrackerShutdownDeadline(t *testing.T) {
	tr := NewHijackTracker(Limits{headerTimeout: 30 * time.Second, idleTimeout: 120 * time.Second})
	done := make(chan string, 4)
	// An MITM session busy with a request: it reads nothing until hold
	// is closed, so the drain cannot end it.
	hold := make(chan struct{})
	srv := httptest.NewServer(tr.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		InfoFrom(r.Context()).mitm.Store(true)
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\n")
		go func() {
			<-hold
			c.Read(make([]byte, 1))
			c.Close()
			done <- r.Host
		}()
	})))
	defer srv.Close()
	resp, _, br := testsupport.RawConnect(t, srv.Listener.Addr().String(), "mitm.test:443")
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the shutdown bound has passed
	err := tr.Shutdown(ctx)
	if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "closed 1 CONNECT") {
		t.Fatalf("shutdown past its deadline: %v", err)
	}
	if _, err := br.ReadString('\n'); err == nil {
		t.Fatal("session still open after the forced close")
	}
	close(hold)
	<-done
	if n := tr.Active(); n != 0 {
		t.Fatalf("%d connections still tracked", n)
	}
	// Nothing tracked: shutdown returns nil at once.
	if err := NewHijackTracker(Limits{headerTimeout: 30 * time.Second, idleTimeout: 120 * time.Second}).Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
