package audit

import (
	"io"
	"os"
	"testing"
	"time"
)

func TestAuditorReadyUnwritable(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir+"/sub/jsonl", Rotation{}, io.Discard)
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
	if err := os.RemoveAll(dir + "/sub"); err != nil {
		t.Fatal(err)
	}
	if err := a.Ready(); err == nil {
		t.Error("audit log in a removed directory reported ready")
	}
}

// testTimeout bounds every wait in these tests, so that a bug fails a test
// instead of hanging it. No assertion depends on it.
const testTimeout = 10 * time.Second
