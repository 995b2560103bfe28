package upstream

import (
	"io"
	"net"
	"time"
)

// The bytes of an open tunnel: the client and the CONNECT target spliced
// (Splice), or a refused tunnel's client connection closed without a
// reset (LingerClose).

// lingerMax bounds what [LingerClose] reads and discards.
const lingerMax = 64 << 10

// LingerClose ends the writing side of c and discards what the client
// still sends (at most [lingerMax] bytes, for at most wait) before the
// caller closes it: closing a socket with unread bytes resets the
// connection, which could discard the answer before the client read it.
func LingerClose(c net.Conn, wait time.Duration) {
	hc, ok := c.(halfCloser)
	if !ok {
		return
	}
	_ = hc.CloseWrite()
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, _ = io.Copy(io.Discard, io.LimitReader(c, lingerMax))
}

// Splice copies bytes both ways between a and b until both directions
// ended, then closes both. A direction that ends cleanly is half-closed
// where the connections allow it; one that fails closes both, which ends
// the other direction too.
func Splice(a, b net.Conn) {
	done := make(chan struct{})
	go func() {
		pipe(a, b)
		close(done)
	}()
	pipe(b, a)
	<-done
	_ = a.Close()
	_ = b.Close()
}

// pipe copies src to dst, then closes dst's writing side and src's
// reading side; dst when they cannot be half-closed, and both when the
// copy failed.
func pipe(dst, src net.Conn) {
	_, err := io.Copy(dst, src)
	dh, dok := dst.(halfCloser)
	sh, sok := src.(halfCloser)
	switch {
	case err != nil:
		_ = dst.Close()
		_ = src.Close()
		return
	case !dok || !sok:
		_ = dst.Close()
		return
	}
	_ = dh.CloseWrite()
	_ = sh.CloseRead()
}

type halfCloser interface {
	CloseRead() error
	CloseWrite() error
}
