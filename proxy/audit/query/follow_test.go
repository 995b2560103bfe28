package query_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/proxy/audit/query"
)

// TestFollow: records appended to the live file are passed on once their
// line is complete (half a line at the end of the file is neither passed
// on nor counted as malformed); after a rotation (rename, new file) the rest of the
// old file and then the new one are read, and after a truncation the
// file from its start; the end of ctx stops it.
func TestFollow(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.log")
	rec := func(u string) string { return `{"reason":"disallowed","url":"` + u + `"}` + "\n" }
	whole := rec("split")
	// The file ends in half a line: Follow reads it with the first read
	// (one small file), while emit for "before" waits on the unbuffered
	// channel, so it is always seen alone at the end of the file first.
	if err := os.WriteFile(p, []byte(rec("before")+`{"reason":"allowed","url":"skipped"}`+"\n"+whole[:20]), 0o600); err != nil {
		t.Fatal(err)
	}
	sc, err := query.NewScanner(query.Filter{Reasons: []string{"disallowed"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string)
	done := make(chan error, 1)
	go func() {
		done <- sc.Follow(ctx, p, 0, time.Millisecond, func(f *query.Fields, _ []byte) error {
			got <- f.URL
			return nil
		})
	}()
	expect := func(want string) {
		t.Helper()
		select {
		case u := <-got:
			if u != want {
				t.Fatalf("followed %q, want %q", u, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%q not followed within 10s", want)
		}
	}
	expect("before")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(whole[20:] + rec("after"))
	expect("split")
	expect("after")
	// Rotation: the old file gets one more line after its rename, then
	// the new file appears at the path.
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	f.WriteString(rec("late in old"))
	f.Close()
	if err := os.WriteFile(p, []byte(rec("new file")), 0o600); err != nil {
		t.Fatal(err)
	}
	expect("late in old")
	expect("new file")
	// copytruncate: the file is emptied in place and written again from
	// its start (a shorter line, so that the size shows the truncation).
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(rec("tr")), 0o600); err != nil {
		t.Fatal(err)
	}
	expect("tr")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not return after its context ended")
	}
	if st := sc.Stats(); st.Malformed != 0 || st.Matched != 6 {
		t.Errorf("stats %+v", st)
	}
}
