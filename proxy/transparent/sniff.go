package transparent

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// Bounds of sniffing: how much of a ClientHello is read (a ClientHello
// with post-quantum key shares fills a few KiB), how long a method token
// may be, how many bytes of an unknown protocol the audit quotes.
const (
	maxHello  = 64 << 10
	maxMethod = 24
	maxQuote  = 16
)

// errHelloRead stops the TLS handshake Sniff starts once the ClientHello
// has been read.
var errHelloRead = errors.New("client hello read")

// Sniff reads the first bytes of c, the redirected connection to dst,
// within timeout, and returns c wrapped so that they are read again: an
// HTTP/1.x request line (a method token and a space; HTTP/2's "PRI"
// preface excluded), a TLS ClientHello with its server name, or another
// kind. It fails only when c cannot be read (closed, silent until
// timeout).
func Sniff(c net.Conn, dst netip.AddrPort, timeout time.Duration) (*Conn, error) {
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	defer c.SetReadDeadline(time.Time{})
	rec := &recorder{Conn: c}
	buf := make([]byte, 1)
	if _, err := rec.Read(buf); err != nil {
		return nil, fmt.Errorf("no bytes from the client: %w", err)
	}
	out := &Conn{Conn: c, Dst: dst}
	if rec.buf[0] == 0x16 { // TLS handshake record
		out.Kind, out.SNI, out.Why = sniffTLS(rec)
	} else {
		out.Kind, out.Why = sniffHTTP(rec)
	}
	out.head = rec.buf
	return out, nil
}

// sniffHTTP reads the method token of an HTTP/1.x request line.
func sniffHTTP(rec *recorder) (Kind, string) {
	buf := make([]byte, 64)
	for {
		i := bytes.IndexByte(rec.buf, ' ')
		if i < 0 && len(rec.buf) > maxMethod {
			i = len(rec.buf)
		}
		if i >= 0 {
			method := rec.buf[:i]
			switch {
			case i == len(rec.buf) || i == 0 || !isToken(method):
				return KindOther, "not HTTP/1.x or TLS: first bytes " + quote(rec.buf)
			case string(method) == "PRI":
				return KindOther, "HTTP/2 with prior knowledge (not supported on redirected connections)"
			}
			return KindHTTP, ""
		}
		if !isToken(rec.buf) {
			return KindOther, "not HTTP/1.x or TLS: first bytes " + quote(rec.buf)
		}
		if _, err := rec.Read(buf); err != nil {
			return KindOther, "not HTTP/1.x or TLS: first bytes " + quote(rec.buf) + " then " + err.Error()
		}
	}
}

// isToken reports whether b is made of upper-case letters only, the
// method tokens HTTP clients send.
func isToken(b []byte) bool {
	for _, c := range b {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// quote is the first [maxQuote] bytes of b, quoted.
func quote(b []byte) string {
	if len(b) > maxQuote {
		b = b[:maxQuote]
	}
	return strconv.QuoteToASCII(string(b))
}

// sniffTLS reads the ClientHello with crypto/tls itself ([readHello]),
// which stops after parsing it: every byte it read stays in rec for the
// real handshake, and nothing is written to the client.
func sniffTLS(rec *recorder) (Kind, string, string) {
	rec.rewind()
	h, err := readHello(rec)
	if err != nil {
		return KindOther, "", "a TLS record that is not a readable ClientHello: " + err.Error()
	}
	return KindTLS, h.ServerName, ""
}

// recorder is the connection as Sniff reads it: every byte read is kept
// (up to [maxHello]) and can be read again from the start (rewind), and
// writes (a TLS alert) are dropped.
type recorder struct {
	net.Conn
	buf []byte
	pos int // bytes of buf read since the last rewind
}

// rewind makes the next reads return buf again before reading on.
func (r *recorder) rewind() { r.pos = 0 }

func (r *recorder) Read(p []byte) (int, error) {
	if r.pos < len(r.buf) {
		n := copy(p, r.buf[r.pos:])
		r.pos += n
		return n, nil
	}
	if len(r.buf) >= maxHello {
		return 0, fmt.Errorf("more than %d bytes without a complete ClientHello", maxHello)
	}
	if room := maxHello - len(r.buf); len(p) > room {
		p = p[:room]
	}
	n, err := r.Conn.Read(p)
	r.buf = append(r.buf, p[:n]...)
	r.pos = len(r.buf)
	return n, err
}

func (r *recorder) Write(p []byte) (int, error) { return len(p), nil }
