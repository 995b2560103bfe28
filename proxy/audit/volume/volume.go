// Package volume is the crawl report's aggregator: it counts, per origin
// and identity, the requests robotsgate answered (by status class, with
// their bytes), its refusals (by reason) and the opt-outs its audited
// decisions saw, and writes the counts of each interval as compact
// audit records of kind [audit.KindVolume] (Flush, Run), one per origin
// and identity, instead of one per request. Memory is bounded: beyond
// MaxOrigins keys in an interval, observations fold into one overflow
// record without an origin.
package volume

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// Recorder takes audit records: the [audit.Auditor].
type Recorder interface {
	Record(e audit.Event) error
}

// Observation is one request's answer, as the response side saw it.
type Observation struct {
	Origin string // the request's origin ("https://example.com")
	User   string // the proxy user, "" when none
	Status int    // the status sent to the client
	Bytes  int64  // response body bytes sent to the client
}

// key is what a volume record is about.
type key struct{ origin, user string }

// statusClasses name the status classes, indexed by [classOf].
var statusClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx", "other"}

// classOf is the index in [statusClasses] of status.
func classOf(status int) int {
	if status < 100 || status > 599 {
		return len(statusClasses) - 1
	}
	return status/100 - 1
}

// counts are one key's counts in the interval.
type counts struct {
	requests, bytes int64
	status, sbytes  [len(statusClasses)]int64
	refused         map[string]int64
	optOuts         map[string]int64
}

// Aggregator counts observations and decisions per origin and identity.
// It is safe for concurrent use.
type Aggregator struct {
	rec   Recorder
	clock enforce.Clock
	max   int

	mu     sync.Mutex
	since  time.Time
	byKey  map[key]*counts
	other  counts
	folded map[key]struct{} // the keys folded into other, at most max
	total  int64            // folded keys beyond those of folded
}

// New returns an Aggregator writing to rec, timed by clock (nil: the
// system clock), keeping at most maxOrigins keys per interval (at least
// 1).
func New(rec Recorder, clock enforce.Clock, maxOrigins int) *Aggregator {
	if clock == nil {
		clock = enforce.SystemClock{}
	}
	a := &Aggregator{rec: rec, clock: clock, max: max(maxOrigins, 1)}
	a.reset(clock.Now())
	return a
}

// reset starts an interval at since; the caller holds mu (or owns a).
func (a *Aggregator) reset(since time.Time) {
	a.since, a.byKey, a.other, a.folded, a.total = since, map[key]*counts{}, counts{}, map[key]struct{}{}, 0
}

// at returns the counts of k, or those of the overflow bucket once the
// interval holds max keys; the caller holds mu.
func (a *Aggregator) at(k key) *counts {
	if c := a.byKey[k]; c != nil {
		return c
	}
	if len(a.byKey) < a.max {
		c := &counts{}
		a.byKey[k] = c
		return c
	}
	if _, seen := a.folded[k]; !seen {
		if len(a.folded) < a.max {
			a.folded[k] = struct{}{}
		} else {
			a.total++ // beyond the bound, keys are counted once per observation
		}
	}
	return &a.other
}

// Add counts o, a request's answer. A nil Aggregator does nothing.
func (a *Aggregator) Add(o Observation) {
	if a == nil {
		return
	}
	i := classOf(o.Status)
	a.mu.Lock()
	c := a.at(key{o.Origin, o.User})
	c.requests++
	c.bytes += o.Bytes
	c.status[i]++
	c.sbytes[i] += o.Bytes
	a.mu.Unlock()
}

// Note counts the refusal and the opt-outs of e, an audited decision on
// a request; other records are ignored. A refused CONNECT, which never
// reaches the response side, also counts as a request answered with
// e.Status. A nil Aggregator does nothing.
func (a *Aggregator) Note(e *audit.Event) {
	if a == nil || e.Kind != "" || e.Origin == "" {
		return
	}
	refused := e.Decision == audit.DecisionBlocked
	if !refused && !eachOptOut(e, nil) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.at(key{e.Origin, e.User})
	if refused {
		bump(&c.refused, e.Reason)
		if e.Method == http.MethodConnect {
			c.requests++
			c.status[classOf(e.Status)]++
		}
	}
	eachOptOut(e, func(o string) { bump(&c.optOuts, o) })
}

