package proxy

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
)

// sessionOrigins returns an HTTPS origin and a plain-HTTP one (whose
// server accepts request heads far larger than robotsgate's limit, so
// that a 431 can only come from robotsgate), and a configuration that
// allows CONNECT to both, changed by change.
func sessionOrigins(t *testing.T, change func(*config.ClientConfig)) (tlsO, plain *tlsOrigin, cfg config.Config) {
	t.Helper()
	tlsO = newTLSOrigin(t, "User-agent: *\nDisallow: /private\n")
	plain = &tlsOrigin{robots: "User-agent: *\nDisallow: /private\n"}
	plain.Server = httptest.NewUnstartedServer(http.HandlerFunc(plain.serve))
	plain.Config.MaxHeaderBytes = 256 << 20
	plain.Config.ErrorLog = quietLog()
	plain.Start()
	t.Cleanup(plain.Close)
	cfg = mitmConfig(t, tlsO)
	cfg.HTTPS.AllowedPorts = append(cfg.HTTPS.AllowedPorts, plain.port(t))
	if change != nil {
		change(&cfg.Client)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return tlsO, plain, cfg
}

// plainSession opens a CONNECT to target through p and returns the
// connection for plain HTTP inside it, with a deadline of testTimeout.
func plainSession(t *testing.T, p *httpsProxy, target string) (net.Conn, *bufio.Reader) {
	t.Helper()
	resp, c, br := rawConnect(t, p.url.Host, target, "User-Agent: TestBot/1.0")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT %s: %d", target, resp.StatusCode)
	}
	c.SetDeadline(time.Now().Add(testTimeout))
	return c, br
}

// streamHead writes a request head that never ends (one header value of
// total bytes) to w, and returns how many bytes were written before the
// first write error.
func streamHead(w io.Writer, host string, total int) (int, error) {
	n, err := io.WriteString(w, "GET /public HTTP/1.1\r\nHost: "+host+"\r\nUser-Agent: TestBot/1.0\r\nX-Big: ")
	chunk := []byte(strings.Repeat("a", 64<<10))
	for err == nil && n < total {
		var m int
		m, err = w.Write(chunk)
		n += m
	}
	return n, err
}

// TestSessionHeadTooLarge: inside a CONNECT session a request head
// larger than client.max_header_bytes is cut as in plain HTTP: in an MITM
// (TLS) session the connection is closed before the client could write
// a 64 MiB head, instead of robotsgate buffering all of it; plain HTTP
// inside a CONNECT is answered 431 and never reaches the origin (whose
// own server would have accepted the head). Before the fix the whole
// head was read into memory and forwarded.
func TestSessionHeadTooLarge(t *testing.T) {
	tlsO, plain, cfg := sessionOrigins(t, nil)
	p := startHTTPSProxy(t, cfg)

	t.Run("mitm", func(t *testing.T) {
		target := strings.TrimPrefix(tlsO.URL, "https://")
		c := mitmConn(t, p, target)
		const total = 64 << 20
		n, err := streamHead(c, target, total)
		if err == nil {
			t.Fatalf("the proxy read a %d-byte request head (limit %d) without closing the session", n, cfg.Client.MaxHeaderBytes)
		}
		if n > 8<<20 {
			t.Fatalf("the proxy read %d bytes of one request head before closing (limit %d)", n, cfg.Client.MaxHeaderBytes)
		}
		if b, err := io.ReadAll(c); len(b) != 0 && !strings.HasPrefix(string(b), "HTTP/1.1 431") {
			t.Fatalf("answer to an oversized head: %q %v", b, err)
		}
	})
	t.Run("plain in CONNECT", func(t *testing.T) {
		target := plain.Listener.Addr().String()
		c, br := plainSession(t, p, target)
		go func() {
			streamHead(c, target, 2<<20)
			io.WriteString(c, "\r\n\r\n")
		}()
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("oversized head: %v, want a 431 answer", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("oversized head: %s, want 431", resp.Status)
		}
		if n := plain.hit("/public"); n != 0 {
			t.Fatalf("the oversized request reached the origin %d times", n)
		}
	})
	t.Run("second request", func(t *testing.T) { // sent right behind the first: bounded alike
		target := plain.Listener.Addr().String()
		c, br := plainSession(t, p, target)
		go func() {
			io.WriteString(c, "GET /first HTTP/1.1\r\nHost: "+target+"\r\nUser-Agent: TestBot/1.0\r\n\r\n")
			streamHead(c, target, 2<<20)
			io.WriteString(c, "\r\n\r\n")
		}()
		for _, want := range []int{http.StatusOK, http.StatusRequestHeaderFieldsTooLarge} {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("want %d: %v", want, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Fatalf("%s, want %d", resp.Status, want)
			}
		}
	})
}

