package enforce

import (
	"context"
	"time"
)

// servableStale reports whether the expired entry en may decide while
// its origin is re-fetched in the background: it expired at most
// [FetchTimeout] before now, which bounds how long an expired copy decides
// while the origin answers (a fetch ends within FetchTimeout), and it
// holds a good robots.txt that is within the unreachable window at now.
func (e *Enforcer) servableStale(en *Entry, now time.Time) bool {
	if en.Parsed == nil || now.Sub(en.Expires) > e.fetchTimeout {
		return false
	}
	switch en.Result.Status {
	case StatusOK:
		return now.Sub(en.Expires) <= e.window
	case StatusUnreachable:
		return en.Good != nil && !en.UnreachableSince.IsZero() && now.Sub(en.UnreachableSince) <= e.window
	}
	return false
}

// revalidate starts a background re-fetch of key's entry, unless one started
// by revalidate is under way or Close was called. It shares the single flight of refresh.
func (e *Enforcer) revalidate(ctx context.Context, key Key) {
	e.mu.Lock()
	_, busy := e.revalidating[key]
	start := !busy && !e.closed
	if start {
		e.revalidating[key] = struct{}{}
		e.background.Add(1)
	}
	e.mu.Unlock()
	if !start {
		return
	}
	detached := context.WithoutCancel(ctx)
	go func() {
		defer e.background.Done()
		defer func() {
			e.mu.Lock()
			delete(e.revalidating, key)
			e.mu.Unlock()
		}()
		// A failure is stored as the entry's result; nothing else to do.
		_, _ = e.refresh(detached, key)
	}()
}

// Close stops starting background revalidations and waits for those
// under way, so that none writes to the Store after Close returns. A
// revalidation under way ends within [FetchTimeout]. Decide still works
// after Close (it fetches in the foreground); Close is idempotent.
func (e *Enforcer) Close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.background.Wait()
}