// bump adds one to (*m)[k], making the map when needed.
func bump(m *map[string]int64, k string) {
	if *m == nil {
		*m = map[string]int64{}
	}
	(*m)[k]++
}

// eachOptOut calls f (when not nil) with each opt-out e's decision saw,
// and reports whether there was one. It builds no list: most decisions
// see one opt-out or none.
func eachOptOut(e *audit.Event, f func(string)) bool {
	seen := false
	see := func(o string) {
		seen = true
		if f != nil {
			f(o)
		}
	}
	if e.Reason == "disallowed" || e.Reason == "site-exception" {
		see("robots:disallow")
	}
	for _, u := range e.Usage {
		if u.Pref == "disallowed" {
			see("usage:" + u.Purpose)
		}
	}
	if e.ContentUseDisallowed && e.SiteUse != nil {
		see("content-use:" + e.SiteUse.Level)
	}
	if e.TDM != nil && e.TDM.Reservation == "1" {
		see("tdm:reserved")
	}
	if l := e.License; l != nil && (l.State == "prohibited" || l.State == "required") {
		see("license:" + strings.TrimSuffix(l.State+":"+l.Use, ":"))
	}
	return seen
}

// Flush writes the interval's records, ending it now: one per key, in
// origin and user order, then the overflow bucket, if any. It returns
// the errors of records that could not be written (the Recorder counts
// them too).
func (a *Aggregator) Flush() error {
	if a == nil {
		return nil
	}
	now := a.clock.Now()
	a.mu.Lock()
	since, byKey, other, folded := a.since, a.byKey, a.other, int64(len(a.folded))+a.total
	a.reset(now)
	a.mu.Unlock()
	keys := make([]key, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y key) int {
		return cmpOr(strings.Compare(x.origin, y.origin), strings.Compare(x.user, y.user))
	})
	var errs []error
	for _, k := range keys {
		errs = append(errs, a.rec.Record(event(now, since, k, byKey[k])))
	}
	if folded > 0 {
		e := event(now, since, key{}, &other)
		e.Volume.Origins = folded
		errs = append(errs, a.rec.Record(e))
	}
	return errors.Join(errs...)
}

// cmpOr returns the first non-zero comparison.
func cmpOr(c ...int) int {
	for _, v := range c {
		if v != 0 {
			return v
		}
	}
	return 0
}

// event is the volume record of c, about k, for the interval since..now.
func event(now, since time.Time, k key, c *counts) audit.Event {
	v := &audit.Volume{Since: since, Requests: c.requests, Bytes: c.bytes, Refused: c.refused, OptOuts: c.optOuts}
	for i, n := range c.status {
		if n > 0 {
			if v.Status == nil {
				v.Status, v.StatusBytes = map[string]int64{}, map[string]int64{}
			}
			v.Status[statusClasses[i]] = n
			if c.sbytes[i] > 0 {
				v.StatusBytes[statusClasses[i]] = c.sbytes[i]
			}
		}
	}
	return audit.Event{Kind: audit.KindVolume, Time: now, Origin: k.origin, User: k.user, Volume: v}
}

// Run flushes at every tick until ctx ends, then flushes once more and
// returns. Errors go to failed (nil: dropped; the Recorder counts them).
func (a *Aggregator) Run(ctx context.Context, ticks <-chan time.Time, failed func(error)) {
	report := func(err error) {
		if err != nil && failed != nil {
			failed(err)
		}
	}
	for {
		select {
		case <-ticks:
			report(a.Flush())
		case <-ctx.Done():
			report(a.Flush())
			return
		}
	}
}
