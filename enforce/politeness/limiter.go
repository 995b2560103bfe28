package politeness

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
)

// Slots are the per-origin concurrency slots of [Config.MaxConcurrency]:
// a counting semaphore per origin whose waiters are served in arrival
// order. Politeness values built with the same Slots (one per
// configuration a reload puts in force) count the same requests, so a
// reload neither forgets the requests in flight nor lets the limit be
// exceeded; the limit in force is that of the last one built. It is
// safe for concurrent use.
type Slots struct {
	mu  sync.Mutex
	max int // guarded by mu
	m   map[string]*slots
}

// NewSlots returns Slots holding nothing.
func NewSlots() *Slots { return &Slots{m: make(map[string]*slots)} }

// setMax sets the number of slots per origin; requests holding more (a
// limit lowered) keep them until they end.
func (l *Slots) setMax(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.max = n
}

type slots struct {
	busy    int
	waiters []chan struct{} // closed when handed a slot
}

var errNoSlot = errors.New("no slot")

// acquire takes one of origin's slots, waiting up to maxWait (on clk) for
// one. It reports false when none came in time, and ctx.Err() when ctx
// ended first.
func (l *Slots) acquire(ctx context.Context, clk enforce.Clock, origin string, maxWait time.Duration) (bool, error) {
	l.mu.Lock()
	s := l.m[origin]
	if s == nil {
		s = &slots{}
		l.m[origin] = s
	}
	if s.busy < l.max && len(s.waiters) == 0 {
		s.busy++
		l.mu.Unlock()
		return true, nil
	}
	if maxWait <= 0 {
		l.mu.Unlock()
		return false, nil
	}
	ch := make(chan struct{})
	s.waiters = append(s.waiters, ch)
	l.mu.Unlock()

	var err error
	select {
	case <-ch:
		return true, nil
	case <-clk.After(maxWait):
		err = errNoSlot
	case <-ctx.Done():
		err = ctx.Err()
	}
	l.mu.Lock()
	for i, w := range s.waiters {
		if w == ch {
			s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
			l.mu.Unlock()
			return notSlot(err)
		}
	}
	l.mu.Unlock()
	// A slot was handed to us as we gave up: pass it on.
	l.release(origin)
	return notSlot(err)
}

func notSlot(err error) (bool, error) {
	if err == errNoSlot {
		return false, nil
	}
	return false, err
}

// release gives back one of origin's slots: to the first waiter, or to the
// pool.
func (l *Slots) release(origin string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.m[origin]
	if s == nil {
		return
	}
	if len(s.waiters) > 0 && s.busy <= l.max {
		close(s.waiters[0]) // the slot goes to the first waiter
		s.waiters = s.waiters[1:]
		return
	}
	s.busy--
	if s.busy <= 0 {
		delete(l.m, origin)
	}
}
