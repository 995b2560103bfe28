// Package transparent is the machinery of robotsgate's transparent
// listener, which serves TCP connections that the kernel redirected to it
// (iptables/nftables REDIRECT) from clients that know nothing of a proxy:
// the original destination of a connection ([OriginalDst]), what its
// first bytes are ([Sniff]: an HTTP/1.x request, a TLS ClientHello and
// its server name, or anything else), the queue that hands HTTP
// connections to an [http.Server] ([Queue]), the accept loop ([Serve]), and
// the record of robotsgate's own outbound connections that recognises a
// redirect loop ([Outbound]). Deciding what to do with a connection is
// the proxy's job.
package transparent

import (
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
)

// ErrNoOriginalDst is the error of a connection without an original
// destination: it was not redirected, or connection tracking is off.
var ErrNoOriginalDst = errors.New("no original destination (the connection was not redirected)")

// Kind is what the first bytes of a connection are.
type Kind int

// The kinds of connections Sniff tells apart.
const (
	KindOther Kind = iota // neither of the below: closed by the proxy
	KindHTTP              // an HTTP/1.x request line
	KindTLS               // a TLS ClientHello
)

// Conn is an accepted connection whose first bytes were read to classify
// it: reads return those bytes first, then the rest of the stream.
type Conn struct {
	net.Conn
	// Dst is the connection's original destination.
	Dst netip.AddrPort
	// Kind is what its first bytes are; SNI is, for [KindTLS], the server
	// name of the ClientHello ("" when it had none); Why says, for
	// [KindOther], what was seen instead.
	Kind Kind
	SNI  string
	Why  string

	head    []byte      // bytes read while sniffing, not yet replayed
	discard atomic.Bool // writes are dropped until the first Read
}

// Read returns the sniffed bytes first, then reads from the connection.
// It ends DiscardUntilRead.
func (c *Conn) Read(p []byte) (int, error) {
	c.discard.Store(false)
	if len(c.head) > 0 {
		n := copy(p, c.head)
		c.head = c.head[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// Write writes to the connection, or drops p while DiscardUntilRead is in
// effect.
func (c *Conn) Write(p []byte) (int, error) {
	if c.discard.Load() {
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// DiscardUntilRead makes writes vanish until the connection is first
// read. A redirected TLS connection is served as if its client had sent a
// CONNECT: the answer to that CONNECT (written before the ClientHello is
// read, whether it accepts or refuses) must not reach a client that never
// sent one.
func (c *Conn) DiscardUntilRead() { c.discard.Store(true) }

// CloseWrite shuts down the writing side of a TCP connection.
func (c *Conn) CloseWrite() error {
	if hc, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return hc.CloseWrite()
	}
	return c.Conn.Close()
}

// CloseRead shuts down the reading side of a TCP connection.
func (c *Conn) CloseRead() error {
	if hc, ok := c.Conn.(interface{ CloseRead() error }); ok {
		return hc.CloseRead()
	}
	return c.Conn.Close()
}
