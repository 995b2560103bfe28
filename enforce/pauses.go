package enforce

import (
	"context"
	"sync"
	"time"
)

// MemoryPauses is the in-memory Pauses of one process: a map from origin
// to the end of its pause. Pauses that have ended are forgotten when read
// and by a sweep at most once per minute (driven by the times passed to
// Pause and PausedUntil, so it needs no clock), which bounds its memory by
// the origins currently paused.
//
// MemoryPauses is safe for concurrent use. The zero value is ready to use.
type MemoryPauses struct {
	mu      sync.Mutex
	until   map[string]time.Time
	sweepAt time.Time
}

// pausesSweepEvery is how often MemoryPauses drops ended pauses.
const pausesSweepEvery = time.Minute

// NewMemoryPauses returns an empty MemoryPauses.
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

// Resume implements Pauses: it ends origin's pause, if any.
func (m *MemoryPauses) Resume(ctx context.Context, origin string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
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
	for origin, until := range m.until {
		if !until.After(now) {
			delete(m.until, origin)
		}
	}
}
