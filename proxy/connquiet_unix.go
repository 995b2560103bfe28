//go:build linux || darwin || freebsd || netbsd || openbsd

package proxy

import (
	"errors"
	"net"
	"syscall"
)

// canHandOff says whether this platform can tell that a connection is
// quiet ([connQuiet]); without it no connection is handed off.
const canHandOff = true

// connQuiet reports whether nothing is waiting to be read on c's socket
// and its peer has not closed it, without reading or waiting: a peek at
// the socket, which must answer "nothing yet".
func connQuiet(c net.Conn) bool {
	sc, ok := rawConn(c).(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var buf [1]byte
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		// Go's sockets are non-blocking: an empty socket answers EAGAIN.
		_, _, rerr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // never wait for the socket to become readable
	})
	return err == nil && (errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK))
}
