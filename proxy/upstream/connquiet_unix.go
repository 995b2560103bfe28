//go:build linux || darwin || freebsd || netbsd || openbsd

package upstream

import (
	"errors"
	"net"
	"sync"
	"syscall"
)

// CanHandOff says whether this platform can tell that a connection is
// quiet ([Quiet]); without it no connection is handed off.
const CanHandOff = true

// Quiet reports whether nothing is waiting to be read on c's socket
// and its peer has not closed it, without reading or waiting: a peek at
// the socket, which must answer "nothing yet".
func Quiet(c net.Conn) bool {
	sc, ok := rawConn(c).(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	p := peeks.Get().(*peek)
	err = rc.Read(p.fn)
	rerr := p.err
	p.err = nil
	peeks.Put(p) // rc.Read has returned: p.fn no longer runs
	return err == nil && (errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK))
}

// peek is the socket peek of [Quiet] with its buffer and result, its
// function bound once so that a peek allocates nothing.
type peek struct {
	buf [1]byte
	err error
	fn  func(fd uintptr) bool
}

var peeks = sync.Pool{New: func() any {
	p := new(peek)
	p.fn = p.read
	return p
}}

func (p *peek) read(fd uintptr) bool {
	// Go's sockets are non-blocking: an empty socket answers EAGAIN.
	_, _, p.err = syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return true // never wait for the socket to become readable
}
