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

// Event is one audit record. Hooks other than the robots decision (CONNECT
// tunnels, politeness pauses, robot tags, ...) fill in what applies to
// them and leave the rest zero; zero fields are omitted from the record.
type Event struct {
	// Kind is "" for the decision on a request, [KindConfigReload] for a
	// reload of the configuration (Reason ok or invalid, Method what asked
	// for it, Detail what changed or why it was refused).
	Kind   string
	Time   time.Time // when it happened; zero means now
	Client string    // client address (host:port)
	// User is the proxy user the request authenticated as (the user name
	// of its credentials; inside an MITM session, its CONNECT's); "" when
	// no credentials are required.
	User string
	// Listener is where the request came in: "proxy" (the proxy port)
	// or "transparent" (a redirected connection); "" for records that are
	// not about a request.
	Listener string
	Method   string
	URL      string
	Origin   string
	Agent    string // the product token decided for; "*" when only the "*" group applied
	Group    string // the robots.txt group that applied
	Rule     string // the deciding rule, e.g. "Disallow: /private"
	Line     int    // the rule's line in robots.txt
	Reason   string // the decision's reason, e.g. "disallowed", "robots-unreachable", "tunnel-unenforced"
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
	// not allowed (Config.AllowAgentOverride).
	AgentOverrideRefused string

	// Purposes are the declared purposes the decision was made for (nil
	// for none): "purposes", a list, as in answers.
	Purposes []string
	// Usage is the usage preference of every purpose that has one, and
	// of every declared purpose.
	Usage []Usage
	// UsageDisallowed is the declared purposes whose usage preference
	// refused the request (reason usage-disallowed): "usage_disallowed",
	// a list, as in answers.
	UsageDisallowed []string
	// PurposesOverrideRefused is the purposes header a client sent and
	// robotsgate refused (allow_agent_override is off).
	PurposesOverrideRefused string

	// Site is the operator's per-site exception that applied (its
	// match), SiteNote its note.
	Site     string
	SiteNote string

	// ContentUse is the declared content use ("" for none); [SiteUse] the
	// content-use level the site states for the URL (nil: none);
	// ContentUseDisallowed is set when SiteUse refused the request (reason
	// usage-disallowed).
	ContentUse           string
	SiteUse              *SiteUse
	ContentUseDisallowed bool

	// TDM is the TDMRep verdict of the URL, nil when TDMRep was not
	// consulted.
	TDM *TDM
}

// TDM is a TDMRep verdict in an audit record.
type TDM struct {
	Reservation string // 1, 0, unset or unknown (tdmrep.json unreadable)
	Source      string // tdmrep.json, header, meta; "" when nothing is declared
	Rule        string // the declaration, e.g. the tdmrep.json rule
	Policy      string // the tdm-policy URL, "" when none
	File        string // the tdmrep.json consulted, with its status
}

// SiteUse is a site's content-use level (Content Signals "use=") in an
// audit record.
type SiteUse struct {
	Level  string // immediate, reference or full
	Source string // content-signal, content-signal-header
	Rule   string // the line or header that states it
	Line   int    // its line in robots.txt; 0 for a response's
}

// KindConfigReload is the [Event.Kind] of a configuration reload.
const KindConfigReload = "config-reload"

// Usage is the usage preference for one purpose in an audit record.
type Usage struct {
	Purpose string // train-ai, search, ai-input, ai-use
	Pref    string // allowed, disallowed or unknown
	Source  string // content-usage, content-signal, content-usage-header, content-signal-header, robot-tag; "" when unknown
	Rule    string // the line that states it
	Line    int    // its line in robots.txt; 0 for a response's
}

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
func New(w io.WriteCloser) *Auditor {
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
		return ErrClosed
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
	if e.Status != 0 {
		ev.Int("status", e.Status)
	}
	str("detail", e.Detail)
	usageFields(ev, &e)
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
		v := zerolog.Dict().Str("pref", u.Pref)
		if u.Source != "" {
			v.Str("source", u.Source)
		}
		if u.Rule != "" {
			v.Str("rule", u.Rule)
		}
		if u.Line > 0 {
			v.Int("line", u.Line)
		}
		d.Dict(u.Purpose, v)
	}
	return d
}

// siteUseDict is the "site_use" object of an audit record, as
// /v1/decision and refusal bodies show it.
func siteUseDict(su *SiteUse) *zerolog.Event {
	d := zerolog.Dict().Str("level", su.Level)
	if su.Source != "" {
		d.Str("source", su.Source)
	}
	if su.Rule != "" {
		d.Str("rule", su.Rule)
	}
	if su.Line > 0 {
		d.Int("line", su.Line)
	}
	return d
}
