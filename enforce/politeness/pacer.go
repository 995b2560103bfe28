package politeness

import (
	"context"
	"sync"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
)

// MemoryPacer is the in-memory Pacer of one process. For each origin it
// keeps the next free slot: a request arriving at now gets
// slot = max(now, next) and moves next to slot+delay, so slots are handed
// out in arrival order, delay apart.
//
// Memory is bounded: an origin whose next free slot has passed carries no
// state worth keeping and is forgotten (lazily, by a sweep at most once per
// sweep interval), so the map holds only origins with a queue, whose slots
// are at most maxWait+delay ahead.
//
// A reserved slot is never given back, even if its request is abandoned:
// later requests were spaced from it, and reusing it could put two
// requests less than delay apart. An abandoned slot therefore leaves a gap
// of one delay in the origin's schedule, which errs on the side of
// politeness.
//
// MemoryPacer is safe for concurrent use. The zero value is not usable;
// call [NewMemoryPacer].
type MemoryPacer struct {
	clock enforce.Clock

	mu      sync.Mutex
	next    map[string]time.Time // origin -> next free slot
	sweepAt time.Time            // when the next sweep of past slots is due
}

// pacerSweepEvery is how often [MemoryPacer] drops origins whose next slot
// has passed.
const pacerSweepEvery = time.Minute

// NewMemoryPacer returns a [MemoryPacer] reading time from clock
// ([enforce.SystemClock]{} when nil).
func NewMemoryPacer(clock enforce.Clock) *MemoryPacer {
	if clock == nil {
		clock = enforce.SystemClock{}
	}
	return &MemoryPacer{clock: clock, next: make(map[string]time.Time)}
}

// Reserve implements Pacer. It returns the slot at which the request may
// go. When that slot is more than maxWait away, nothing is reserved, ok is
// false and at is the slot the request would have had (the time at which
// the origin's current queue has drained). A delay <= 0 reserves nothing
// and returns the next free slot. Reserve fails only when ctx is done.
func (p *MemoryPacer) Reserve(ctx context.Context, origin string, delay, maxWait time.Duration) (time.Time, bool, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, false, err
	}
	now := p.clock.Now()

	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepLocked(now)

	slot := now
	if next, ok := p.next[origin]; ok && next.After(now) {
		slot = next
	}
	if slot.Sub(now) > maxWait {
		return slot, false, nil
	}
	if delay > 0 {
		p.next[origin] = slot.Add(delay)
	}
	return slot, true, nil
}

// Next returns origin's next free slot, or the zero time when it has
// none (no request is queued: a request may go at once).
func (p *MemoryPacer) Next(origin string) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.next[origin]
}

// Hold moves origin's next free slot to next, unless it is already later.
// A fleet-wide pacer calls it after each reservation it made elsewhere, so
// that this pacer, taking over while the fleet-wide one is unavailable,
// keeps the spacing from the last slot handed out.
func (p *MemoryPacer) Hold(origin string, next time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur, ok := p.next[origin]; !ok || next.After(cur) {
		p.next[origin] = next
	}
}

// Len reports how many origins the pacer currently holds state for.
func (p *MemoryPacer) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.next)
}

// sweepLocked forgets the origins whose next slot is not after now, at
// most once per [pacerSweepEvery].
func (p *MemoryPacer) sweepLocked(now time.Time) {
	if now.Before(p.sweepAt) {
		return
	}
	p.sweepAt = now.Add(pacerSweepEvery)
	dropPassed(p.next, now)
}

// dropPassed deletes the origins of m whose time is not after now.
func dropPassed(m map[string]time.Time, now time.Time) {
	for origin, t := range m {
		if !t.After(now) {
			delete(m, origin)
		}
	}
}
