package conns

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// recordConn is a net.Conn whose writes are recorded, one string each.
type recordConn struct {
	net.Conn // nil: only Write, Read, Close and SetReadDeadline are used
	mu       sync.Mutex
	writes   []string
	closed   bool
}

func (c *recordConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

func (c *recordConn) Read([]byte) (int, error) { return 0, io.EOF }
func (c *recordConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

func (c *recordConn) sent() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.writes, "")
}

// TestHeldWriteGoesWithTheNext: after holdNext the connection sends
// nothing of the next write (a response head) until the write after it,
// which carries both in order; a read, or Close, sends a held write
// first. The caller's buffer may change once Write returned.
func TestHeldWriteGoesWithTheNext(t *testing.T) {
	rc := &recordConn{}
	c := &hijackedConn{Conn: rc, t: NewHijackTracker(Limits{})}
	c.t.add(c)

	c.holdNext()
	head := []byte("HEAD")
	if n, err := c.Write(head); n != 4 || err != nil {
		t.Fatalf("held write: %d, %v", n, err)
	}
	copy(head, "XXXX") // crypto/tls reuses its buffer
	if got := rc.sent(); got != "" {
		t.Fatalf("sent %q before the body", got)
	}
	if n, err := c.Write([]byte("body")); n != 4 || err != nil {
		t.Fatalf("body write: %d, %v", n, err)
	}
	if got := rc.sent(); got != "HEADbody" {
		t.Fatalf("sent %q, want HEADbody", got)
	}
	if n, err := c.Write([]byte("-more")); n != 5 || err != nil || rc.sent() != "HEADbody-more" {
		t.Fatalf("unheld write: %d, %v, sent %q", n, err, rc.sent())
	}

	// A read sends the held write before it reads.
	c.holdNext()
	c.Write([]byte("|head2"))
	if _, err := c.Read(make([]byte, 8)); err != io.EOF {
		t.Fatalf("read: %v", err)
	}
	if got := rc.sent(); got != "HEADbody-more|head2" {
		t.Fatalf("after a read, sent %q", got)
	}

	// Close sends it before closing.
	c.holdNext()
	c.Write([]byte("|head3"))
	c.Close()
	if got := rc.sent(); got != "HEADbody-more|head2|head3" || !rc.closed {
		t.Fatalf("after Close, sent %q (closed %v)", got, rc.closed)
	}
}
