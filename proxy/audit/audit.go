// Package audit writes robotsgate's audit log: one JSON line per Event,
// synchronously, never sampled or dropped silently (Auditor), to stdout or
// a file that may be rotated (Open), and reports whether the log can take
// records ([Auditor.Ready]).
package audit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/robotsgate/robotsgate/enforce"
)

// Audit decisions, the value of [Event.Decision].
const (
	DecisionAllowed  = "allowed"  // the request was forwarded
	DecisionBlocked  = "blocked"  // robotsgate answered it itself (403, 429, ...)
	DecisionReported = "reported" // report mode: it would have been blocked, it was forwarded
)

// ErrClosed is returned by [Auditor.Record] after Close.
var ErrClosed = errors.New("audit log closed")

// defaultStall is the default of [Auditor.StallAfter].
const defaultStall = 5 * time.Second

// Auditor writes audit records as JSON lines (zerolog) to an
// [io.WriteCloser]. Every Record call writes synchronously, one at a time:
// a record is on its way to the file when Record returns, and none is
// ever sampled or dropped silently. A destination that stops taking
// writes (a full pipe on stdout, a hung network disk) therefore stalls
// every request that writes a record; Ready reports it once one write has
// been blocked for StallAfter, and CloseContext gives up on it (counting
// the records still waiting as lost) when its context ends. It is safe
// for concurrent use; set the exported fields before the first Record.
type Auditor struct {
	// StallAfter is how long one write may block before Ready reports the
	// audit log as stalled; 0 means [defaultStall].
	StallAfter time.Duration
	// Clock times the writes for Ready; nil means the system clock.
	Clock enforce.Clock

	// turn is a one-slot semaphore: the Record holding it writes. A
	// channel rather than a mutex, so that Records waiting for it can
	// also wait for dead.
	turn chan struct{}
	// dead is closed when CloseContext gave up on a stalled destination:
	// Records still waiting for their turn return at once.
	dead chan struct{}
	w    io.WriteCloser
	ew   errWriter // used by the turn holder only
	log  zerolog.Logger
	ch   chain // the hash chain; used by the turn holder only

	// Digests (digest.go): whether they are written, how, the file they
	// name, the rotated file (nil when not rotated by lumberjack); stop
	// ends their ticker.
	digests bool
	dg      Digests
	file    string
	lj      *lumberjack.Logger
	stop    chan struct{}

	// state is held for bookkeeping only, never across a write.
	state     sync.Mutex
	closed    bool          // Close began: no Record starts
	abandoned bool          // Close gave up: the Records still in flight were counted as lost
	inflight  int           // Records started and not finished
	writing   *Event        // the record being written, if any
	drained   chan struct{} // closed once closed and inflight == 0

	// Read by Ready without waiting for a write:
	isClosed   atomic.Bool
	writeStart atomic.Int64             // Clock time (UnixNano) the write in progress began; 0 when none
	lastErr    atomic.Pointer[errorBox] // the last write's error; nil after a good write

	written atomic.Uint64
	failed  atomic.Uint64 // lost included
	lost    atomic.Uint64
}

// errAuditAbandoned is returned by the Records CloseContext gave up on.
var errAuditAbandoned = errors.New("audit: record not written: the audit log was closed while its destination was stalled")

// errorBox holds an error in an [atomic.Pointer].
type errorBox struct{ err error }

// now returns the Clock's time.
func (a *Auditor) now() time.Time {
	if a.Clock != nil {
		return a.Clock.Now()
	}
	return time.Now()
}

// stalled returns how long the write in progress has been blocked, when
// that is longer than StallAfter.
func (a *Auditor) stalled() (time.Duration, bool) {
	start := a.writeStart.Load()
	if start == 0 {
		return 0, false
	}
	limit := a.StallAfter
	if limit <= 0 {
		limit = defaultStall
	}
	d := a.now().Sub(time.Unix(0, start))
	return d, d >= limit
}

