package audit

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"time"
)

// Digests: a digest is a record of its own kind ([KindDigest]) in the
// audit log that attests the chain so far: the hash of the record before
// it (its prev, the chain's head), how many records were written since
// the previous digest and the times of the first and the last of them,
// and the name of the file they were written to, signed with an Ed25519
// key whose JWK thumbprint it names ("keyid"). Someone who changes the
// log without the key cannot make a digest's signature hold for a chain
// that differs from the one it signed. robotsgate writes one before each
// rotation (the last record of the rotated file), every
// [Digests.Every], and when the log is closed; only when records were
// written since the previous one.

// KindDigest is the [Event.Kind] of a digest record.
const KindDigest = "audit-digest"

// Digest reasons: why a digest was written.
const (
	digestInterval = "interval"
	digestRotation = "rotation"
	digestClose    = "close"
)

// Signer signs digests: an Ed25519 private key.
type Signer interface {
	// ID is the key's JWK SHA-256 thumbprint (RFC 7638).
	ID() string
	// Sign returns the Ed25519 signature of msg.
	Sign(msg []byte) []byte
}

// Digests configures digest records ([Auditor.EnableDigests]).
type Digests struct {
	// Every is the interval between digests; 0 writes them only at
	// rotation and at close.
	Every time.Duration
	// Signer signs them; nil writes them unsigned (no keyid, no sig).
	Signer Signer
}

// digestRecord is a digest's fields as they are in its record; the
// signature covers [digestRecord.Message].
type digestRecord struct {
	Time   string `json:"time"`
	Reason string `json:"reason"`
	Seq    uint64 `json:"seq"`
	Prev   string `json:"prev"`
	Count  int64  `json:"count"`
	From   string `json:"from"`
	To     string `json:"to"`
	File   string `json:"file"`
	KeyID  string `json:"keyid"`
	Sig    string `json:"sig"`
}

// Message returns the bytes a digest's signature covers: every field but
// the signature, one per line, after a version line.
func (d *digestRecord) Message() []byte {
	return fmt.Appendf(nil, "robotsgate-audit-digest-v1\ntime=%s\nreason=%s\nseq=%d\nprev=%s\ncount=%d\nfrom=%s\nto=%s\nfile=%s\nkeyid=%s\n",
		d.Time, d.Reason, d.Seq, d.Prev, d.Count, d.From, d.To, d.File, d.KeyID)
}

// EnableDigests makes a write digests as d says. Call it before the
// first Record; the interval's ticker stops at Close.
func (a *Auditor) EnableDigests(d Digests) {
	a.dg = d
	a.digests = true
	if d.Every <= 0 {
		return
	}
	go func() {
		t := time.NewTicker(d.Every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				_ = a.intervalDigest() // a failure is counted and reported by Ready
			case <-a.stop:
				return
			}
		}
	}()
}

// intervalDigest writes a digest now (reason interval) when records were written
// since the previous one. It waits for its turn like Record.
func (a *Auditor) intervalDigest() error {
	if !a.begin() {
		return ErrClosed
	}
	select {
	case a.turn <- struct{}{}:
	case <-a.dead:
		return a.finish(errAuditAbandoned, nil)
	}
	e := &Event{Kind: KindDigest}
	if !a.startWrite(e) {
		<-a.turn
		return a.finish(errAuditAbandoned, nil)
	}
	wrote, err := a.writeDigest(digestInterval)
	<-a.turn
	if !wrote && err == nil {
		e = nil // nothing to attest: nothing written
	}
	return a.finish(err, e)
}

// writeDigest writes a digest record for the records since the last one,
// if any; the caller holds the turn.
func (a *Auditor) writeDigest(reason string) (bool, error) {
	c := &a.ch
	if c.count == 0 {
		return false, nil
	}
	d := digestRecord{
		Time: a.now().UTC().Format(time.RFC3339Nano), Reason: reason, Seq: c.seq + 1, Prev: string(c.prevText),
		Count: c.count, From: c.from.UTC().Format(time.RFC3339Nano), To: c.to.UTC().Format(time.RFC3339Nano), File: a.file,
	}
	if s := a.dg.Signer; s != nil {
		d.KeyID = s.ID()
		d.Sig = base64.RawStdEncoding.EncodeToString(s.Sign(d.Message()))
	}
	ev := a.log.Log().Str("time", d.Time).Str("kind", KindDigest).Str("reason", d.Reason).Int64("count", d.Count).
		Str("from", d.From).Str("to", d.To).Str("file", d.File)
	if d.Sig != "" {
		ev.Str("keyid", d.KeyID).Str("sig", d.Sig)
	}
	ev.Uint64("seq", d.Seq).Str("prev", d.Prev)
	if err := a.send(ev); err != nil {
		return false, err
	}
	c.count = 0
	return true, nil
}

// rotateAhead is how far below the rotation size robotsgate rotates the
// audit file itself, after a digest: room for the digest, so that
// lumberjack does not rotate first.
const rotateAhead = 64 << 10

// maybeRotate rotates a lumberjack audit file that is near its size
// limit, after writing a digest as its last record; the caller holds the
// turn. Without digests, lumberjack rotates on its own.
func (a *Auditor) maybeRotate() {
	if a.lj == nil || !a.digests || a.ew.max <= 0 || a.ew.size < a.ew.max-min(rotateAhead, a.ew.max/4) {
		return
	}
	if _, err := a.writeDigest(digestRotation); err != nil {
		return // the next write tries again
	}
	if err := a.lj.Rotate(); err != nil {
		a.lastErr.Store(&errorBox{fmt.Errorf("audit: rotate: %w", err)})
		return
	}
	a.ew.size = 0
}

// logFile is the name digests give the file of the log w writes to: its
// base name, "-" for standard output.
func logFile(name string) string {
	if name == "" {
		return "-"
	}
	return filepath.Base(name)
}
