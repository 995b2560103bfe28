package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// failWriter fails every write.
type failWriter struct{ closed bool }

func (f *failWriter) Write(p []byte) (int, error) { return 0, errors.New("disk full") }
func (f *failWriter) Close() error                { f.closed = true; return nil }

func TestAuditorRecordFields(t *testing.T) {
	var m testsupport.Sink
	a := New(&m)
	at := time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.UTC)
	err := a.Record(Event{
		Time: at, Client: "127.0.0.1:5000", Method: "GET", URL: "http://a.test/x", Origin: "http://a.test",
		Agent: "Bot", Group: "bot", Rule: "Disallow: /x", Line: 7, Reason: "disallowed", Decision: DecisionBlocked,
		Mode: "enforce", RobotsStatus: "ok", RobotsHTTPStatus: 200, RobotsAge: 1500 * time.Millisecond, Status: 403,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Record(Event{Reason: "tunnel-unenforced", Decision: DecisionAllowed, Detail: "CONNECT a.test:443"}); err != nil {
		t.Fatal(err)
	}
	recs := m.Records(t)
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	want := map[string]any{
		"time": "2026-05-01T12:00:00.123456789Z", "client": "127.0.0.1:5000", "method": "GET", "url": "http://a.test/x",
		"origin": "http://a.test", "agent": "Bot", "group": "bot", "rule": "Disallow: /x", "line": 7.0,
		"reason": "disallowed", "decision": "blocked", "mode": "enforce", "robots_status": "ok",
		"robots_http_status": 200.0, "robots_age_s": 1.5, "status": 403.0,
	}
	for k, v := range want {
		if recs[0][k] != v {
			t.Errorf("%s = %v, want %v", k, recs[0][k], v)
		}
	}
	if _, ok := recs[1]["robots_status"]; ok {
		t.Errorf("record without robots fields has robots_status: %v", recs[1])
	}
	if recs[1]["detail"] != "CONNECT a.test:443" || recs[1]["agent"] != "" || recs[1]["time"] == nil {
		t.Errorf("second record: %v", recs[1])
	}
	if a.Written() != 2 || a.Failed() != 0 {
		t.Errorf("written %d failed %d", a.Written(), a.Failed())
	}
}

func TestAuditorAfterCloseFailsAndCounts(t *testing.T) {
	var m testsupport.Sink
	a := New(&m)
	if err := a.Record(Event{Decision: DecisionBlocked}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := a.Record(Event{Decision: DecisionBlocked}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Record after Close: %v, want ErrClosed", err)
	}
	if a.Failed() != 1 || a.Written() != 1 {
		t.Fatalf("written %d failed %d, want 1 and 1", a.Written(), a.Failed())
	}
}

func TestAuditorWriteErrorReturned(t *testing.T) {
	fw := &failWriter{}
	a := New(fw)
	err := a.Record(Event{Decision: DecisionBlocked})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Record on a failing writer: %v", err)
	}
	if a.Failed() != 1 || a.Written() != 0 {
		t.Fatalf("written %d failed %d", a.Written(), a.Failed())
	}
	a.Close()
	if !fw.closed {
		t.Fatal("Close did not close the writer")
	}
}

func TestAuditorConcurrentLinesWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "audit.log")
	w, err := Open(path, Rotation{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := New(w)
	const goroutines, each = 16, 50
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := a.Record(Event{Decision: DecisionBlocked, URL: strings.Repeat("x", 100*g+i)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d torn: %v", n, err)
		}
		n++
	}
	if n != goroutines*each {
		t.Fatalf("%d lines, want %d", n, goroutines*each)
	}
	// Re-opening appends.
	w, err = Open(path, Rotation{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a = New(w)
	a.Record(Event{Decision: DecisionBlocked})
	a.Close()
	b, _ = os.ReadFile(path)
	if got := bytes.Count(b, []byte("\n")); got != n+1 {
		t.Fatalf("after reopen: %d lines, want %d", got, n+1)
	}
}

func TestOpenStdoutNotClosed(t *testing.T) {
	var out bytes.Buffer
	w, err := Open("-", Rotation{}, &out)
	if err != nil {
		t.Fatal(err)
	}
	a := New(w)
	a.Record(Event{Decision: DecisionBlocked})
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"decision":"blocked"`) {
		t.Fatalf("stdout got %q", out.String())
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	if _, err := Open(filepath.Join(file, "under-a-file.log"), Rotation{}, nil); err == nil || !strings.HasPrefix(err.Error(), "audit_log: ") {
		t.Fatalf("unopenable path: %v", err)
	}
}

// stallWriter blocks its first write until release; entered receives
// when it starts blocking.
type stallWriter struct {
	testsupport.Sink
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *stallWriter) Write(p []byte) (int, error) {
	s.once.Do(func() {
		s.entered <- struct{}{}
		<-s.release
	})
	return s.Sink.Write(p)
}

// TestAuditorReadyReportsStalledWrite: a write blocked for StallAfter
// makes Ready fail, without Ready waiting for that write.
func TestAuditorReadyReportsStalledWrite(t *testing.T) {
	clk := enforcetest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	w := &stallWriter{entered: make(chan struct{}, 1), release: make(chan struct{})}
	a := New(w)
	a.Clock, a.StallAfter = clk, 5*time.Second
	recorded := make(chan error, 1)
	go func() { recorded <- a.Record(Event{Decision: DecisionBlocked}) }()
	<-w.entered

	ready := func() error {
		t.Helper()
		res := make(chan error, 1)
		go func() { res <- a.Ready() }()
		select {
		case err := <-res:
			return err
		case <-time.After(testTimeout):
			t.Fatal("Ready waited for the blocked write")
			return nil
		}
	}
	if err := ready(); err != nil {
		t.Fatalf("Ready with a write blocked for 0s: %v", err)
	}
	clk.Advance(4 * time.Second)
	if err := ready(); err != nil {
		t.Fatalf("Ready with a write blocked for 4s: %v", err)
	}
	clk.Advance(time.Second)
	if err := ready(); err == nil || !strings.Contains(err.Error(), "blocked for 5s") {
		t.Fatalf("Ready with a write blocked for 5s: %v", err)
	}
	close(w.release)
	if err := <-recorded; err != nil {
		t.Fatal(err)
	}
	if err := ready(); err != nil {
		t.Fatalf("Ready after the write went through: %v", err)
	}
}

// TestAuditorReadyFileMovedOrDeleted: Ready reports an audit file moved,
// deleted or replaced under robotsgate (which would keep writing to the
// old one), and never creates the file itself.
func TestAuditorReadyFileMovedOrDeleted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	w, err := Open(path, Rotation{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := New(w)
	defer a.Close()
	if err := a.Record(Event{Decision: DecisionBlocked}); err != nil {
		t.Fatal(err)
	}
	if err := a.Ready(); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := a.Ready(); err == nil || !strings.Contains(err.Error(), "moved or deleted") {
		t.Fatalf("Ready after the file was moved: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Ready recreated the audit file: %v", err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.Ready(); err == nil || !strings.Contains(err.Error(), "replaced") {
		t.Fatalf("Ready after another file took its name: %v", err)
	}
	// Moved back: ready again.
	if err := os.Rename(path+".1", path); err != nil {
		t.Fatal(err)
	}
	if err := a.Ready(); err != nil {
		t.Fatalf("Ready after the file came back: %v", err)
	}
}

// TestAuditorReadyRotatedLog: with lumberjack rotation, a rotation (which
// renames the file) keeps Ready true; the file deleted from outside makes
// it fail, and Ready does not recreate it.
func TestAuditorReadyRotatedLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := Open(path, Rotation{MaxSizeMB: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := New(w)
	defer a.Close()
	lj := w.(*lumberjack.Logger)
	for i := range 3 {
		if err := a.Record(Event{Decision: DecisionBlocked}); err != nil {
			t.Fatal(err)
		}
		if err := a.Ready(); err != nil {
			t.Fatalf("Ready before rotation %d: %v", i, err)
		}
		if err := lj.Rotate(); err != nil {
			t.Fatal(err)
		}
		if err := a.Ready(); err != nil {
			t.Fatalf("Ready after rotation %d: %v", i, err)
		}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := a.Ready(); err == nil || !strings.Contains(err.Error(), "moved or deleted") {
		t.Fatalf("Ready after the file was deleted: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Ready recreated the audit file: %v", err)
	}
}
