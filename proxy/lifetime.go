package proxy

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/elazarl/goproxy"
)

// Shutdown and the lifetime of request handlers: the contexts Shutdown
// ends, and the count of running handlers it waits for so that their
// audit records are written before the audit log closes.

// ShutdownGrace bounds how long Shutdown waits, after its own
// deadline forced the connections closed, for the request handlers still
// running to write their audit records.
const ShutdownGrace = 5 * time.Second

// errShuttingDown is the cancellation cause of the contexts Shutdown ends.
var errShuttingDown = errors.New("robotsgate is shutting down")

// lifetime is what a Server's request handlers need to know of its
// shutdown: two contexts that Shutdown cancels, and a count of the
// handlers still running so that Shutdown can wait for their audit
// records before the caller closes the audit log.
//
//   - waits ends when Shutdown begins: requests waiting for something
//     that may take long (a crawl-delay slot) stop waiting and are
//     answered 503.
//   - hard ends when Shutdown's deadline has passed: the upstream round
//     trips of requests inside MITM sessions, whose contexts net/http
//     does not cancel, are cut short.
type lifetime struct {
	waits, hard         context.Context
	stopWaits, stopHard context.CancelCauseFunc
	grace               time.Duration // ShutdownGrace unless a test sets it
	mu                  sync.Mutex
	running             int
	idle                zeroSignal // fired when running drops to 0
}

// zeroSignal tells waiters that a count its owner keeps has dropped to
// zero. The owner guards it with the lock that guards the count.
type zeroSignal struct{ ch chan struct{} }

// wait returns a channel closed at the next fire.
func (z *zeroSignal) wait() <-chan struct{} {
	if z.ch == nil {
		z.ch = make(chan struct{})
	}
	return z.ch
}

// fire wakes the waiters, if any; the owner calls it when the count
// drops to zero.
func (z *zeroSignal) fire() {
	if z.ch != nil {
		close(z.ch)
		z.ch = nil
	}
}

func newLifetime() *lifetime {
	l := &lifetime{grace: ShutdownGrace}
	l.waits, l.stopWaits = context.WithCancelCause(context.Background())
	l.hard, l.stopHard = context.WithCancelCause(context.Background())
	return l
}

// enter counts one running handler; the caller calls leave when it ends.
func (l *lifetime) enter() {
	l.mu.Lock()
	l.running++
	l.mu.Unlock()
}

func (l *lifetime) leave() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running--
	if l.running == 0 {
		l.idle.fire()
	}
}

// inFlight returns the number of running handlers.
func (l *lifetime) inFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running
}

// wait waits until no handler runs, or ctx is done; it returns the number
// still running then.
func (l *lifetime) wait(ctx context.Context) int {
	l.mu.Lock()
	if l.running == 0 {
		l.mu.Unlock()
		return 0
	}
	idle := l.idle.wait()
	l.mu.Unlock()
	select {
	case <-idle:
		return 0
	case <-ctx.Done():
		return l.inFlight()
	}
}

// wrap returns h counted as a running handler while it runs.
func (l *lifetime) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.enter()
		defer l.leave()
		h.ServeHTTP(w, r)
	})
}

// track counts a request as running; enter runs it first. A request inside an MITM session
// does not pass through wrap, and its context (rooted in
// [context.Background]) ends with neither the client's connection nor
// Shutdown: track counts it as running until goproxy ends that context
// (after the response was written), and makes the context end at
// Shutdown's deadline too. Plain-HTTP requests need neither: wrap counts
// them, and net/http cancels their context when Shutdown closes their
// connection.
//
// On a tracked connection the session's connection does this
// ([connInfo.requestRead]), with no goroutine and no registration with
// goproxy's context or the hard one per request. Elsewhere (an untracked
// connection) the request's context is a child of goproxy's, and a watch
// per request does the rest (trackAlone).
func (s *Server) track(r *http.Request, ctx *goproxy.ProxyCtx) *http.Request {
	sess, inMITM := ctx.UserData.(*session) // the CONNECT's (enter creates the request's state next)
	if !inMITM {
		return r
	}
	rctx, ok := sess.Conn.requestRead(r.Context(), s.life) // connInfo.requestRead: the head's limits no longer apply
	if !ok {
		var cancel context.CancelCauseFunc
		rctx, cancel = context.WithCancelCause(r.Context())
		s.life.trackAlone(rctx, cancel)
	}
	r = r.WithContext(rctx)
	ctx.Req = r
	return r
}

// trackAlone counts the request of context ctx (cancel ends it) as
// running until ctx ends, and ends it at Shutdown's deadline.
func (l *lifetime) trackAlone(ctx context.Context, cancel context.CancelCauseFunc) {
	l.enter()
	stop := context.AfterFunc(l.hard, func() { cancel(context.Cause(l.hard)) })
	context.AfterFunc(ctx, func() {
		stop()
		l.leave()
	})
}

// untilShutdown returns a context that ends with parent or when Shutdown
// begins, whichever comes first; its cause is [errShuttingDown] in the
// second case. Call cancel when done.
func (l *lifetime) untilShutdown(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	stop := context.AfterFunc(l.waits, func() { cancel(errShuttingDown) })
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

// shuttingDown reports whether ctx (from untilShutdown) ended because
// Shutdown began.
func shuttingDown(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errShuttingDown)
}