// New returns an Auditor writing to w. Close closes w.
// It continues the hash chain of the log w writes to (chain.go).
func New(w io.WriteCloser) *Auditor {
	a := &Auditor{w: w, turn: make(chan struct{}, 1), dead: make(chan struct{}), drained: make(chan struct{}),
		stop: make(chan struct{})}
	a.ew.w = w
	a.ew.open = endsOpen(w)
	a.log = zerolog.New(&a.ew)
	resumeChain(&a.ch, w)
	a.file = logFile(fileName(w))
	if lj, ok := w.(*lumberjack.Logger); ok {
		a.lj = lj
		a.ew.max = int64(lj.MaxSize) << 20
		if fi, err := os.Stat(lj.Filename); err == nil {
			a.ew.size = fi.Size()
		}
	}
	return a
}

// Record writes e as one JSON line. It returns an error when the line
// could not be written, including after Close; such records are counted
// (Failed).
func (a *Auditor) Record(e Event) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	return a.inTurn(&e, func() (bool, error) { return true, a.encode(e) })
}

// encode writes e as one JSON line; the caller holds the turn.
func (a *Auditor) encode(e Event) error {
	ev := a.log.Log().Str("time", e.Time.UTC().Format(time.RFC3339Nano))
	str := func(k, v string) {
		if v != "" {
			ev.Str(k, v)
		}
	}
	str("kind", e.Kind)
	str("decision", e.Decision)
	str("reason", e.Reason)
	str("mode", e.Mode)
	str("client", e.Client)
	str("user", e.User)
	str("listener", e.Listener)
	str("method", e.Method)
	str("url", e.URL)
	str("origin", e.Origin)
	if e.Kind == "" {
		ev.Str("agent", e.Agent) // always present on decisions: "*" says only the "*" group applied
	}
	str("agent_override_refused", e.AgentOverrideRefused)
	str("group", e.Group)
	str("rule", e.Rule)
	if e.Line > 0 {
		ev.Int("line", e.Line)
	}
	robotsFields(ev, &e)
	documentFields(ev, &e)
	if e.Status != 0 {
		ev.Int("status", e.Status)
	}
	str("detail", e.Detail)
	usageFields(ev, &e)
	paymentFields(ev, &e)
	volumeFields(ev, &e) // (volume.go)
	ev.Uint64("seq", a.ch.seq+1).Bytes("prev", a.ch.prevText)
	if err := a.send(ev); err != nil {
		return err
	}
	a.ch.counted(e.Time)
	a.maybeRotate()
	return nil
}

// send writes the record ev, which carries the chain's next seq and prev,
// as one line, and makes it the chain's head; the caller holds the turn.
func (a *Auditor) send(ev *zerolog.Event) error {
	a.ew.err = nil
	a.writeStart.Store(max(a.now().UnixNano(), 1))
	ev.Send()
	a.writeStart.Store(0)
	if err := a.ew.err; err != nil {
		a.lastErr.Store(&errorBox{err})
		if a.ew.undone {
			return fmt.Errorf("audit: write: %w (record lost; nothing of it is left in the log)", err)
		}
		return fmt.Errorf("audit: write: %w (record lost; its start is left in the log as a line of its own, "+
			"ended before the next record)", err)
	}
	a.lastErr.Store(nil)
	a.ch.seq++
	a.ch.linkHash(a.ew.sum)
	return nil
}

// usageFields writes the fields of e's declared purposes, usage
// preferences, per-site exception, content use and TDMRep, each only
// when set.
func usageFields(ev *zerolog.Event, e *Event) {
	str := func(k, v string) {
		if v != "" {
			ev.Str(k, v)
		}
	}
	if len(e.Purposes) > 0 {
		ev.Strs("purposes", e.Purposes)
	}
	if len(e.UsageDisallowed) > 0 {
		ev.Strs("usage_disallowed", e.UsageDisallowed)
	}
	str("purposes_override_refused", e.PurposesOverrideRefused)
	str("site", e.Site)
	str("site_note", e.SiteNote)
	str("signed_keyid", e.SignedKeyID)
	if len(e.Usage) > 0 {
		ev.Dict("usage", usageDict(e.Usage))
	}
	str("content_use", e.ContentUse)
	if su := e.SiteUse; su != nil {
		ev.Dict("site_use", siteUseDict(su))
	}
	if e.ContentUseDisallowed {
		ev.Bool("content_use_disallowed", true)
	}
	if t := e.TDM; t != nil {
		ev.Dict("tdm", zerolog.Dict().Str("reservation", t.Reservation).Str("source", t.Source).
			Str("rule", t.Rule).Str("policy", t.Policy).Str("file", t.File))
	}
	if l := e.License; l != nil {
		ev.Dict("license", zerolog.Dict().Str("state", l.State).Str("use", l.Use).Str("license", l.License).
			Str("content", l.Content).Str("server", l.Server).Str("token", l.Token).Str("note", l.Note))
	}
}

