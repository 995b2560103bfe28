package audit

import (
	"context"
	"errors"
	"fmt"
)

// begin counts a Record in flight; it returns false (and counts the
// record as failed) once Close has begun.
func (a *Auditor) begin() bool {
	a.state.Lock()
	defer a.state.Unlock()
	if a.closed {
		a.failed.Add(1)
		return false
	}
	a.inflight++
	return true
}

// inTurn writes the record e with write in its turn: it counts e in flight
// ([ErrClosed] once Close has begun), waits for the turn unless CloseContext
// gives up first, and ends with [Auditor.finish]. write reports whether it
// wrote a line; when it wrote none and did not fail, nothing is counted.
func (a *Auditor) inTurn(e *Event, write func() (bool, error)) error {
	if !a.begin() {
		return ErrClosed
	}
	select {
	case a.turn <- struct{}{}:
	case <-a.dead:
		return a.finish(errAuditAbandoned, nil)
	}
	if !a.startWrite(e) { // both were ready and the turn won
		<-a.turn
		return a.finish(errAuditAbandoned, nil)
	}
	wrote, err := write()
	<-a.turn
	if !wrote && err == nil {
		e = nil // nothing to attest: nothing written
	}
	return a.finish(err, e)
}

// startWrite notes e as the record being written, unless CloseContext
// gave up (then it returns false: e must not be written).
func (a *Auditor) startWrite(e *Event) bool {
	a.state.Lock()
	defer a.state.Unlock()
	if a.abandoned {
		return false
	}
	a.writing = e
	return true
}

// finish ends a Record begun by [Auditor.begin] with the outcome err (of writing
// e, nil when it was not written: counted only as failed when err is set) and returns
// the error for Record. A Record that CloseContext gave up on was counted
// as lost then: it is not counted again, and it fails even if its write
// went through after all, as it was not known written when robotsgate
// reported the loss.
func (a *Auditor) finish(err error, e *Event) error {
	a.state.Lock()
	defer a.state.Unlock()
	a.inflight--
	if e != nil && a.writing == e {
		a.writing = nil
	}
	if a.closed && a.inflight == 0 && !a.abandoned {
		close(a.drained)
	}
	switch {
	case a.abandoned:
		if err == nil {
			err = errAuditAbandoned
		}
		return err
	case err != nil:
		a.failed.Add(1)
		return err
	}
	if e != nil {
		a.written.Add(1)
	}
	return nil
}

// Lost returns the number of records CloseContext gave up on: records
// whose write was blocked, or waiting behind a blocked one, when it
// ended. They are not known written.
func (a *Auditor) Lost() uint64 { return a.lost.Load() }

// Close is CloseContext without a bound: it waits as long as the
// destination takes.
func (a *Auditor) Close() error { return a.CloseContext(context.Background()) }

// CloseContext closes the audit log: Records from now on fail with
// [ErrClosed], the Records already under way are written, then the
// underlying writer is synced when it has a Sync method, and closed.
// It is idempotent.
//
// When ctx ends first (a destination that stopped taking writes: a pipe
// nobody reads, a hung disk), it gives up: the Records still under way
// are counted as lost (Lost, Failed) and fail, those waiting for their
// turn at once, and it returns an error saying how many. A write blocked
// in the operating system cannot be interrupted (stdout inherited from a
// shell has no write deadline); it is left behind, for the process exit
// to end.
//
// Records are never buffered in robotsgate: each was handed to the
// operating system when Record returned, so they survive robotsgate's
// exit either way. Sync (fsync) makes them survive a power loss too: an
// audit_log file (an *[os.File]) is synced; stdout is synced when it can be
// (a file; not a pipe or a terminal); a rotated log (audit_max_size_mb,
// a lumberjack.Logger) is closed without fsync, as lumberjack offers no
// Sync and does not expose its file.
func (a *Auditor) CloseContext(ctx context.Context) error {
	a.state.Lock()
	if a.closed {
		a.state.Unlock()
		return nil
	}
	a.closed = true
	a.isClosed.Store(true)
	close(a.stop)
	if a.inflight == 0 {
		close(a.drained)
	}
	a.state.Unlock()
	select {
	case <-a.drained:
	case <-ctx.Done():
		select {
		case <-a.drained: // both at once: the records are written
		default:
			return a.abandon(ctx, "waiting for the records under way")
		}
	}
	done := make(chan error, 1)
	go func() { done <- a.closeDigest(a.syncClose) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return a.abandon(ctx, "syncing and closing it")
	}
}

// syncClose syncs and closes the writer.
func (a *Auditor) syncClose() error {
	var errs []error
	if s, ok := a.w.(interface{ Sync() error }); ok {
		if err := s.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("audit: sync: %w", err))
		}
	}
	if err := a.w.Close(); err != nil {
		errs = append(errs, fmt.Errorf("audit: close: %w", err))
	}
	return errors.Join(errs...)
}

// abandon gives up on the Records under way, counting them as lost, and
// wakes those waiting for their turn.
func (a *Auditor) abandon(ctx context.Context, during string) error {
	a.state.Lock()
	defer a.state.Unlock()
	a.abandoned = true
	n := uint64(a.inflight)
	a.lost.Add(n)
	a.failed.Add(n)
	close(a.dead)
	var blocked string
	if e := a.writing; e != nil {
		// The others return errAuditAbandoned to their callers, who log
		// them; this one may never return.
		blocked = fmt.Sprintf(" (the one blocked in its write: %s %s %s)", e.Decision, e.Method, e.URL)
	}
	return fmt.Errorf("audit: closing the log: gave up %s (%w): the destination stopped taking writes; "+
		"%d record(s) under way not written%s", during, context.Cause(ctx), n, blocked)
}

// closeDigest writes the digest of the records since the last one, then
// runs closeFn; it joins their errors. Every Record is finished: nobody
// else takes the turn.
func (a *Auditor) closeDigest(closeFn func() error) error {
	var err error
	if a.digests {
		if _, err = a.writeDigest(digestClose); err != nil {
			err = fmt.Errorf("audit: closing digest: %w", err)
		}
	}
	return errors.Join(err, closeFn())
}
