package audit

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/natefinch/lumberjack.v2"
)

// TestAuditRotates writes a little more than 1 MB of audit records with
// audit_max_size_mb 1 (lumberjack's unit is the MB) and checks that the
// file rotated: a timestamped backup appears next to the live file, no
// record is lost across the two, and Close closes the writer.
func TestAuditRotates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	w, err := Open(path, Rotation{MaxSizeMB: 1, MaxBackups: 3}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	lj, ok := w.(*lumberjack.Logger)
	if !ok || lj.MaxSize != 1 || lj.MaxBackups != 3 {
		t.Fatalf("Open returned %T %+v, want a lumberjack.Logger with MaxSize 1", w, w)
	}
	a := New(w)
	pad := strings.Repeat("x", 1000)
	const n = 1200 // ~1.3 MB: one rotation
	for i := 0; i < n; i++ {
		if err := a.Record(Event{URL: "http://example.test/" + pad, Reason: "disallowed", Decision: DecisionBlocked}); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	lines, backups := 0, 0
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 1<<20 {
			t.Errorf("%s is %d bytes, larger than the 1 MB limit", e.Name(), len(b))
		}
		lines += strings.Count(string(b), "\n")
		if e.Name() != "audit.jsonl" {
			backups++
			if !strings.HasPrefix(e.Name(), "audit-") || !strings.HasSuffix(e.Name(), ".jsonl") {
				t.Errorf("unexpected file %s", e.Name())
			}
		}
	}
	if backups != 1 {
		t.Errorf("%d backups, want 1: %v", backups, entries)
	}
	if lines != n {
		t.Errorf("%d records across the files, want %d", lines, n)
	}
	if err := a.Record(Event{URL: "http://x/"}); err == nil {
		t.Error("Record after Close succeeded")
	}
}