// robotsFields writes the fields of the robots.txt copy e's decision
// used, if any.
func robotsFields(ev *zerolog.Event, e *Event) {
	if e.RobotsStatus == "" {
		return
	}
	ev.Str("robots_status", e.RobotsStatus)
	if e.RobotsHTTPStatus != 0 {
		ev.Int("robots_http_status", e.RobotsHTTPStatus)
	}
	ev.Float64("robots_age_s", e.RobotsAge.Round(time.Millisecond).Seconds())
	if e.RobotsStale {
		ev.Bool("robots_stale", true)
		if e.RobotsStaleWhy != "" {
			ev.Str("robots_stale_reason", e.RobotsStaleWhy)
		}
	}
}

// documentFields writes the hashes of the policy documents e's decision
// used.
func documentFields(ev *zerolog.Event, e *Event) {
	for _, f := range [...]struct{ k, v string }{
		{"robots_sha256", e.RobotsSHA256}, {"tdmrep_sha256", e.TDMRepSHA256}, {"license_sha256", e.LicenseSHA256},
	} {
		if f.v != "" {
			ev.Str(f.k, f.v)
		}
	}
}

// Written returns the number of records written.
func (a *Auditor) Written() uint64 { return a.written.Load() }

// Failed returns the number of records that could not be written, Lost
// included.
func (a *Auditor) Failed() uint64 { return a.failed.Load() }

// Rotation says when lumberjack rotates an audit file: at MaxSizeMB
// (0: never), keeping MaxBackups files (0: all) for MaxAgeDays (0: no
// limit).
type Rotation struct {
	MaxSizeMB  int
	MaxBackups int
	MaxAgeDays int
}

// Open opens the audit destination path: "-" is stdout (never closed),
// anything else a file opened for appending (created with mode 0640, its
// directory too), rotated by lumberjack when rot.MaxSizeMB > 0. The file
// is opened at once so that a bad path is an error before robotsgate
// listens.
func Open(path string, rot Rotation, stdout io.Writer) (io.WriteCloser, error) {
	if path == "-" {
		return nopCloser{stdout}, nil
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("audit_log: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("audit_log: %w", err)
	}
	if rot.MaxSizeMB <= 0 {
		return f, nil
	}
	f.Close()
	return &lumberjack.Logger{
		Filename:   path,
		MaxSize:    rot.MaxSizeMB,
		MaxBackups: rot.MaxBackups,
		MaxAge:     rot.MaxAgeDays,
	}, nil
}

// nopCloser does not close its writer (stdout), but syncs it if it can.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// Sync syncs the writer when it can; errors (stdout on a pipe or a
// terminal cannot be synced) are ignored.
func (n nopCloser) Sync() error {
	if s, ok := n.Writer.(interface{ Sync() error }); ok {
		_ = s.Sync()
	}
	return nil
}

// usageDict is the "usage" object of an audit record: one object per
// purpose, as /v1/decision and refusal bodies show it.
func usageDict(us []Usage) *zerolog.Event {
	d := zerolog.Dict()
	for _, u := range us {
		d.Dict(u.Purpose, withRule(zerolog.Dict().Str("pref", u.Pref), u.Source, u.Rule, u.Line))
	}
	return d
}

// siteUseDict is the "site_use" object of an audit record, as
// /v1/decision and refusal bodies show it.
func siteUseDict(su *SiteUse) *zerolog.Event {
	return withRule(zerolog.Dict().Str("level", su.Level), su.Source, su.Rule, su.Line)
}

// withRule adds to d where a value came from: its source, rule and line,
// each only when set.
func withRule(d *zerolog.Event, source, rule string, line int) *zerolog.Event {
	if source != "" {
		d.Str("source", source)
	}
	if rule != "" {
		d.Str("rule", rule)
	}
	if line > 0 {
		d.Int("line", line)
	}
	return d
}