// TestSessionHeadDeadline: inside a CONNECT session a request head that
// trickles in, a header line at a time, and never ends is cut at
// client.header_timeout, as in plain HTTP; the bytes it trickles do not
// keep the session alive (client.idle_timeout is an hour here). The
// client trickles until the proxy closes the connection; the test's own
// bound is testTimeout. Before the fix every byte pushed the session's
// deadline back by the idle timeout.
func TestSessionHeadDeadline(t *testing.T) {
	tlsO, plain, cfg := sessionOrigins(t, func(c *config.ClientConfig) {
		c.HeaderTimeout, c.IdleTimeout = time.Second, time.Hour
	})
	p := startHTTPSProxy(t, cfg)

	trickle := func(t *testing.T, c net.Conn, r io.Reader, host string) {
		t.Helper()
		io.WriteString(c, "GET /public HTTP/1.1\r\nHost: "+host+"\r\n")
		closed := make(chan error, 1)
		go func() {
			_, err := io.ReadAll(r) // nil once the proxy closes the session
			closed <- err
		}()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case err := <-closed: // EOF, or a reset: the proxy closed with trickled bytes unread
				if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
					t.Fatalf("the slow request head was not cut by the proxy: %v", err)
				}
				return
			case <-tick.C:
				io.WriteString(c, "X-Slow: 1\r\n") // errors once closed: closed says why
			}
		}
	}
	t.Run("mitm", func(t *testing.T) {
		target := strings.TrimPrefix(tlsO.URL, "https://")
		c := mitmConn(t, p, target)
		if err := c.Handshake(); err != nil {
			t.Fatal(err)
		}
		trickle(t, c, c, target)
	})
	t.Run("plain in CONNECT", func(t *testing.T) {
		target := plain.Listener.Addr().String()
		c, br := plainSession(t, p, target)
		trickle(t, c, br, target)
	})
	if plain.hit("/public")+tlsO.hit("/public") != 0 {
		t.Fatal("a request whose head never ended reached the origin")
	}
}

// coalescingConn sends its first Write together with the second, as one
// write: the client's CONNECT and its next bytes in one packet. Its
// reads skip the CONNECT's 200 answer, which readConnect checks.
type coalescingConn struct {
	net.Conn
	held []byte
	br   *bufio.Reader
	resp chan *http.Response
}

