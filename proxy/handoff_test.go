package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/upstream"
)

// connOrigin is a plain-HTTP origin on 127.0.0.1 that answers
// /robots.txt with the raw bytes robots and every other path with a
// page, recording the paths each accepted connection carried.
type connOrigin struct {
	ln     net.Listener
	robots string
	// closeAfterRobots closes a connection once robots.txt is written.
	closeAfterRobots bool

	mu    sync.Mutex
	conns [][]string // paths per accepted connection, in order
	open  []net.Conn // every accepted connection
}

func newConnOrigin(t *testing.T, robots string) *connOrigin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &connOrigin{ln: ln, robots: robots}
	go o.serve()
	t.Cleanup(func() {
		ln.Close()
		o.mu.Lock()
		defer o.mu.Unlock()
		for _, c := range o.open {
			c.Close()
		}
	})
	return o
}

func (o *connOrigin) serve() {
	for {
		c, err := o.ln.Accept()
		if err != nil {
			return
		}
		o.mu.Lock()
		o.conns = append(o.conns, nil)
		o.open = append(o.open, c)
		i := len(o.conns) - 1
		o.mu.Unlock()
		go o.serveConn(c, i)
	}
}

func (o *connOrigin) serveConn(c net.Conn, i int) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		o.mu.Lock()
		o.conns[i] = append(o.conns[i], req.URL.Path)
		o.mu.Unlock()
		if req.URL.Path == "/robots.txt" {
			io.WriteString(c, o.robots)
			if o.closeAfterRobots {
				return
			}
			continue
		}
		body := "page " + req.URL.Path
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
}

// paths returns the paths each connection carried.
func (o *connOrigin) paths() [][]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([][]string, len(o.conns))
	for i, p := range o.conns {
		out[i] = append([]string(nil), p...)
	}
	return out
}

func (o *connOrigin) port() int { return o.ln.Addr().(*net.TCPAddr).Port }

const handoffRobots = "User-agent: *\nDisallow: /private\n"

// rawRobots is a clean HTTP/1.1 robots.txt response of handoffRobots.
func rawRobots(extraHeader, trailing string) string {
	return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n%sContent-Length: %d\r\n\r\n%s%s",
		extraHeader, len(handoffRobots), handoffRobots, trailing)
}

// TestHandoffOneConnectionPerNewOrigin: a new origin visited once costs
// one TCP connection: its robots.txt, then the forwarded request on the
// same connection; by IP literal and by name (pinned).
func TestHandoffOneConnectionPerNewOrigin(t *testing.T) {
	chunked := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
		fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(handoffRobots), handoffRobots)
	for _, tc := range []struct{ name, robots, host string }{
		{"content-length", rawRobots("", ""), "127.0.0.1"},
		{"chunked", chunked, "127.0.0.1"},
		{"pinned name", rawRobots("", ""), "origin.test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newConnOrigin(t, tc.robots)
			h := newHarness(t, harnessOpts{lookup: loopbackLookup})
			resp, body := h.get(t, fmt.Sprintf("http://%s:%d/page", tc.host, o.port()))
			if resp.StatusCode != 200 || body != "page /page" {
				t.Fatalf("got %d %q", resp.StatusCode, body)
			}
			got := o.paths()
			if len(got) != 1 || strings.Join(got[0], " ") != "/robots.txt /page" {
				t.Fatalf("connections and their requests: %q, want one: [/robots.txt /page]", got)
			}
			if n := h.srv.handoff.Taken(); n != 1 {
				t.Errorf("handed connections: %d, want 1", n)
			}
		})
	}
}

// TestHandoffUncleanNeverReused: a robots.txt response followed by any
// byte, asking to close, of HTTP/1.0 or delimited by the connection's
// end never carries the forwarded request; the client gets the page.
func TestHandoffUncleanNeverReused(t *testing.T) {
	smuggled := "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nsmuggled!"
	for _, tc := range []struct {
		name, robots string
		closeAfter   bool
	}{
		{"trailing response", rawRobots("", smuggled), false},
		{"trailing byte", rawRobots("", "\n"), false},
		{"connection close", rawRobots("Connection: close\r\n", ""), false},
		{"HTTP/1.0", strings.Replace(rawRobots("Connection: keep-alive\r\n", ""), "HTTP/1.1", "HTTP/1.0", 1), false},
		{"close-delimited", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" + handoffRobots, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newConnOrigin(t, tc.robots)
			o.closeAfterRobots = tc.closeAfter
			h := newHarness(t, harnessOpts{})
			for _, p := range []string{"/page", "/private"} {
				resp, body := h.get(t, fmt.Sprintf("http://127.0.0.1:%d%s", o.port(), p))
				want := map[string]int{"/page": 200, "/private": 403}[p]
				if resp.StatusCode != want || want == 200 && body != "page /page" {
					t.Fatalf("%s: got %d %q, want %d", p, resp.StatusCode, body, want)
				}
			}
			got := o.paths()
			if len(got) != 2 || strings.Join(got[0], " ") != "/robots.txt" || strings.Join(got[1], " ") != "/page" {
				t.Fatalf("connections and their requests: %q, want [[/robots.txt] [/page]]", got)
			}
			if n := h.srv.handoff.Taken(); n != 0 {
				t.Errorf("handed connections: %d, want 0", n)
			}
		})
	}
}

