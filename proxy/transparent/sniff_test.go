package transparent

import (
	"crypto/tls"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// sniffBytes sends first on a loopback connection (then closes it unless
// keepOpen) and sniffs the server side.
func sniffBytes(t *testing.T, send func(c net.Conn)) (*Conn, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return
		}
		send(c)
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return Sniff(c, netip.MustParseAddrPort("127.0.0.1:80"), 5*time.Second)
}

func TestSniffHTTP(t *testing.T) {
	for _, first := range []string{"GET / HTTP/1.1\r\nHost: a\r\n\r\n", "OPTIONS * HTTP/1.1\r\n\r\n", "DELETE /x HTTP/1.0\r\n\r\n"} {
		tc, err := sniffBytes(t, func(c net.Conn) { io.WriteString(c, first); c.Close() })
		if err != nil || tc.Kind != KindHTTP {
			t.Fatalf("%q: kind %v, %v", first, tc.Kind, err)
		}
		// the sniffed bytes are read again, then the rest
		b, _ := io.ReadAll(tc)
		if string(b) != first {
			t.Errorf("replayed %q, want %q", b, first)
		}
	}
}

func TestSniffOther(t *testing.T) {
	for first, want := range map[string]string{
		"SSH-2.0-OpenSSH_9.6\r\n":          "first bytes",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n": "HTTP/2",
		"get / HTTP/1.1\r\n\r\n":           "first bytes",
		" GET / HTTP/1.1\r\n":              "first bytes",
		strings.Repeat("A", 100):           "first bytes",
		"\x16\x03\x01\x00\x05hello":        "not a readable ClientHello",
		"\x00\x01\x02":                     "first bytes",
		"GET":                              "first bytes", // closed before a space
	} {
		tc, err := sniffBytes(t, func(c net.Conn) { io.WriteString(c, first); c.Close() })
		if err != nil {
			t.Fatalf("%q: %v", first, err)
		}
		if tc.Kind != KindOther || !strings.Contains(tc.Why, want) {
			t.Errorf("%q: kind %v, why %q; want other, %q", first, tc.Kind, tc.Why, want)
		}
	}
}

func TestSniffSilentClient(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	c0, _ := net.Dial("tcp", ln.Addr().String())
	defer c0.Close()
	c, _ := ln.Accept()
	defer c.Close()
	if _, err := Sniff(c, netip.AddrPort{}, 50*time.Millisecond); err == nil {
		t.Fatal("a client that sends nothing was classified")
	}
}

// TestSniffTLS: the server name of a real ClientHello, and every byte of
// it replayed so that a real handshake completes afterwards.
func TestSniffTLS(t *testing.T) {
	for _, name := range []string{"origin.test", ""} {
		done := make(chan error, 1)
		tc, err := sniffBytes(t, func(c net.Conn) {
			cfg := &tls.Config{ServerName: name, InsecureSkipVerify: true}
			if name == "" {
				cfg.ServerName = "127.0.0.1" // IP literals are not sent as SNI
			}
			done <- tls.Client(c, cfg).Handshake()
		})
		if err != nil || tc.Kind != KindTLS || tc.SNI != name {
			t.Fatalf("SNI %q: kind %v, sni %q, %v", name, tc.Kind, tc.SNI, err)
		}
		srv := tls.Server(tc, &tls.Config{Certificates: []tls.Certificate{testsupport.SelfSigned(t, "origin.test")}})
		if err := srv.Handshake(); err != nil {
			t.Fatalf("handshake after sniffing: %v", err)
		}
		if err := <-done; err != nil {
			t.Fatalf("client handshake: %v", err)
		}
	}
}

// TestDiscardUntilRead: writes vanish until the first read.
func TestDiscardUntilRead(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := &Conn{Conn: a, head: []byte("x")}
	c.DiscardUntilRead()
	if n, err := c.Write([]byte("HTTP/1.1 200 OK\r\n\r\n")); n != 19 || err != nil {
		t.Fatalf("write: %d, %v", n, err)
	}
	p := make([]byte, 1)
	if _, err := c.Read(p); err != nil || p[0] != 'x' {
		t.Fatalf("read %q, %v", p, err)
	}
	go c.Write([]byte("y"))
	if _, err := b.Read(p); err != nil || p[0] != 'y' {
		t.Fatalf("after the first read, the peer got %q, %v", p, err)
	}
}
