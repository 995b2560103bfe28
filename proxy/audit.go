package proxy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
)

// Audit decisions, the value of Event.Decision.
const (
	DecisionAllowed  = "allowed"  // the request was forwarded
	DecisionBlocked  = "blocked"  // robotsgate answered it itself (403, 429, ...)
	DecisionReported = "reported" // report mode: it would have been blocked, it was forwarded
)

// ErrAuditClosed is returned by Auditor.Record after Close.
var ErrAuditClosed = errors.New("audit log closed")

// Event is one audit record. Hooks other than the robots decision (CONNECT
// tunnels, politeness pauses, robot tags, ...) fill in what applies to
// them and leave the rest zero; zero fields are omitted from the record.
type Event struct {
	Time     time.Time // when it happened; zero means now
	Client   string    // client address (host:port)
	Method   string
	URL      string
	Origin   string
	Agent    string // the product token decided for; "" means only "*" applied
	Group    string // the robots.txt group that applied
	Rule     string // the deciding rule, e.g. "Disallow: /private"
	Line     int    // the rule's line in robots.txt
	Reason   string // an enforce.Reason, e.g. "disallowed", "robots-unreachable", "tunnel-unenforced"
	Decision string // DecisionAllowed, DecisionBlocked or DecisionReported
	Mode     string // enforce | report

	RobotsStatus     string        // ok | unavailable | unreachable; "" when robots.txt was not consulted
	RobotsHTTPStatus int           // HTTP status of the robots.txt fetch
	RobotsAge        time.Duration // age of the robots.txt copy in force
	RobotsStale      bool          // the copy used was not fresh
	RobotsStaleWhy   string        // why: an enforce.StaleReason ("revalidating", "unreachable", ...)

	Status int    // HTTP status robotsgate answered or saw, when known
	Detail string // free text for what the fields above do not say

	// AgentOverrideRefused is the agent override header a client sent and
	// robotsgate refused, because an agent is configured and overrides are
	// not allowed (config.Config.AllowAgentOverride).
	AgentOverrideRefused string
}

// EventFromDecision returns the Event describing d for a request from
// client. Decision and Mode are left for the caller.
func EventFromDecision(client, method string, d enforce.Decision) Event {
	return Event{
		Client:           client,
		Method:           method,
		URL:              d.URL,
		Origin:           d.Origin,
		Agent:            d.Agent,
		Group:            d.Group,
		Rule:             d.Rule,
		Line:             d.Line,
		Reason:           string(d.Reason),
		RobotsStatus:     string(d.RobotsStatus),
		RobotsHTTPStatus: d.RobotsHTTPStatus,
		RobotsAge:        d.RobotsAge,
		RobotsStale:      d.RobotsStale,
		RobotsStaleWhy:   string(d.RobotsStaleReason),
		Detail:           d.Detail,
	}
}

// DefaultAuditStall is the default of Auditor.StallAfter.
const DefaultAuditStall = 5 * time.Second

// Auditor writes audit records as JSON lines (zerolog) to an
// io.WriteCloser. Every Record call writes synchronously, one at a time:
// a record is on its way to the file when Record returns, and none is
// ever sampled or dropped silently. A destination that stops taking
// writes (a full pipe on stdout, a hung network disk) therefore stalls
// every request that writes a record; Ready reports it once one write has
// been blocked for StallAfter, and CloseContext gives up on it (counting
// the records still waiting as lost) when its context ends. It is safe
// for concurrent use; set the exported fields before the first Record.
type Auditor struct {
	// StallAfter is how long one write may block before Ready reports the
	// audit log as stalled; 0 means DefaultAuditStall.
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

// errorBox holds an error in an atomic.Pointer.
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
		limit = DefaultAuditStall
	}
	d := a.now().Sub(time.Unix(0, start))
	return d, d >= limit
}

// NewAuditor returns an Auditor writing to w. Close closes w.
func NewAuditor(w io.WriteCloser) *Auditor {
	a := &Auditor{w: w, turn: make(chan struct{}, 1), dead: make(chan struct{}), drained: make(chan struct{})}
	a.ew.w = w
	a.log = zerolog.New(&a.ew)
	return a
}

// errWriter remembers the error of the last Write so that Record can
// return it (zerolog itself only reports write errors to a global hook).
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	e.err = err
	return n, err
}

// Record writes e as one JSON line. It returns an error when the line
// could not be written, including after Close; such records are counted
// (Failed).
func (a *Auditor) Record(e Event) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	if !a.begin() {
		return ErrAuditClosed
	}
	select {
	case a.turn <- struct{}{}:
	case <-a.dead:
		return a.finish(errAuditAbandoned, nil)
	}
	if !a.startWrite(&e) { // both were ready and the turn won
		<-a.turn
		return a.finish(errAuditAbandoned, nil)
	}
	err := a.encode(e)
	<-a.turn
	return a.finish(err, &e)
}

