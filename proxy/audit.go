package proxy

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
	RobotsStale      bool          // an earlier good copy was used because the latest fetch failed

	Status int    // HTTP status robotsgate answered or saw, when known
	Detail string // free text for what the fields above do not say
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
		Detail:           d.Detail,
	}
}

// Auditor writes audit records as JSON lines (zerolog) to an
// io.WriteCloser. Every Record call writes synchronously, serialised by a
// mutex: a record is on its way to the file when Record returns, and none
// is ever sampled or dropped silently. It is safe for concurrent use.
type Auditor struct {
	mu     sync.Mutex
	w      io.WriteCloser
	ew     errWriter
	log    zerolog.Logger
	closed bool

	written atomic.Uint64
	failed  atomic.Uint64
}

// NewAuditor returns an Auditor writing to w. Close closes w.
func NewAuditor(w io.WriteCloser) *Auditor {
	a := &Auditor{w: w}
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
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		a.failed.Add(1)
		return ErrAuditClosed
	}
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
		}
	}
	if e.Status != 0 {
		ev.Int("status", e.Status)
	}
	str("detail", e.Detail)
	a.ew.err = nil
	ev.Send()
	if err := a.ew.err; err != nil {
		a.failed.Add(1)
		return fmt.Errorf("audit: write: %w", err)
	}
	a.written.Add(1)
	return nil
}

// Written returns the number of records written.
func (a *Auditor) Written() uint64 { return a.written.Load() }

// Failed returns the number of records that could not be written.
func (a *Auditor) Failed() uint64 { return a.failed.Load() }

// Close flushes (fsyncs, when the writer is a file) and closes the
// underlying writer. Later Records fail with ErrAuditClosed. Close is
// idempotent.
func (a *Auditor) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	var errs []error
	if s, ok := a.w.(interface{ Sync() error }); ok {
		if err := s.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("audit: sync: %w", err))
		}
	}
	if err := a.w.Close(); err != nil {
		errs = append(errs, fmt.Errorf("audit: close: %w", err))
	}
	return errors.Join(errs...)
}

// OpenAuditLog opens the audit destination that cfg names: "-" is stdout
// (never closed), anything else a file opened for appending (created with
// mode 0640, its directory too), rotated by lumberjack when
// AuditMaxSizeMB > 0. The file is opened at once so that a bad path is an
// error before robotsgate listens.
func OpenAuditLog(cfg Config, stdout io.Writer) (io.WriteCloser, error) {
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
