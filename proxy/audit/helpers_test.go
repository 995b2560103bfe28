package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"sync"
	"testing"
	"time"
)

// logConfig is the part of the application's configuration that names
// the audit destination.
type logConfig struct {
	AuditLog        string
	AuditMaxSizeMB  int
	AuditMaxBackups int
	AuditMaxAgeDays int
}

// Default is the default audit destination: stdout.
func Default() logConfig { return logConfig{AuditLog: "-"} }

// OpenAuditLog opens the destination cfg names (Open).
func OpenAuditLog(cfg logConfig, stdout io.Writer) (io.WriteCloser, error) {
	return Open(cfg.AuditLog, Rotation{MaxSizeMB: cfg.AuditMaxSizeMB, MaxBackups: cfg.AuditMaxBackups, MaxAgeDays: cfg.AuditMaxAgeDays}, stdout)
}

// memAudit is a goroutine-safe in-memory sink for audit records or
// operator logs. After Close, writes fail.
type memAudit struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	closed bool
}

func (m *memAudit) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, io.ErrClosedPipe
	}
	return m.buf.Write(p)
}

func (m *memAudit) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

// String returns what was written so far.
func (m *memAudit) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.buf.String()
}

// records returns the JSON lines written so far, parsed.
func (m *memAudit) records(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader([]byte(m.String())))
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("audit line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, rec)
	}
	return out
}

func TestAuditorReadyUnwritable(t *testing.T) {
	dir := t.TempDir()
	cfg := Default()
	cfg.AuditLog = dir + "/sub/jsonl"
	w, err := OpenAuditLog(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a := New(w)
	defer a.Close()
	if err := a.Ready(); err != nil {
		t.Fatalf("fresh audit file not ready: %v", err)
	}
	if err := a.Record(Event{URL: "http://x/"}); err != nil {
		t.Fatal(err)
	}
	// The directory disappears (a volume unmounted): not ready.
	if err := removeAll(dir + "/sub"); err != nil {
		t.Fatal(err)
	}
	if err := a.Ready(); err == nil {
		t.Error("audit log in a removed directory reported ready")
	}
}

// testTimeout bounds every wait in these tests, so that a bug fails a test
// instead of hanging it. No assertion depends on it.
const testTimeout = 10 * time.Second

func removeAll(dir string) error { return os.RemoveAll(dir) }