// encode writes e as one JSON line; the caller holds the turn.
func (a *Auditor) encode(e Event) error {
	ev := a.log.Log().Str("time", e.Time.UTC().Format(time.RFC3339Nano))
	str := func(k, v string) {
		if v != "" {
			ev.Str(k, v)
		}
	}
	str("decision", e.Decision)
	str("reason", e.Reason)
	str("mode", e.Mode)
	str("client", e.Client)
	str("method", e.Method)
	str("url", e.URL)
	str("origin", e.Origin)
	ev.Str("agent", e.Agent) // always present: "" says only "*" applied
	str("agent_override_refused", e.AgentOverrideRefused)
	str("group", e.Group)
	str("rule", e.Rule)
	if e.Line > 0 {
		ev.Int("line", e.Line)
	}
	if e.RobotsStatus != "" {
		ev.Str("robots_status", e.RobotsStatus)
		if e.RobotsHTTPStatus != 0 {
			ev.Int("robots_http_status", e.RobotsHTTPStatus)
		}
		ev.Float64("robots_age_s", e.RobotsAge.Round(time.Millisecond).Seconds())
		if e.RobotsStale {
			ev.Bool("robots_stale", true)
			str("robots_stale_reason", e.RobotsStaleWhy)
		}
	}
	if e.Status != 0 {
		ev.Int("status", e.Status)
	}
	str("detail", e.Detail)
	a.ew.err = nil
	a.writeStart.Store(max(a.now().UnixNano(), 1))
	ev.Send()
	a.writeStart.Store(0)
	if err := a.ew.err; err != nil {
		a.lastErr.Store(&errorBox{err})
		return fmt.Errorf("audit: write: %w", err)
	}
	a.lastErr.Store(nil)
	return nil
}

// stallError says so when the write in progress has been blocked for
// StallAfter or longer (see Ready).
func (a *Auditor) stallError() error {
	d, ok := a.stalled()
	if !ok {
		return nil
	}
	return fmt.Errorf("audit log: a write has been blocked for %v (a destination that stopped reading: "+
		"a full pipe on stdout, a hung disk); requests that write audit records are waiting for it", d.Round(time.Millisecond))
}

// fileReady checks that the audit file f is still in place under its name
// (not moved, deleted or replaced) and can be opened for appending; it
// never creates it.
func fileReady(f *os.File) error {
	name := f.Name()
	ours, err := f.Stat()
	if err != nil {
		return fmt.Errorf("audit log %s: %w", name, err)
	}
	now, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("audit log %s was moved or deleted: records still go to the old file; restart robotsgate "+
			"(or set audit_max_size_mb to let robotsgate rotate it)", name)
	}
	if err != nil {
		return fmt.Errorf("audit log %s: %w", name, err)
	}
	if !os.SameFile(ours, now) {
		return fmt.Errorf("audit log %s was replaced by another file: records still go to the old one; restart robotsgate "+
			"(or set audit_max_size_mb to let robotsgate rotate it)", name)
	}
	if !now.Mode().IsRegular() {
		return nil // a device or FIFO: opening it could block
	}
	return appendable(name)
}

// rotatedReady checks the audit file of a lumberjack.Logger. Lumberjack
// opens its file itself and renames it when it rotates, so there is no
// open file to compare with: the file under name must exist and be
// writable. A rotation renames the file and creates the next one inside
// a write, holding the turn; a missing file is only reported when it is still
// missing with no write in progress, so that a rotation never makes
// /readyz flap. If the file was deleted outside robotsgate, lumberjack
// writes into the deleted file until its next rotation.
func (a *Auditor) rotatedReady(name string) error {
	err := appendable(name)
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	select {
	case a.turn <- struct{}{}:
	default:
		return nil // a write, maybe a rotation, is in progress; a stall is reported by stallError
	}
	defer func() { <-a.turn }()
	if a.isClosed.Load() {
		return ErrAuditClosed
	}
	if err := appendable(name); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("audit log %s was moved or deleted: records go to the old file until the next rotation; restart robotsgate", name)
	} else if err != nil {
		return err
	}
	return nil
}

// appendable checks that the existing file name can be opened for
// appending, without creating it.
func appendable(name string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err != nil {
		return fmt.Errorf("audit log not writable: %w", err)
	}
	return f.Close()
}

// Written returns the number of records written.
func (a *Auditor) Written() uint64 { return a.written.Load() }

// Failed returns the number of records that could not be written, Lost
// included.
func (a *Auditor) Failed() uint64 { return a.failed.Load() }

// OpenAuditLog opens the audit destination that cfg names: "-" is stdout
// (never closed), anything else a file opened for appending (created with
// mode 0640, its directory too), rotated by lumberjack when
// AuditMaxSizeMB > 0. The file is opened at once so that a bad path is an
// error before robotsgate listens.
func OpenAuditLog(cfg config.Config, stdout io.Writer) (io.WriteCloser, error) {
	if cfg.AuditLog == "-" {
		return nopCloser{stdout}, nil
	}
	if dir := filepath.Dir(cfg.AuditLog); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("audit_log: %w", err)
		}
	}
	f, err := os.OpenFile(cfg.AuditLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("audit_log: %w", err)
	}
	if cfg.AuditMaxSizeMB <= 0 {
		return f, nil
	}
	f.Close()
	return &lumberjack.Logger{
		Filename:   cfg.AuditLog,
		MaxSize:    cfg.AuditMaxSizeMB,
		MaxBackups: cfg.AuditMaxBackups,
		MaxAge:     cfg.AuditMaxAgeDays,
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
