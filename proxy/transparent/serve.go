package transparent

import (
	"errors"
	"net"
	"sync"
	"time"
)

// maxAcceptBackoff bounds the pause after a failed Accept (out of file
// descriptors, ...).
const maxAcceptBackoff = time.Second

// Serve accepts connections on ln and runs handle for each in its own
// goroutine, until ln is closed (then it returns nil). A failed Accept
// is retried after a pause that doubles up to [maxAcceptBackoff].
func Serve(ln net.Listener, handle func(net.Conn)) error {
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return nil
		}
		if err != nil {
			backoff = min(max(2*backoff, 5*time.Millisecond), maxAcceptBackoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		go handle(c)
	}
}

// Queue is a [net.Listener] whose connections are pushed by a caller, so
// that an [http.Server] serves the connections the transparent listener
// found to be HTTP. It stands for the listener the connections came
// from: closing it ([http.Server.Shutdown] does) closes that listener.
type Queue struct {
	ln   net.Listener
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

// NewQueue returns the Queue of the connections accepted from ln.
func NewQueue(ln net.Listener) *Queue {
	return &Queue{ln: ln, ch: make(chan net.Conn), done: make(chan struct{})}
}

// Push hands c to the server accepting from q; it returns false, and
// leaves c to the caller, when q is closed.
func (q *Queue) Push(c net.Conn) bool {
	select {
	case q.ch <- c:
		return true
	case <-q.done:
		return false
	}
}

// Accept returns the next pushed connection, or [net.ErrClosed] once q is
// closed.
func (q *Queue) Accept() (net.Conn, error) {
	select {
	case c := <-q.ch:
		return c, nil
	case <-q.done:
		return nil, net.ErrClosed
	}
}

// Close makes Accept and Push fail from now on, and closes the listener.
func (q *Queue) Close() error {
	var err error
	q.once.Do(func() {
		close(q.done)
		err = q.ln.Close()
	})
	return err
}

// Addr is the listener's address.
func (q *Queue) Addr() net.Addr { return q.ln.Addr() }
