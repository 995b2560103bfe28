package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/robotsgate/robotsgate/proxy/audit/query"
)

// The hash chain: every record carries "seq", its number in the chain
// (1 for the first), and "prev", the SHA-256 (base64, unpadded) of the
// previous record's line exactly as it is in the file, without its
// newline. The first record of a chain has the hash of nothing as prev
// ([genesis]). A record that was changed, removed, reordered or inserted
// breaks the link of the record after it ([Verify] names it). The chain
// continues across rotation (the next file's first record links to the
// last of the previous one) and across restarts: [New] reads the last
// record of the log (of the live file, or of the newest rotated one when
// the live one has none) and links to it. A line that is no record (the
// fragment of a write that failed part-way) is not part of the chain:
// the record after it links to the last record actually in the file.

// genesis is the prev of a chain's first record: the hash of nothing.
var genesis = sha256.Sum256(nil)

// encodeHash returns h as a chain field holds it.
func encodeHash(h [sha256.Size]byte) string { return base64.RawStdEncoding.EncodeToString(h[:]) }

// chain is the state of the hash chain; it is used by the turn holder
// only.
type chain struct {
	prev [sha256.Size]byte // hash of the last record in the log
	seq  uint64            // seq of the last record; 0 before the first
	// prevText is prev encoded, as the next record's "prev" field.
	prevText []byte
	// Since the last digest: how many records, and the times of the
	// first and the last.
	count    int64
	from, to time.Time
}

// link makes the record line (without its newline) the chain's head.
func (c *chain) link(line []byte) { c.linkHash(sha256.Sum256(line)) }

// linkHash makes the record whose line has the hash h the chain's head.
func (c *chain) linkHash(h [sha256.Size]byte) {
	c.prev = h
	c.prevText = base64.RawStdEncoding.AppendEncode(c.prevText[:0], c.prev[:])
}

// counted notes a record (not a digest) of time t since the last digest.
func (c *chain) counted(t time.Time) {
	if c.count == 0 {
		c.from = t
	}
	c.count++
	c.to = t
}

// resumeChain sets c to continue the chain of the log w writes to: after
// its last record, or from the start when it has none or w is no file
// (stdout).
func resumeChain(c *chain, w io.Writer) {
	c.seq = 0
	c.link(nil)
	name := fileName(w)
	if name == "" {
		return
	}
	files, err := query.Files(name)
	if err != nil {
		return
	}
	for i := len(files) - 1; i >= 0; i-- {
		if line := lastRecord(files[i]); line != nil {
			c.link(line)
			c.seq = recordSeq(line)
			return
		}
	}
}

// fileName returns the name of the audit file w writes to, "" when it
// is none.
func fileName(w io.Writer) string {
	switch f := w.(type) {
	case *os.File:
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return f.Name()
		}
	case *lumberjack.Logger:
		return f.Filename
	}
	return ""
}

// recordSeq returns the seq of a record line; 0 for a record written
// before the chain (it has none): the next record starts a chain linked
// to it.
func recordSeq(line []byte) uint64 {
	var f struct {
		Seq uint64 `json:"seq"`
	}
	_ = json.Unmarshal(line, &f)
	return f.Seq
}

// tailWindow is how much of the end of a plain audit file is read for its
// last record; lines are far shorter.
const tailWindow = 8 << 20

// lastRecord returns the last record of the audit file path: its last
// complete line that is a JSON object, a fragment at its end (a crash
// during a write) or a fragment closed by a newline skipped. It returns
// nil when there is none or the file cannot be read.
func lastRecord(path string) []byte {
	if b, ok := tailable(path); ok {
		return lastRecordIn(b)
	}
	r, err := query.Open(path)
	if err != nil {
		return nil
	}
	defer r.Close()
	var last [][]byte // the last lines, newest last
	br := bufio.NewReaderSize(r, 256<<10)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			break // a last line without a newline is a fragment
		}
		last = append(last, bytes.TrimSuffix(line, []byte("\n")))
		if len(last) > 64 {
			last = last[1:]
		}
	}
	return newestRecord(last)
}

// tailable returns the last [tailWindow] bytes of path when it is a plain
// (not gzip) file, through its last newline.
func tailable(path string) ([]byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false
	}
	start := max(fi.Size()-tailWindow, 0)
	b := make([]byte, fi.Size()-start)
	if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
		return nil, false
	}
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b && start == 0 {
		return nil, false // gzip
	}
	return b, true
}

// lastRecordIn returns the last record among the complete lines of b.
func lastRecordIn(b []byte) []byte {
	end := bytes.LastIndexByte(b, '\n')
	if end < 0 {
		return nil
	}
	return newestRecord(bytes.Split(b[:end], []byte("\n")))
}

// newestRecord returns the last of lines that is a JSON object.
func newestRecord(lines [][]byte) []byte {
	for i := len(lines) - 1; i >= 0; i-- {
		if isRecord(lines[i]) {
			return lines[i]
		}
	}
	return nil
}

// isRecord reports whether line is a JSON object, as every record is; a
// fragment is not.
func isRecord(line []byte) bool {
	return len(line) > 1 && line[0] == '{' && json.Valid(line)
}
