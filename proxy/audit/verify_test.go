package audit

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/audit/query"
)

// testSigner is an Ed25519 key for digests.
type testSigner struct {
	id   string
	priv ed25519.PrivateKey
}

func newTestSigner(id string, seed byte) testSigner {
	return testSigner{id, ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))}
}

func (s testSigner) ID() string             { return s.id }
func (s testSigner) Sign(msg []byte) []byte { return ed25519.Sign(s.priv, msg) }
func (s testSigner) keys() map[string]ed25519.PublicKey {
	return map[string]ed25519.PublicKey{s.id: s.priv.Public().(ed25519.PublicKey)}
}

// writeLog writes n records to the audit file path (appending, as a
// restarted robotsgate does), with digests signed by s; digestAt lists
// after which records an interval digest is written.
func writeLog(t *testing.T, path string, rot Rotation, s Signer, n int, pad string, digestAt ...int) {
	t.Helper()
	w, err := Open(path, rot, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a := New(w)
	a.EnableDigests(Digests{Signer: s})
	for i := 1; i <= n; i++ {
		e := Event{Time: time.Date(2026, 5, 1, 12, 0, i, 0, time.UTC), URL: fmt.Sprintf("http://a.test/%d/%s", i, pad),
			Reason: "disallowed", Decision: DecisionBlocked}
		if err := a.Record(e); err != nil {
			t.Fatal(err)
		}
		for _, d := range digestAt {
			if d == i {
				if err := a.intervalDigest(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyUntouched: a log rotated by size, its rotated file then
// gzip-compressed, written by three Auditors one after the other (two
// restarts), verifies: one chain, every digest signed.
func TestVerifyUntouched(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	s := newTestSigner("k1", 1)
	pad := strings.Repeat("x", 1000)
	writeLog(t, path, Rotation{MaxSizeMB: 1}, s, 700, pad, 100)
	writeLog(t, path, Rotation{MaxSizeMB: 1}, s, 700, pad) // restart; rotates
	files, err := query.Files(path)
	if err != nil || len(files) != 2 {
		t.Fatalf("files %v, %v: want a rotated file and the live one", files, err)
	}
	if b, err := os.ReadFile(files[0]); err != nil || !strings.Contains(lastLine(b), `"reason":"rotation"`) {
		t.Fatalf("the rotated file does not end with its digest: %q %v", lastLine(b), err)
	}
	gzipFile(t, files[0])
	writeLog(t, path, Rotation{MaxSizeMB: 1}, s, 10, "") // restart after the rotated file was compressed
	if files, err = query.Files(path); err != nil || !strings.HasSuffix(files[0], ".gz") {
		t.Fatalf("files %v, %v", files, err)
	}
	rep, err := Verify(files, s.keys())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Problem != nil {
		t.Fatalf("untouched log: %s", rep.Problem)
	}
	// Digests: the interval one, three closes, one rotation.
	if rep.Records != 1410+5 || rep.Digests != 5 || rep.Signed != 5 || rep.FirstSeq != 1 || rep.LastSeq != 1415 {
		t.Errorf("report %+v", rep)
	}
	if len(rep.Restarts) != 0 || len(rep.Skipped) != 0 || rep.Unchained != 0 {
		t.Errorf("restarts %v skipped %v unchained %d", rep.Restarts, rep.Skipped, rep.Unchained)
	}
}

// TestChainResumesFromRotatedGzip: robotsgate starts with an empty live
// file, its log's last record in a rotated, compressed file: the chain
// continues from that record.
func TestChainResumesFromRotatedGzip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	writeLog(t, path, Rotation{}, nil, 5, "")
	rotated := filepath.Join(dir, "audit-2026-05-01T12-00-00.000.jsonl")
	if err := os.Rename(path, rotated); err != nil {
		t.Fatal(err)
	}
	gzipFile(t, rotated)
	if err := os.WriteFile(path, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	writeLog(t, path, Rotation{MaxSizeMB: 1}, nil, 5, "")
	files, err := query.Files(path)
	if err != nil || len(files) != 2 {
		t.Fatalf("files %v %v", files, err)
	}
	rep, err := Verify(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Problem != nil || rep.Records != 12 || len(rep.Restarts) != 0 || rep.Unsigned != 2 {
		t.Fatalf("report %+v (problem %v)", rep, rep.Problem)
	}
}

// gzipFile compresses path to path.gz and removes path.
func gzipFile(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".gz", testsupport.Gzip(b), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyNamesTampering changes an untouched log (10 records, a
// digest, 10 records, the closing digest: 22 lines) as someone with
// write access could, and checks that Verify names what and where.
func TestVerifyNamesTampering(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	s := newTestSigner("k1", 1)
	writeLog(t, path, Rotation{}, s, 20, "", 10)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(orig), "\n")
	lines = lines[:len(lines)-1] // after the last newline
	if len(lines) != 22 || !strings.Contains(lines[10], KindDigest) || !strings.Contains(lines[21], KindDigest) {
		t.Fatalf("log: %d lines\n%s", len(lines), orig)
	}
	for _, tc := range tamperings(orig, lines, s) {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "audit.jsonl")
			if err := os.WriteFile(p, []byte(tc.log), 0o640); err != nil {
				t.Fatal(err)
			}
			rep, err := Verify([]string{p}, tc.keys)
			if err != nil {
				t.Fatal(err)
			}
			if pr := rep.Problem; pr == nil || pr.Kind != tc.kind || pr.Line != tc.line || pr.File != p {
				t.Fatalf("problem %v, want %s at line %d", pr, tc.kind, tc.line)
			}
		})
	}
	t.Run("untouched", func(t *testing.T) {
		rep, err := Verify([]string{path}, s.keys())
		if err != nil || rep.Problem != nil || rep.Signed != 2 || rep.Records != 22 {
			t.Fatalf("%+v %v", rep, err)
		}
	})
}

// tampering is a change to an untouched log, and the Problem Verify must
// find with keys: its kind and line.
type tampering struct {
	name string
	log  string
	keys map[string]ed25519.PublicKey
	kind string
	line int64
}

// tamperings returns the changes TestVerifyNamesTampering makes to the
// log orig (its lines, newlines included) signed by s.
func tamperings(orig []byte, lines []string, s testSigner) []tampering {
	edit := func(f func(l []string) []string) string {
		return strings.Join(f(append([]string(nil), lines...)), "")
	}
	return []tampering{
		{"edit one byte", edit(func(l []string) []string { l[4] = strings.Replace(l[4], "a.test/5", "a.test/6", 1); return l }),
			s.keys(), problemChanged, 5},
		{"edit one byte so that it is no record", edit(func(l []string) []string { l[4] = strings.Replace(l[4], "{", "[", 1); return l }),
			s.keys(), problemChanged, 5},
		{"delete a line", edit(func(l []string) []string { return append(l[:4], l[5:]...) }), s.keys(), problemRemoved, 5},
		{"delete the last records", edit(func(l []string) []string { return append(l[:15], l[21]) }), s.keys(), problemRemoved, 16},
		{"truncate the file", string(orig[:len(orig)-len(lines[21])-30]), s.keys(), problemTruncated, 21},
		{"swap two lines", edit(func(l []string) []string { l[4], l[5] = l[5], l[4]; return l }), s.keys(), problemReordered, 5},
		{"duplicate a line", edit(func(l []string) []string { return append(l[:5], append([]string{l[2]}, l[5:]...)...) }),
			s.keys(), problemReordered, 6},
		{"insert an unchained record", edit(func(l []string) []string {
			return append(l[:3], append([]string{`{"time":"2026-05-01T12:00:00Z","url":"http://a.test/x"}` + "\n"}, l[3:]...)...)
		}), s.keys(), problemInserted, 4},
		{"bad digest signature", edit(func(l []string) []string {
			i := strings.Index(l[10], `"sig":"`) + len(`"sig":"`)
			c := byte('A')
			if l[10][i] == 'A' {
				c = 'B'
			}
			l[10] = l[10][:i] + string(c) + l[10][i+1:]
			return l
		}), s.keys(), problemSignature, 11},
		{"digest signed by another key", string(orig), newTestSigner("k2", 2).keys(), problemSignature, 11},
	}
}

// TestVerifyRotatedFileCutOff: the last records of a rotated file were
// removed; the next file's first record names them.
func TestVerifyRotatedFileCutOff(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	writeLog(t, path, Rotation{}, nil, 10, "")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	a, c := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	os.WriteFile(a, []byte(strings.Join(lines[:4], "")), 0o640) // records 5 and 6 cut off
	os.WriteFile(c, []byte(strings.Join(lines[6:], "")), 0o640)
	rep, err := Verify([]string{a, c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pr := rep.Problem; pr == nil || pr.Kind != problemRemoved || pr.File != c || pr.Line != 1 || !strings.Contains(pr.Detail, "a.jsonl") {
		t.Fatalf("problem %v", pr)
	}
}

// TestChainSkipsLostRecord: a record whose write failed part-way on a
// destination that cannot be truncated leaves a fragment, closed by a
// newline; the next record links to the last record actually written,
// and a fragment left by a crash at the end of the file is skipped by a
// restarted Auditor the same way. Both fragments are reported, not
// taken for tampering.
func TestChainSkipsLostRecord(t *testing.T) {
	fp := &fullPipe{}
	fp.disk = &fullDisk{w: &fp.buf, room: -1}
	a := New(fp)
	a.EnableDigests(Digests{})
	rec := func(u string) error { return a.Record(Event{URL: u, Decision: DecisionBlocked}) }
	if err := rec("http://a.test/1"); err != nil {
		t.Fatal(err)
	}
	fp.disk.room = 30
	if err := rec("http://a.test/lost"); err == nil {
		t.Fatal("write on a full disk succeeded")
	}
	fp.disk.room = -1
	if err := rec("http://a.test/2"); err != nil {
		t.Fatal(err)
	}
	a.Close()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	crash := `{"time":"2026-05-01T12:00:00Z","url":"http://a.test/cra`
	if err := os.WriteFile(path, append(fp.buf.Bytes(), crash...), 0o640); err != nil {
		t.Fatal(err)
	}
	writeLog(t, path, Rotation{}, nil, 2, "")
	rep, err := Verify([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Problem != nil || rep.Records != 6 || len(rep.Skipped) != 2 || len(rep.Restarts) != 0 {
		t.Fatalf("report %+v (problem %v)", rep, rep.Problem)
	}
}

// lastLine returns the last line of b, without its newline.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	return lines[len(lines)-1]
}

// TestVerifyAfterCrash: robotsgate stops without its closing digest (a
// crash) after an interval digest and three more records; the next
// run's digest counts only its own records. The log verifies.
func TestVerifyAfterCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := Open(path, Rotation{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	a := New(w)
	a.EnableDigests(Digests{})
	for i, u := range []string{"1", "2", "digest", "3", "4", "5"} {
		if u == "digest" {
			err = a.intervalDigest()
		} else {
			err = a.Record(Event{URL: "http://a.test/" + u, Decision: DecisionBlocked})
		}
		if err != nil {
			t.Fatal(i, err)
		}
	}
	// No Close: the process died.
	writeLog(t, path, Rotation{}, nil, 2, "")
	rep, err := Verify([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Problem != nil || rep.Records != 9 || rep.Digests != 2 {
		t.Fatalf("report %+v (problem %v)", rep, rep.Problem)
	}
}