// TestHandoffNeverToPolicyFetch: a connection that carried a client's
// request is never used for a robots.txt fetch, also when its
// robots.txt is fetched again while that connection is idle.
func TestHandoffNeverToPolicyFetch(t *testing.T) {
	o := newConnOrigin(t, rawRobots("", ""))
	h := newHarness(t, harnessOpts{})
	u := fmt.Sprintf("http://127.0.0.1:%d", o.port())
	for i := range 3 {
		resp, body := h.get(t, u+"/page")
		if resp.StatusCode != 200 || body != "page /page" {
			t.Fatalf("request %d: got %d %q", i, resp.StatusCode, body)
		}
		h.srv.enf.Purge(context.Background(), u) // the next request fetches robots.txt again
	}
	got := o.paths()
	fetches := 0
	for i, paths := range got {
		for j, p := range paths {
			if p == "/robots.txt" {
				fetches++
				if j > 0 {
					t.Errorf("connection %d: robots.txt fetched after %q", i, paths[:j])
				}
			}
		}
	}
	if fetches != 3 {
		t.Errorf("robots.txt fetched %d times, want 3 (connections: %q)", fetches, got)
	}
}

// TestHandoffClosedParkedConnFallsBack: a parked connection the origin
// closed is not handed: the forwarded request gets a fresh one and the
// client its page.
func TestHandoffClosedParkedConnFallsBack(t *testing.T) {
	o := newConnOrigin(t, rawRobots("", ""))
	h := newHarness(t, harnessOpts{})
	h.srv.handoff.SetParkLifetime(testTimeout) // parked until the test closes it
	u := fmt.Sprintf("http://127.0.0.1:%d", o.port())
	if resp, _ := h.get(t, u+"/private"); resp.StatusCode != 403 { // robots.txt fetched, nothing forwarded
		t.Fatalf("/private: %d, want 403", resp.StatusCode)
	}
	parked := h.srv.handoff.Parked()
	if len(parked) != 1 {
		t.Fatalf("%d connections parked, want 1", len(parked))
	}
	o.mu.Lock()
	o.open[0].Close() // the origin closes the idle connection
	o.mu.Unlock()
	testsupport.WaitFor(t, "the origin's close reaches the parked connection", func() bool { return !upstream.Quiet(parked[0]) })
	resp, body := h.get(t, u+"/page")
	if resp.StatusCode != 200 || body != "page /page" {
		t.Fatalf("/page: got %d %q", resp.StatusCode, body)
	}
	if got := o.paths(); len(got) != 2 || strings.Join(got[1], " ") != "/page" {
		t.Fatalf("connections and their requests: %q, want [[/robots.txt] [/page]]", got)
	}
}

// TestHandoffAfterRedirect: after a redirect of robots.txt within its
// origin, the connection of the last hop carries the forwarded request;
// the first hop's is closed, never reused by the second.
func TestHandoffAfterRedirect(t *testing.T) {
	o := newConnOrigin(t, "HTTP/1.1 301 Moved Permanently\r\nLocation: /robots2.txt\r\nContent-Length: 0\r\n\r\n")
	h := newHarness(t, harnessOpts{})
	resp, body := h.get(t, fmt.Sprintf("http://127.0.0.1:%d/page", o.port()))
	if resp.StatusCode != 200 || body != "page /page" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	got := o.paths()
	if len(got) != 2 || strings.Join(got[0], " ") != "/robots.txt" || strings.Join(got[1], " ") != "/robots2.txt /page" {
		t.Fatalf("connections and their requests: %q, want [[/robots.txt] [/robots2.txt /page]]", got)
	}
}
