package audit

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fullDiskChildEnv marks the child process of TestAuditFullTmpfs, which
// runs in its own mount namespace.
const fullDiskChildEnv = "ROBOTSGATE_FULLDISK_CHILD"

// TestAuditFullTmpfs fills a real disk, a 64 KiB tmpfs, between two
// refusals: the record that does not fit is written in part by the
// kernel, then fails with ENOSPC; once space is back the next record
// must be a line of its own. A plain file has the fragment truncated
// away; a rotated one (lumberjack keeps its file to itself) has it ended
// with a newline. The tmpfs is mounted in a child process in its own
// mount namespace (unshare --mount), so nothing outlives the test; it
// needs root and skips without (fails, with ROBOTSGATE_REQUIRE_NETNS set
// as .ci/run does).
func TestAuditFullTmpfs(t *testing.T) {
	if os.Getenv(fullDiskChildEnv) != "" {
		fullDiskChild(t)
		return
	}
	why := ""
	if os.Geteuid() != 0 {
		why = "not root"
	} else if out, err := exec.Command("unshare", "--mount", "true").CombinedOutput(); err != nil {
		why = "unshare --mount fails: " + strings.TrimSpace(string(out))
	}
	if why != "" {
		if os.Getenv("ROBOTSGATE_REQUIRE_NETNS") != "" {
			t.Fatalf("full disk test cannot run: %s (ROBOTSGATE_REQUIRE_NETNS is set)", why)
		}
		t.Skipf("full disk test needs root and unshare: %s", why)
	}
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", os.Args[0],
		"-test.run=^TestAuditFullTmpfs$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), fullDiskChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestAuditFullTmpfs") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// fullDiskChild runs the cases of TestAuditFullTmpfs on a tmpfs.
func fullDiskChild(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rot       Rotation
		malformed int // fragments left as lines of their own
	}{{"plain file: fragment truncated", Rotation{}, 0}, {"rotated file: fragment ended", Rotation{MaxSizeMB: 1}, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
				t.Fatalf("mount tmpfs: %v", err)
			}
			defer syscall.Unmount(dir, syscall.MNT_DETACH)
			path := filepath.Join(dir, "audit.jsonl")
			w, err := Open(path, tc.rot, nil)
			if err != nil {
				t.Fatal(err)
			}
			a := New(w)
			filler := fillDisk(t, filepath.Join(dir, "filler"), 4096) // one page left
			pad := strings.Repeat("x", 900)
			ok, failed := 0, 0
			for i := 0; failed < 2; i++ { // the cut record, then one refused whole
				if err := a.Record(Event{URL: "http://a.test/" + pad, Decision: DecisionBlocked, Reason: "disallowed"}); err != nil {
					if !errors.Is(err, syscall.ENOSPC) {
						t.Fatalf("record %d: %v, want ENOSPC", i, err)
					}
					failed++
					continue
				}
				ok++
			}
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			if err := a.Record(Event{URL: "http://a.test/after", Decision: DecisionBlocked, Reason: "disallowed"}); err != nil {
				t.Fatalf("record once space is back: %v", err)
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			urls := checkLines(t, b)
			if n := strings.Count(strings.Join(urls, " "), "MALFORMED"); n != tc.malformed || len(urls) != ok+1+n ||
				urls[len(urls)-1] != "http://a.test/after" {
				t.Errorf("%d lines, %d malformed, last %q; want %d records, %d malformed, the last whole",
					len(urls), n, urls[len(urls)-1], ok+1, tc.malformed)
			}
			if a.Written() != uint64(ok+1) || a.Failed() != 2 {
				t.Errorf("written %d failed %d, want %d and 2", a.Written(), a.Failed(), ok+1)
			}
		})
	}
}

// fillDisk writes the file name until its disk is full, then frees room
// bytes of it, and returns name.
func fillDisk(t *testing.T, name string, room int64) string {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := io.Copy(f, zeros{})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the disk: %v", err)
	}
	if err := f.Truncate(n - room); err != nil {
		t.Fatal(err)
	}
	return name
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
