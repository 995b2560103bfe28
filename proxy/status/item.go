package status

import (
	"time"
	"unicode/utf8"

	"github.com/robotsgate/robotsgate/proxy/audit"
)

// Items: an audit record as the page shows it, each of its texts cut to
// a bound (clients choose URLs, agents and details; origins choose rules),
// and its size as a Board counts it against its byte budgets.

// Bounds of an Item's texts; a cut text ends with "...".
const (
	itemURLBytes    = 2 << 10 // url and origin
	itemWordBytes   = 256     // kind, decision, reason, agent, listener, user
	itemRuleBytes   = 512
	itemDetailBytes = 1 << 10
	// itemOverhead is what an Item costs besides its texts.
	itemOverhead = 96
)

// Item is one audit record as the page shows it.
type Item struct {
	// Seq is the record's position: 1 for the first record published,
	// one more for each after it. A stream resumes after a position.
	Seq      int64     `json:"seq"`
	Time     time.Time `json:"time"`
	Kind     string    `json:"kind,omitempty"` // "" for a request's decision, else e.g. "config-reload"
	Decision string    `json:"decision,omitempty"`
	Reason   string    `json:"reason"`
	URL      string    `json:"url,omitempty"`
	Origin   string    `json:"origin,omitempty"`
	Agent    string    `json:"agent,omitempty"`
	Rule     string    `json:"rule,omitempty"`
	Line     int       `json:"line,omitempty"`
	Status   int       `json:"status,omitempty"`
	Listener string    `json:"listener,omitempty"`
	User     string    `json:"user,omitempty"`
	Detail   string    `json:"detail,omitempty"`
}

// itemOf is the Item of e, timed now when e has no time, its texts cut
// to their bounds.
func itemOf(e *audit.Event, now time.Time) Item {
	t := e.Time
	if t.IsZero() {
		t = now
	}
	w := func(s string) string { return cut(s, itemWordBytes) }
	it := Item{Time: t.UTC(), Kind: w(e.Kind), Decision: w(e.Decision), Reason: w(e.Reason),
		URL: cut(e.URL, itemURLBytes), Origin: cut(e.Origin, itemURLBytes), Agent: w(e.Agent),
		Rule: cut(e.Rule, itemRuleBytes), Line: e.Line, Status: e.Status, Listener: w(e.Listener), User: w(e.User)}
	if e.Kind != "" {
		it.Detail = cut(e.Detail, itemDetailBytes)
	}
	return it
}

// size is what it costs a Board: its texts' bytes and a fixed overhead.
func (it *Item) size() int64 {
	return int64(itemOverhead + len(it.Kind) + len(it.Decision) + len(it.Reason) + len(it.URL) + len(it.Origin) +
		len(it.Agent) + len(it.Rule) + len(it.Listener) + len(it.User) + len(it.Detail))
}

// cut returns s cut to n bytes at a character boundary, with "..."
// appended, when it is longer.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
