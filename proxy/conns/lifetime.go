package conns

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
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

// Lifetime is what a Server's request handlers need to know of its
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
type Lifetime struct {
	waits, hard         context.Context
	stopWaits, stopHard context.CancelCauseFunc
	Grace               time.Duration // Shutdown's wait for handlers after its deadline; ShutdownGrace unless a test sets it
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

// NewLifetime returns the lifetime of a Server that has not begun to shut
// down.
func NewLifetime() *Lifetime {
	l := &Lifetime{Grace: ShutdownGrace}
	l.waits, l.stopWaits = context.WithCancelCause(context.Background())
	l.hard, l.stopHard = context.WithCancelCause(context.Background())
	return l
}

// Waits returns the context that ends when Shutdown begins.
func (l *Lifetime) Waits() context.Context { return l.waits }

// StopWaits ends the waits context: Shutdown has begun.
func (l *Lifetime) StopWaits() { l.stopWaits(errShuttingDown) }

// StopHard ends the hard context: Shutdown's deadline has passed.
func (l *Lifetime) StopHard() { l.stopHard(errShuttingDown) }

// Enter counts one running handler; the caller calls Leave when it ends.
func (l *Lifetime) Enter() {
	l.mu.Lock()
	l.running++
	l.mu.Unlock()
}

// Leave counts one running handler less.
func (l *Lifetime) Leave() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running--
	if l.running == 0 {
		l.idle.fire()
	}
}

// InFlight returns the number of running handlers.
func (l *Lifetime) InFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running
}

// Wait waits until no handler runs, or ctx is done; it returns the number
// still running then.
func (l *Lifetime) Wait(ctx context.Context) int {
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
		return l.InFlight()
	}
}

// Wrap returns h counted as a running handler while it runs.
func (l *Lifetime) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.Enter()
		defer l.Leave()
		h.ServeHTTP(w, r)
	})
}

// TrackAlone counts the request of context ctx (cancel ends it) as
// running until ctx ends, and ends it at Shutdown's deadline.
func (l *Lifetime) TrackAlone(ctx context.Context, cancel context.CancelCauseFunc) {
	l.Enter()
	stop := context.AfterFunc(l.hard, func() { cancel(context.Cause(l.hard)) })
	context.AfterFunc(ctx, func() {
		stop()
		l.Leave()
	})
}

// UntilShutdown returns a context that ends with parent or when Shutdown
// begins, whichever comes first; its cause is [errShuttingDown] in the
// second case. Call cancel when done.
func (l *Lifetime) UntilShutdown(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	stop := context.AfterFunc(l.waits, func() { cancel(errShuttingDown) })
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

// ShuttingDown reports whether ctx (from UntilShutdown) ended because
// Shutdown began.
func ShuttingDown(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errShuttingDown)
}
