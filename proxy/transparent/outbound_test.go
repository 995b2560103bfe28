package transparent

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestOutbound: an open outbound connection's local address is known
// from the moment the dialer returns it until it is closed.
func TestOutbound(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var o Outbound
	dial := o.Dialer((&net.Dialer{}).DialContext)
	c, err := dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	remote := netip.MustParseAddrPort(peer.RemoteAddr().String())
	dst := netip.MustParseAddrPort(ln.Addr().String())
	if !o.Has(remote, dst) {
		t.Fatalf("%v → %v: not recorded", remote, dst)
	}
	// The kernel gives one local port to connections to different
	// destinations: another client with that port is not a loop.
	other := netip.AddrPortFrom(dst.Addr(), dst.Port()+1)
	if o.Has(remote, other) || o.Has(dst, remote) {
		t.Fatal("a connection with one matching address is taken for robotsgate's own")
	}
	if _, ok := c.(interface{ CloseWrite() error }); !ok {
		t.Error("the half-close methods of a TCP connection are hidden")
	}
	c.Close()
	if o.Has(remote, dst) {
		t.Fatal("still recorded after Close")
	}
}

// TestQueue: pushed connections are accepted; after Close, Accept and
// Push fail and the listener is closed.
func TestQueue(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	q := NewQueue(ln)
	a, b := net.Pipe()
	defer b.Close()
	go q.Push(a)
	if c, err := q.Accept(); err != nil || c != a {
		t.Fatalf("accept: %v, %v", c, err)
	}
	q.Close()
	if _, err := q.Accept(); err == nil {
		t.Fatal("accept after close")
	}
	if q.Push(a) {
		t.Fatal("push after close")
	}
	if _, err := ln.Accept(); err == nil {
		t.Fatal("the listener is still open")
	}
}

// TestOriginalDstNotRedirected: a connection that was not redirected
// has no original destination other than its own address.
func TestOriginalDstNotRedirected(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			time.AfterFunc(time.Second, func() { c.Close() })
		}
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dst, err := OriginalDst(c)
	if err == nil && dst.String() != c.LocalAddr().String() {
		t.Fatalf("original destination %v of a direct connection to %v", dst, c.LocalAddr())
	}
}
