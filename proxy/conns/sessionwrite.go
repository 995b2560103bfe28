package conns

import "net"

// Response writes inside an MITM session. goproxy's MITM loop writes a
// response with [http.Response.Write] through a writer that sends the
// head as soon as it is complete, then the body: two TLS records, and
// two writes to the client's connection, for every response. The session's
// connection ([hijackedConn]) instead holds the head's record back and
// sends it together with the body's first record, in one write (writev),
// as robotsgate's plain-HTTP path sends a response's header with the start
// of its body. The client's bytes are the same; the head
// leaves when the body's first bytes do.
//
// A held write never waits for the client: reading from the connection,
// receiving the next request, or closing the connection sends it first.

// heldWrite is the write a [hijackedConn] holds back: the head of a
// response, sent with the next write.
type heldWrite struct {
	hold bool        // hold the next write
	buf  []byte      // the write held, or empty
	vec  [2][]byte   // the held write and the next, for one writev
	bufs net.Buffers // over vec
}

// heldBufKeep bounds the buffer a connection keeps for held writes
// between responses; a larger head's buffer is dropped once sent.
const heldBufKeep = 4 << 10

// holdNext makes the connection hold its next write back until the one
// after it, or until a read or Close.
func (c *hijackedConn) holdNext() {
	c.wmu.Lock()
	c.w.hold = true
	c.wmu.Unlock()
}

// write writes p to the connection: held back when holdNext asked for it,
// or together with a write held back.
func (c *hijackedConn) write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.w.hold && len(p) > 0 {
		c.w.hold = false
		c.w.buf = append(c.w.buf[:0], p...) // the caller (crypto/tls) reuses p
		c.holding.Store(true)
		return len(p), nil
	}
	if !c.holding.Load() {
		return c.Conn.Write(p)
	}
	held := len(c.w.buf)
	c.w.vec[0], c.w.vec[1] = c.w.buf, p
	c.w.bufs = c.w.vec[:]
	n, err := c.w.bufs.WriteTo(c.Conn) // one writev on a TCP connection
	c.releaseHeld()
	if int(n) < held {
		return 0, err
	}
	return int(n) - held, err
}

// nextResponse sends a write held back, if any, and forgets a hold that
// saw no write: a new request is about to be served.
func (c *hijackedConn) nextResponse() {
	_ = c.flushHeld()
	c.wmu.Lock()
	c.w.hold = false
	c.wmu.Unlock()
}

// flushHeld sends a write held back, if any.
func (c *hijackedConn) flushHeld() error {
	if !c.holding.Load() {
		return nil
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.w.hold = false
	if !c.holding.Load() {
		return nil
	}
	_, err := c.Conn.Write(c.w.buf)
	c.releaseHeld()
	return err
}

// releaseHeld forgets the write held back once sent (or failed). Called
// with c.wmu held.
func (c *hijackedConn) releaseHeld() {
	c.holding.Store(false)
	c.w.vec, c.w.bufs = [2][]byte{}, nil
	if cap(c.w.buf) > heldBufKeep {
		c.w.buf = nil
	}
	c.w.buf = c.w.buf[:0]
}
