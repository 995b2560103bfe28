package politeness

import (
	"context"
	"sync"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
)

// MemoryPauses is the in-memory Pauses of one process: a
// map from origin to the end of its pause, and one of backoff streaks. Pauses that have ended are forgotten when read
// and by a sweep at most once per minute (driven by the times passed to
// Pause and PausedUntil, so it needs no clock), which bounds its memory by
// the origins currently paused.
//
// MemoryPauses is safe for concurrent use. The zero value is ready to use.
type MemoryPauses struct {
	mu      sync.Mutex
	until   map[string]time.Time
	streaks map[string]memStreak // see Backoff
	sweepAt time.Time
}

// memStreak is an origin's 503/429 streak in a [MemoryPauses].
type memStreak struct {
	n     int       // consecutive 503/429 answers counted
	since time.Time // when the current pause was last set or extended
	until time.Time // end of the current pause
	keep  time.Time // forgotten after this (until + BackoffPolicy.Max)
}

// Pacer hands out crawl-delay slots per origin, in arrival order, so that
// successive requests to one origin are spaced at least delay apart. The
// in-memory pacer serves one process; a Redis pacer serves a fleet.
type Pacer interface {
	// Reserve reserves the next slot for origin and returns when the
	// request may go (now or later). If that would be later than
	// now+maxWait, nothing is reserved and ok is false.
	Reserve(ctx context.Context, origin string, delay, maxWait time.Duration) (at time.Time, ok bool, err error)
}

// Pauses records the origins that asked robotsgate to back off (503/429,
// Retry-After) and each origin's backoff streak. [MemoryPauses] serves one
// process; a fleet shares one in Redis, so that it backs off as one: the
// streak, and with it the exponential backoff, counts every replica's
// 503/429, and a 2xx seen by any replica ends the pause unless that
// request was sent before the pause began.
type Pauses interface {
	// Pause pauses origin until until (extending, never shortening, a
	// current pause).
	Pause(ctx context.Context, origin string, until time.Time) error
	// PausedUntil returns the end of origin's pause, if it is paused at now.
	PausedUntil(ctx context.Context, origin string, now time.Time) (time.Time, bool, error)
	// Resume ends origin's pause and streak unconditionally.
	Resume(ctx context.Context, origin string) error
	// Backoff records a 503/429 answer observed at now. Unless origin's
	// current pause is still running at now (the answer is to a request
	// in flight when it began), it counts a further failure in origin's
	// streak. It pauses origin until now+retryAfter when retryAfter > 0,
	// else until now+b.Delay(streak), never shortening the current pause,
	// and returns the pause's end and whether this call set or extended
	// it. The streak is forgotten b.Max after its pause ended.
	Backoff(ctx context.Context, origin string, now time.Time, retryAfter time.Duration, b BackoffPolicy) (until time.Time, extended bool, err error)
	// ResumeSent ends origin's pause and streak (a 2xx was seen) unless
	// the pause began after sent, the time the 2xx request was sent: such
	// an answer says nothing about the origin since. A zero sent ends the
	// pause unconditionally.
	ResumeSent(ctx context.Context, origin string, sent time.Time) error
}

// BackoffPolicy is the exponential backoff of a Pauses.
type BackoffPolicy struct {
	Start time.Duration // the first pause
	Max   time.Duration // the cap, and how long an ended streak is kept
}

// Delay returns the pause after the n-th consecutive 503/429 (n >= 1):
// Start * 2^(n-1), capped at Max ([enforce.Backoff]). A fleet-wide Pauses
// gets its steps from Steps.
func (b BackoffPolicy) Delay(n int) time.Duration { return enforce.Backoff(b.Start, b.Max, n) }

// Steps returns Delay(1), Delay(2), ... up to the first that reaches Max
// (at most 64 values): Delay(n) for a larger n is the last one.
func (b BackoffPolicy) Steps() []time.Duration {
	var out []time.Duration
	for n := 1; n <= 64; n++ {
		d := b.Delay(n)
		out = append(out, d)
		if d >= b.Max {
			break
		}
	}
	return out
}

// pausesSweepEvery is how often [MemoryPauses] drops ended pauses.
const pausesSweepEvery = time.Minute

// NewMemoryPauses returns an empty [MemoryPauses].
func NewMemoryPauses() *MemoryPauses { return &MemoryPauses{} }

// Pause implements Pauses: origin is paused until until, or longer if it
// already was.
func (m *MemoryPauses) Pause(ctx context.Context, origin string, until time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.until == nil {
		m.until = make(map[string]time.Time)
	}
	if cur, ok := m.until[origin]; !ok || until.After(cur) {
		m.until[origin] = until
	}
	return nil
}

// PausedUntil implements Pauses: it returns the end of origin's pause and
// true when the pause ends after now.
func (m *MemoryPauses) PausedUntil(ctx context.Context, origin string, now time.Time) (time.Time, bool, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(now)
	until, ok := m.until[origin]
	if !ok {
		return time.Time{}, false, nil
	}
	if !until.After(now) {
		delete(m.until, origin)
		return time.Time{}, false, nil
	}
	return until, true, nil
}

// Resume implements Pauses: it ends origin's pause and streak, if any.
func (m *MemoryPauses) Resume(ctx context.Context, origin string) error {
	return m.ResumeSent(ctx, origin, time.Time{})
}

// Backoff implements Pauses.
func (m *MemoryPauses) Backoff(ctx context.Context, origin string, now time.Time, retryAfter time.Duration, b BackoffPolicy) (time.Time, bool, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(now)
	if m.streaks == nil {
		m.streaks = make(map[string]memStreak)
	}
	s := m.streaks[origin]
	if s.n == 0 || !now.Before(s.until) {
		s.n++ // a new failure, not an answer to a request sent before the pause
	}
	d := retryAfter
	if d <= 0 {
		d = b.Delay(s.n)
	}
	until := now.Add(d)
	extended := until.After(s.until)
	if extended {
		s.until, s.since = until, now
	}
	s.keep = s.until.Add(b.Max)
	m.streaks[origin] = s
	if !extended {
		return s.until, false, nil
	}
	if m.until == nil {
		m.until = make(map[string]time.Time)
	}
	if cur, ok := m.until[origin]; !ok || until.After(cur) {
		m.until[origin] = until
	}
	return until, true, nil
}

// ResumeSent implements Pauses.
func (m *MemoryPauses) ResumeSent(ctx context.Context, origin string, sent time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.streaks[origin]; ok && !sent.IsZero() && sent.Before(s.since) {
		return nil
	}
	delete(m.streaks, origin)
	delete(m.until, origin)
	return nil
}

// Len reports how many origins the map currently holds (paused, or whose
// ended pause has not been swept yet).
func (m *MemoryPauses) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.until)
}

func (m *MemoryPauses) sweepLocked(now time.Time) {
	if now.Before(m.sweepAt) {
		return
	}
	m.sweepAt = now.Add(pausesSweepEvery)
	dropPassed(m.until, now)
	for origin, s := range m.streaks {
		if now.After(s.keep) {
			delete(m.streaks, origin)
		}
	}
}
