package upstream

import (
	"io"
	"net"
	"time"
)

// The bytes of an open tunnel: its first bytes checked, then the client
// and the CONNECT target spliced (CheckAndSplice, splice), or a refused
// tunnel's client connection closed without a reset (LingerClose).

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

// CheckAndSplice reads the client's first bytes inside the tunnel to
// target (host:port as enforce keys it) within wait ([readTunnelHello]),
// and splices client and up when they are a TLS ClientHello for target's
// host, the tunnel then bounded by idle of silence. Otherwise it closes
// up, has refuse answer the client when it sent anything (one that sent
// nothing, or left, is not refused: nothing went through), and closes
// client.
func CheckAndSplice(client, up net.Conn, target string, wait, idle time.Duration, refuse func(HelloCheck)) {
	hc := readTunnelHello(client, target, wait, idle)
	if hc.Refused != HelloOK {
		_ = up.Close()
		if len(hc.First) > 0 {
			refuse(hc)
		}
		_ = client.Close()
		return
	}
	if _, err := up.Write(hc.First); err != nil {
		_ = up.Close()
		_ = client.Close()
		return
	}
	splice(client, up)
}

// splice copies bytes both ways between a and b until both directions
// ended, then closes both. A direction that ends cleanly is half-closed
// where the connections allow it; one that fails closes both, which ends
// the other direction too.
func splice(a, b net.Conn) {
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