func (c *coalescingConn) Write(p []byte) (int, error) {
	if c.held == nil {
		c.held = append([]byte{}, p...)
		return len(p), nil
	}
	if len(c.held) > 0 {
		b := append(c.held, p...)
		c.held = c.held[:0]
		if _, err := c.Conn.Write(b); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

func (c *coalescingConn) Read(p []byte) (int, error) {
	if c.br == nil {
		c.br = bufio.NewReader(c.Conn)
		resp, err := http.ReadResponse(c.br, &http.Request{Method: http.MethodConnect})
		if err != nil {
			return 0, err
		}
		c.resp <- resp
	}
	return c.br.Read(p)
}

// TestConnectSamePacket: what a client sends in the same packet as its
// CONNECT (a TLS ClientHello, or plain HTTP) is served, not lost: the
// session answers at once, and an opaque tunnel (tunnel mode) passes
// them on, rather than waiting for bytes that already came (client.header_timeout is an hour here: a lost ClientHello or
// request would hold the session until the test's bound). Before the fix
// net/http's buffered copy of those bytes was dropped at the hijack.
func TestConnectSamePacket(t *testing.T) {
	tlsO, plain, cfg := sessionOrigins(t, func(c *config.ClientConfig) { c.HeaderTimeout = time.Hour })
	p := startHTTPSProxy(t, cfg)
	tunnelCfg := cfg
	tunnelCfg.HTTPS.Mode = config.HTTPSModeTunnel
	tunnel := startHTTPSProxy(t, tunnelCfg)
	connect := func(p *httpsProxy, target string) *coalescingConn {
		raw, err := net.DialTimeout("tcp", p.url.Host, testTimeout)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { raw.Close() })
		raw.SetDeadline(time.Now().Add(testTimeout))
		c := &coalescingConn{Conn: raw, resp: make(chan *http.Response, 1)}
		io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\nUser-Agent: TestBot/1.0\r\n\r\n")
		return c
	}
	get := func(t *testing.T, c io.ReadWriter, target string) {
		t.Helper()
		if _, err := io.WriteString(c, "GET /public HTTP/1.1\r\nHost: "+target+"\r\nUser-Agent: TestBot/1.0\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("request sent with the CONNECT: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != "hello from /public" {
			t.Fatalf("request sent with the CONNECT: %s %q", resp.Status, b)
		}
	}

	t.Run("mitm", func(t *testing.T) {
		target := strings.TrimPrefix(tlsO.URL, "https://")
		c := connect(p, target)
		tc := tls.Client(c, &tls.Config{RootCAs: p.ca, ServerName: "127.0.0.1"})
		if err := tc.Handshake(); err != nil { // the ClientHello goes with the CONNECT
			t.Fatalf("TLS handshake sent with the CONNECT: %v", err)
		}
		if resp := <-c.resp; resp.StatusCode != http.StatusOK {
			t.Fatalf("CONNECT: %s", resp.Status)
		}
		get(t, tc, target)
	})
	t.Run("tunnel", func(t *testing.T) { // the origin's own TLS, through an opaque tunnel
		target := strings.TrimPrefix(tlsO.URL, "https://")
		c := connect(tunnel, target)
		roots := x509.NewCertPool()
		roots.AddCert(tlsO.Certificate())
		tc := tls.Client(c, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
		if err := tc.Handshake(); err != nil {
			t.Fatalf("TLS handshake sent with the CONNECT: %v", err)
		}
		if resp := <-c.resp; resp.StatusCode != http.StatusOK {
			t.Fatalf("CONNECT: %s", resp.Status)
		}
		get(t, tc, target)
	})
	t.Run("plain in CONNECT", func(t *testing.T) {
		target := plain.Listener.Addr().String()
		c := connect(p, target)
		get(t, c, target) // the request goes with the CONNECT
		if resp := <-c.resp; resp.StatusCode != http.StatusOK {
			t.Fatalf("CONNECT: %s", resp.Status)
		}
	})
}

// TestSessionLimitsAfterHead: the head's limits apply to heads only: a
// request body larger than client.max_header_bytes, sent slowly for
// longer than client.header_timeout, goes through inside an MITM session,
// and a second request on the same session has a head deadline of its
// own.
func TestSessionLimitsAfterHead(t *testing.T) {
	echo := newBodyOrigin(t, true)
	cfg := mitmConfig(t, echo)
	// A short head deadline keeps the test short: the body's pauses add
	// up to twice it, which must not matter once the head is read.
	cfg.Client.HeaderTimeout, cfg.Client.MaxHeaderBytes = 250*time.Millisecond, 4<<10
	p := startHTTPSProxy(t, cfg)
	target := strings.TrimPrefix(echo.URL, "https://")
	c := mitmConn(t, p, target)
	br := bufio.NewReader(c)
	const size = 2 << 20
	for i := range 2 {
		io.WriteString(c, "POST /upload HTTP/1.1\r\nHost: "+target+"\r\nContent-Length: "+strconv.Itoa(size)+"\r\n\r\n")
		chunk := strings.Repeat("b", size/8)
		for range 8 {
			if _, err := io.WriteString(c, chunk); err != nil {
				t.Fatalf("request %d: body cut: %v", i, err)
			}
			time.Sleep(cfg.Client.HeaderTimeout / 4) // the body takes twice the head's deadline
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "got "+strconv.Itoa(size) {
			t.Fatalf("request %d: %s %q", i, resp.Status, b)
		}
	}
}

// newBodyOrigin starts an origin (HTTPS when tls) that reads every
// request body to its end and answers how many bytes it got.
func newBodyOrigin(t *testing.T, tls bool) *tlsOrigin {
	t.Helper()
	o := &tlsOrigin{}
	o.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		n, _ := io.Copy(io.Discard, r.Body)
		io.WriteString(w, "got "+strconv.FormatInt(n, 10))
	}))
	o.Config.ErrorLog = quietLog()
	if tls {
		o.StartTLS()
	} else {
		o.Start()
	}
	t.Cleanup(o.Close)
	return o
}

// TestRequestBodySilenceBounded: a request body that stops arriving is
// cut after client.idle_timeout of silence, in plain HTTP as inside an
// MITM session: the client's connection is closed, the proxy does not
// wait for the rest forever. The client sends 10 of 100 announced bytes
// and then nothing; the test's own bound is testTimeout. Before the fix
// plain HTTP waited for the rest of the body without any bound.
func TestRequestBodySilenceBounded(t *testing.T) {
	tlsO, plain := newBodyOrigin(t, true), newBodyOrigin(t, false)
	cfg := mitmConfig(t, tlsO)
	cfg.Client.IdleTimeout = 300 * time.Millisecond
	p := startHTTPSProxy(t, cfg)
	head := func(target, host string) string {
		return "POST " + target + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: TestBot/1.0\r\nContent-Length: 100\r\n\r\n0123456789"
	}
	cut := func(t *testing.T, c io.ReadWriter) {
		t.Helper()
		b, err := io.ReadAll(c) // EOF, or a reset: closed by the proxy
		if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("a request body that stopped arriving was not cut: %v (got %q)", err, b)
		}
		if len(b) > 0 && !strings.HasPrefix(string(b), "HTTP/1.1 5") && !strings.HasPrefix(string(b), "HTTP/1.1 4") {
			t.Fatalf("answer to a body cut short: %q", b)
		}
	}
	t.Run("plain HTTP", func(t *testing.T) {
		c, err := net.DialTimeout("tcp", p.url.Host, testTimeout)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(testTimeout))
		host := plain.Listener.Addr().String()
		io.WriteString(c, head("http://"+host+"/upload", host))
		cut(t, c)
	})
	t.Run("mitm", func(t *testing.T) {
		target := strings.TrimPrefix(tlsO.URL, "https://")
		c := mitmConn(t, p, target)
		io.WriteString(c, head("/upload", target))
		cut(t, c)
	})
}

// TestRequestBodyBoundEndsWithBody: the silence bound of a request body
// ends with the body: a plain-HTTP POST whose response streams for longer
// than client.idle_timeout (while the client, as clients do, sends
// nothing more) gets its whole response.
func TestRequestBodyBoundEndsWithBody(t *testing.T) {
	o := &tlsOrigin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		io.Copy(io.Discard, r.Body)
		for i := range 4 {
			io.WriteString(w, "part"+strconv.Itoa(i))
			w.(http.Flusher).Flush()
			time.Sleep(150 * time.Millisecond) // four of them: twice the idle timeout
		}
	}))
	t.Cleanup(o.Close)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.Client.IdleTimeout = 300 * time.Millisecond }})
	req, _ := http.NewRequest(http.MethodPost, o.URL+"/upload", strings.NewReader("some body"))
	req.Header.Set("User-Agent", "TestBot/1.0")
	resp, body := do(t, h.client, req)
	if resp.StatusCode != 200 || body != "part0part1part2part3" {
		t.Fatalf("POST with a long response: %s %q", resp.Status, body)
	}
}
