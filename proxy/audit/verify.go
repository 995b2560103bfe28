package audit

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/robotsgate/robotsgate/proxy/audit/query"
)

// Verification: [Verify] reads audit files in order and checks that each
// record links to the one before it (see chain.go) and that every
// digest's signature holds, naming the first record that was changed,
// removed, reordered or inserted, or the file that was truncated.

// Problem kinds: what [Verify] found wrong.
const (
	problemChanged   = "changed"   // a record's bytes differ from those the next record's prev hashed
	problemRemoved   = "removed"   // records are missing (seq jumps), a file's end among them
	problemReordered = "reordered" // a record comes before one it followed
	problemInserted  = "inserted"  // a line that is not of the chain stands in it
	problemTruncated = "truncated" // a file ends inside a record
	problemSignature = "signature" // a digest's signature does not hold
)

// Problem is the first sign of tampering [Verify] found: where, and what.
type Problem struct {
	File   string
	Line   int64
	Kind   string // changed, removed, reordered, inserted, truncated or signature
	Detail string
}

func (p *Problem) String() string {
	return fmt.Sprintf("%s:%d: record %s: %s", p.File, p.Line, p.Kind, p.Detail)
}

// Report is what [Verify] found.
type Report struct {
	Records   int64    // records of the chain, digests included
	Unchained int64    // records written before the chain began (no seq, no prev)
	FirstSeq  uint64   // seq of the chain's first record in the files
	LastSeq   uint64   // and of its last
	Digests   int      // digest records
	Signed    int      // digests whose signature holds
	Unsigned  int      // digests written without a key
	Unchecked int      // signed digests not checked: no key was given
	KeyIDs    []string // the keys whose signatures hold
	Skipped   []string // "file:line" of lines that are no record (fragments of failed writes), skipped
	Restarts  []string // "file:line" where a new chain begins (robotsgate started without its log's last record)
	Problem   *Problem // nil when the files verify
}

// pos is a line of an audit file.
type pos struct {
	file string
	line int64
}

func (p pos) String() string { return fmt.Sprintf("%s:%d", p.file, p.line) }

// verifier is the state of one Verify.
type verifier struct {
	keys     map[string]ed25519.PublicKey
	rep      Report
	started  bool              // a chained record was read
	haveLast bool              // a record was read
	last     [sha256.Size]byte // hash of the last record's line
	lastSeq  uint64
	lastAt   pos
	skipped  []pos // lines that are no record since the last record
	since    int64 // records since the last digest
	counting bool  // since counts every record since the last digest
	// pending is a jump in seq at pendingAt: records removed, unless the
	// next record is the one expected (reordered).
	pending    *Problem
	pendingAt  pos
	pendingSeq uint64
	expect     uint64
}

// chainFields are the fields Verify reads of every record.
type chainFields struct {
	Kind string `json:"kind"`
	Seq  uint64 `json:"seq"`
	Prev string `json:"prev"`
}

// Verify reads the audit files (gzip-compressed or not) in the order
// given, oldest first, and checks their chain and digests: keys holds the
// public keys digests may be signed with, by JWK thumbprint; with none,
// signatures are not checked ([Report.Unchecked]) but unsigned digests are
// accepted; with some, an unsigned digest is a Problem. It returns an
// error only when a file cannot be read.
func Verify(files []string, keys map[string]ed25519.PublicKey) (*Report, error) {
	v := &verifier{keys: keys}
	for _, name := range files {
		if err := v.file(name); err != nil {
			return &v.rep, err
		}
		if v.rep.Problem != nil {
			return &v.rep, nil
		}
	}
	if v.pending != nil {
		v.rep.Problem = v.pending
	}
	return &v.rep, nil
}

// file verifies the lines of the file name.
func (v *verifier) file(name string) error {
	r, err := query.Open(name)
	if err != nil {
		return err
	}
	defer r.Close()
	br := bufio.NewReaderSize(r, 256<<10)
	for n := int64(1); v.rep.Problem == nil; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			complete := line[len(line)-1] == '\n'
			v.line(pos{name, n}, bytes.TrimSuffix(line, []byte("\n")), complete)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("audit file %s: %w", name, err)
		}
	}
	return nil
}

// line verifies one line.
func (v *verifier) line(at pos, line []byte, complete bool) {
	if !complete {
		v.fail(at, problemTruncated, "the file ends inside a record: it was cut off (or a write was cut short by a crash)")
		return
	}
	var f chainFields
	if !isRecord(line) || json.Unmarshal(line, &f) != nil {
		v.skipped = append(v.skipped, at)
		v.rep.Skipped = append(v.rep.Skipped, at.String())
		return
	}
	if f.Seq == 0 {
		if v.started {
			v.fail(at, problemInserted, "a record without chain fields (seq, prev) after the chain began: inserted, or its chain fields removed")
			return
		}
		v.rep.Unchained++
		v.head(at, line, 0)
		return
	}
	if !v.link(at, &f) {
		return
	}
	v.rep.Records++
	v.rep.LastSeq = f.Seq
	if f.Kind == KindDigest {
		v.digest(at, line)
	} else {
		v.since++
	}
	v.head(at, line, f.Seq)
}

