package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fullDisk is a destination that takes room more bytes, then writes
// part of a line and fails with ENOSPC, as a full disk does; room < 0
// means no limit.
type fullDisk struct {
	w    interface{ Write([]byte) (int, error) }
	room int
}

func (d *fullDisk) write(p []byte) (int, error) {
	if d.room < 0 || len(p) <= d.room {
		if d.room >= 0 {
			d.room -= len(p)
		}
		return d.w.Write(p)
	}
	n, _ := d.w.Write(p[:d.room])
	d.room = 0
	return n, syscall.ENOSPC
}

// fullFile is a fullDisk over a real file: it can be truncated.
type fullFile struct {
	*os.File
	disk *fullDisk
}

func (f *fullFile) Write(p []byte) (int, error) { return f.disk.write(p) }

// fullPipe is a fullDisk over a destination that cannot be truncated.
type fullPipe struct {
	buf  bytes.Buffer
	disk *fullDisk
}

func (f *fullPipe) Write(p []byte) (int, error) { return f.disk.write(p) }
func (f *fullPipe) Close() error                { return nil }

// checkLines fails t unless every line of b is a JSON record, and
// returns their URLs.
func checkLines(t *testing.T, b []byte) []string {
	t.Helper()
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("log does not end with a newline: %q", b)
	}
	var urls []string
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var rec struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			urls = append(urls, "MALFORMED")
			continue
		}
		if rec.URL == "" {
			t.Errorf("line %d has no url: %q", i+1, l)
		}
		urls = append(urls, rec.URL)
	}
	return urls
}

// TestAuditShortWriteUndone: a record cut short by a full disk is
// truncated away; the next record, once there is room, is a line of its
// own and the log holds no fragment.
func TestAuditShortWriteUndone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	disk := &fullDisk{w: f, room: -1}
	a := New(&fullFile{File: f, disk: disk})
	if err := a.Record(Event{URL: "http://a.test/1", Decision: DecisionBlocked}); err != nil {
		t.Fatal(err)
	}
	disk.room = 20
	err = a.Record(Event{URL: "http://a.test/lost", Decision: DecisionBlocked})
	if err == nil || !strings.Contains(err.Error(), "nothing of it is left") {
		t.Fatalf("short write: Record returned %v, want a lost record undone", err)
	}
	disk.room = -1
	if err := a.Record(Event{URL: "http://a.test/3", Decision: DecisionBlocked}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := checkLines(t, b); strings.Join(got, " ") != "http://a.test/1 http://a.test/3" {
		t.Errorf("records %v, want the first and the third, whole", got)
	}
	if a.Written() != 2 || a.Failed() != 1 {
		t.Errorf("written %d failed %d, want 2 and 1", a.Written(), a.Failed())
	}
}

// TestAuditShortWriteClosedWithNewline: where the fragment cannot be
// truncated (a pipe), it is ended with a newline before the next record,
// which is a line of its own; also when the disk stays full for a while.
func TestAuditShortWriteClosedWithNewline(t *testing.T) {
	for _, tc := range []struct {
		name string
		full int // records refused after the cut one
	}{{"room back at once", 0}, {"disk full for two more records", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			p := &fullPipe{}
			p.disk = &fullDisk{w: &p.buf, room: -1}
			a := New(p)
			if err := a.Record(Event{URL: "http://a.test/1"}); err != nil {
				t.Fatal(err)
			}
			p.disk.room = 20
			if err := a.Record(Event{URL: "http://a.test/cut"}); err == nil {
				t.Fatal("short write: Record succeeded")
			}
			for range tc.full {
				if err := a.Record(Event{URL: "http://a.test/refused"}); err == nil {
					t.Fatal("full disk: Record succeeded")
				}
			}
			p.disk.room = -1
			if err := a.Record(Event{URL: "http://a.test/3"}); err != nil {
				t.Fatal(err)
			}
			got := checkLines(t, p.buf.Bytes())
			if strings.Join(got, " ") != "http://a.test/1 MALFORMED http://a.test/3" {
				t.Errorf("records %v, want the first, the fragment on its own line, the third", got)
			}
			if a.Written() != 2 || a.Failed() != uint64(1+tc.full) {
				t.Errorf("written %d failed %d, want 2 and %d", a.Written(), a.Failed(), 1+tc.full)
			}
		})
	}
}

// TestAuditFileEndingOpen: a file left ending in a fragment (a crash
// during a write) gets a newline before the first record.
func TestAuditFileEndingOpen(t *testing.T) {
	for _, tc := range []struct {
		name string
		rot  Rotation
	}{{"plain file", Rotation{}}, {"rotated file", Rotation{MaxSizeMB: 1}}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			if err := os.WriteFile(path, []byte(`{"url":"http://a.test/1"}`+"\n"+`{"url":"http://a.t`), 0o640); err != nil {
				t.Fatal(err)
			}
			w, err := Open(path, tc.rot, nil)
			if err != nil {
				t.Fatal(err)
			}
			a := New(w)
			if err := a.Record(Event{URL: "http://a.test/3"}); err != nil {
				t.Fatal(err)
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(path)
			if got := checkLines(t, b); strings.Join(got, " ") != "http://a.test/1 MALFORMED http://a.test/3" {
				t.Errorf("records %v, want the new record on a line of its own", got)
			}
		})
	}
}
