//go:build unix

package audit

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// inflightNow returns the number of Records under way.
func (a *Auditor) inflightNow() int {
	a.state.Lock()
	defer a.state.Unlock()
	return a.inflight
}

// TestAuditorCloseGivesUpOnStalledPipe: the audit log is a pipe whose
// reader stopped reading; one Record is blocked in its write, three
// wait for their turn. CloseContext returns once its context ends,
// counting the four as lost; the waiting ones fail at once, the blocked
// one when its write ends, and none is counted twice.
func TestAuditorCloseGivesUpOnStalledPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	testsupport.FillPipe(t, w)
	a := New(w)
	const n = 4
	recorded := make(chan error, n)
	for range n {
		go func() {
			recorded <- a.Record(Event{Decision: DecisionBlocked, Method: "GET", URL: "http://a.test/private"})
		}()
	}
	testsupport.WaitFor(t, "the Records to block", func() bool { return a.inflightNow() == n && a.writeStart.Load() != 0 })

	ctx, cancel := context.WithCancel(context.Background())
	closed := make(chan error, 1)
	go func() { closed <- a.CloseContext(ctx) }()
	select {
	case err := <-closed:
		t.Fatalf("CloseContext returned before its context ended, with a write blocked: %v", err)
	default:
	}
	cancel()
	select {
	case err = <-closed:
	case <-time.After(testTimeout):
		t.Fatal("CloseContext did not return after its context ended")
	}
	if err == nil || !strings.Contains(err.Error(), "4 record(s) under way not written (the one blocked in its write: blocked GET http://a.test/private)") || !errors.Is(err, context.Canceled) {
		t.Fatalf("CloseContext: %v", err)
	}
	if a.Lost() != n || a.Failed() != n || a.Written() != 0 {
		t.Fatalf("lost %d failed %d written %d, want %d, %d, 0", a.Lost(), a.Failed(), a.Written(), n, n)
	}
	for range n - 1 { // the ones waiting for their turn return at once
		select {
		case err := <-recorded:
			if !errors.Is(err, errAuditAbandoned) {
				t.Fatalf("waiting Record: %v", err)
			}
		case <-time.After(testTimeout):
			t.Fatal("a Record waiting for its turn was not released")
		}
	}
	select {
	case err := <-recorded:
		t.Fatalf("the blocked write returned while the pipe is still full: %v", err)
	default:
	}
	go io.Copy(io.Discard, r) // the reader reads again: the blocked write ends
	select {
	case err := <-recorded:
		if !errors.Is(err, errAuditAbandoned) {
			t.Fatalf("blocked Record after the give-up: %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("the blocked Record did not return")
	}
	if err := a.Record(Event{Decision: DecisionBlocked}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Record after Close: %v", err)
	}
	if a.Lost() != n || a.Failed() != n+1 || a.Written() != 0 {
		t.Fatalf("after all: lost %d failed %d written %d", a.Lost(), a.Failed(), a.Written())
	}
	if err := a.CloseContext(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestAuditorCloseWritesRecordsUnderWay: Close waits for the Records
// that began before it (one writing, one waiting for its turn) and
// writes them; only Records that begin after it fail.
func TestAuditorCloseWritesRecordsUnderWay(t *testing.T) {
	w := &stallWriter{entered: make(chan struct{}, 1), release: make(chan struct{})}
	a := New(w)
	recorded := make(chan error, 2)
	go func() { recorded <- a.Record(Event{Decision: DecisionBlocked, URL: "http://a.test/1"}) }()
	<-w.entered
	go func() { recorded <- a.Record(Event{Decision: DecisionBlocked, URL: "http://a.test/2"}) }()
	testsupport.WaitFor(t, "the second Record", func() bool { return a.inflightNow() == 2 })
	closed := make(chan error, 1)
	go func() { closed <- a.Close() }()
	testsupport.WaitFor(t, "Close to begin", a.isClosed.Load)
	if err := a.Record(Event{Decision: DecisionBlocked}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Record after Close began: %v", err)
	}
	close(w.release)
	for range 2 {
		if err := <-recorded; err != nil {
			t.Fatalf("Record under way at Close: %v", err)
		}
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if recs := w.Records(t); len(recs) != 2 || a.Written() != 2 || a.Failed() != 1 || a.Lost() != 0 || !w.Closed() {
		t.Fatalf("records %v, written %d, failed %d, lost %d, closed %v", recs, a.Written(), a.Failed(), a.Lost(), w.Closed())
	}
}
