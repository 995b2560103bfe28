package upstream

import (
	"net"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// TestHandoffTakeChecksConn: take hands a quiet parked connection once,
// and never one on which the peer sent a byte.
func TestHandoffTakeChecksConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pair := func() (client, server net.Conn) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(); s.Close() })
		return c, s
	}
	lot := NewHandoff()
	k, _ := newHandoffKey("h.test", ln.Addr().String())
	c, _ := pair()
	lot.park(k, c)
	if got := lot.take(k); got != c {
		t.Fatalf("take of a quiet connection: %v, want it", got)
	}
	if got := lot.take(k); got != nil {
		t.Fatalf("second take: %v, want nil", got)
	}
	c, s := pair()
	lot.park(k, c)
	s.Write([]byte("x"))
	testsupport.WaitFor(t, "the byte arrives", func() bool { return !Quiet(c) })
	if got := lot.take(k); got != nil {
		t.Fatalf("take of a connection with a byte waiting: %v, want nil", got)
	}
}