// head makes the record line at at the last one read.
func (v *verifier) head(at pos, line []byte, seq uint64) {
	v.haveLast, v.last, v.lastSeq, v.lastAt = true, sha256.Sum256(line), seq, at
	v.skipped = v.skipped[:0]
}

// fail sets the Problem found.
func (v *verifier) fail(at pos, kind, format string, a ...any) {
	v.rep.Problem = &Problem{File: at.file, Line: at.line, Kind: kind, Detail: fmt.Sprintf(format, a...)}
}

// link checks that the chained record f at at follows the last record;
// it returns false when it does not (a Problem is set, or pending).
func (v *verifier) link(at pos, f *chainFields) bool {
	if v.pending != nil {
		if f.Seq == v.expect {
			v.fail(v.pendingAt, problemReordered, "this record (seq %d) comes before the one it follows (%s, seq %d): records were swapped or moved",
				v.pendingSeq, at, f.Seq)
		} else {
			v.rep.Problem = v.pending
		}
		return false
	}
	last := base64.RawStdEncoding.EncodeToString(v.last[:])
	switch {
	case !v.started:
		v.started, v.rep.FirstSeq = true, f.Seq
		v.counting = f.Prev == encodeHash(genesis)
		if v.haveLast && f.Prev != last && !v.counting {
			v.fail(v.lastAt, problemChanged, "the first chained record (%s) does not link to it", at)
			return false
		}
	case f.Seq == 1 && f.Prev == encodeHash(genesis):
		v.rep.Restarts = append(v.rep.Restarts, at.String())
		v.counting, v.since = true, 0
	case f.Seq == v.lastSeq+1 && f.Prev == last:
	case f.Seq == v.lastSeq+1:
		v.fail(v.lastAt, problemChanged, "its bytes are not those the next record (%s) links to (prev)", at)
		return false
	case f.Seq == v.lastSeq+2 && len(v.skipped) > 0:
		v.fail(v.skipped[0], problemChanged, "it is no longer a record (seq %d): the next record (%s) links to what it was", f.Seq-1, at)
		return false
	case f.Seq > v.lastSeq+1:
		v.jump(at, f.Seq)
		return false
	default:
		v.fail(at, problemReordered, "seq %d follows seq %d (%s): records were moved or duplicated", f.Seq, v.lastSeq, v.lastAt)
		return false
	}
	return true
}

// jump notes that the record at at has seq, beyond the one expected:
// records were removed, unless the next record is the one expected.
func (v *verifier) jump(at pos, seq uint64) {
	missing := fmt.Sprintf("seq %d to %d are", v.lastSeq+1, seq-1)
	if seq-1 == v.lastSeq+1 {
		missing = fmt.Sprintf("seq %d is", seq-1)
	}
	detail := fmt.Sprintf("%s missing before this record (the last one before it: %s)", missing, v.lastAt)
	if at.line == 1 && at.file != v.lastAt.file {
		detail = fmt.Sprintf("%s missing: the end of %s was cut off (truncated) or the file before this one is missing", missing, v.lastAt.file)
	}
	v.pending = &Problem{File: at.file, Line: at.line, Kind: problemRemoved, Detail: detail}
	v.pendingAt, v.pendingSeq, v.expect = at, seq, v.lastSeq+1
}

// digest checks the digest record at at: the number of records it
// attests, and its signature.
func (v *verifier) digest(at pos, line []byte) {
	v.rep.Digests++
	var d digestRecord
	if err := json.Unmarshal(line, &d); err != nil {
		v.fail(at, problemChanged, "a digest record that cannot be read: %v", err)
		return
	}
	// A digest counts the records since the previous one its process
	// wrote: after a crash, fewer than the files hold since the last one.
	if v.counting && d.Count > v.since {
		v.fail(at, problemRemoved, "the digest attests %d records since the previous one, only %d are there", d.Count, v.since)
		return
	}
	v.since, v.counting = 0, true
	if d.Sig == "" {
		v.rep.Unsigned++
		if len(v.keys) > 0 {
			v.fail(at, problemSignature, "the digest is unsigned, but keys to check signatures were given")
		}
		return
	}
	if len(v.keys) == 0 {
		v.rep.Unchecked++
		return
	}
	key, ok := v.keys[d.KeyID]
	sig, err := base64.RawStdEncoding.DecodeString(d.Sig)
	switch {
	case !ok:
		v.fail(at, problemSignature, "the digest is signed by key %s, which is not among the keys given", d.KeyID)
	case err != nil || !ed25519.Verify(key, d.Message(), sig):
		v.fail(at, problemSignature, "the digest's signature does not hold (key %s): the digest was changed, or signed by another key", d.KeyID)
	default:
		v.rep.Signed++
		if !slices.Contains(v.rep.KeyIDs, d.KeyID) {
			v.rep.KeyIDs = append(v.rep.KeyIDs, d.KeyID)
		}
	}
}
