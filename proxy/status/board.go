// Package status is the admin listener's live status page: the audit
// records as they are written, fanned out to the open pages without ever
// holding up the audit path (Board), refusals per minute by reason, the
// most refused origins, and the page itself with its embedded assets and
// data endpoints (Handler).
package status

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotsgate/robotsgate/proxy/audit"
)

// Bounds of what a Board keeps: every one of them is reached by a client
// that sends requests to ever new origins, so each is a hard limit.
const (
	// Minutes is how many minutes of refusal counts a Board keeps.
	Minutes = 60
	// maxReasons bounds the reasons counted in one minute; more are
	// counted as "other".
	maxReasons = 64
	// maxOrigins bounds the origins whose refusals are counted; a new one
	// beyond it replaces the least refused (its count carried over, so
	// that an origin refused often still rises to the top).
	maxOrigins = 1024
	// recentItems is how many of the last records a Board keeps for a
	// page that opens.
	recentItems = 50
	// maxSubscribers bounds the event streams open at once.
	maxSubscribers = 16
	// subscriberBuffer is how many records a slow event stream may fall
	// behind before it loses them.
	subscriberBuffer = 256
	// recentBudget bounds the bytes of the last records a Board keeps
	// ([Item.size]): the oldest go first when a new one would exceed it.
	recentBudget = 128 << 10
	// subscriberBudget bounds the bytes of the records an event stream
	// has not sent yet: a stream that would hold more is dropped (it
	// does not read), before it holds them.
	subscriberBudget = 256 << 10
)

// refused reports whether it counts as a refusal: a request's decision
// that was blocked, or would have been (report mode).
func (it *Item) refused() bool {
	return it.Kind == "" && (it.Decision == audit.DecisionBlocked || it.Decision == audit.DecisionReported)
}

// Board receives every audit record (Publish) and keeps what the status
// page shows. Create it with New; it is safe for concurrent use.
type Board struct {
	now func() time.Time

	mu      sync.Mutex
	subs    map[*Subscriber]struct{}
	minutes [Minutes]minute // a ring indexed by the minute number
	origins map[string]int64
	recent  [recentItems]Item // a ring; next is the slot of the next item
	next    int
	kept    int   // items in recent, the newest kept
	keptB   int64 // their bytes (Item.size), at most recentBudget
	seen    int64 // items published: the Seq of the last one
	refused int64 // refusals published

	done      chan struct{}
	closeOnce sync.Once
}

// minute is the refusals of one minute by reason.
type minute struct {
	n  int64 // the minute's number (Unix seconds / 60); 0 when unused
	by map[string]int64
}

// New returns a Board timed by now (nil: [time.Now]).
func New(now func() time.Time) *Board {
	if now == nil {
		now = time.Now
	}
	return &Board{now: now, subs: make(map[*Subscriber]struct{}), origins: make(map[string]int64), done: make(chan struct{})}
}

// Publish counts the record e and hands it to every open stream that has
// room for it. It never blocks on a stream nor does any I/O: a stream
// that is behind loses the record (and is told how many it lost), the
// caller is never held up. A nil Board ignores e.
func (b *Board) Publish(e audit.Event) {
	if b == nil {
		return
	}
	it := itemOf(&e, b.now())
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seen++
	it.Seq = b.seen
	b.keep(it)
	if it.refused() {
		b.refused++
		b.countMinute(&it)
		b.countOrigin(it.Origin)
	}
	size := it.size()
	for s := range b.subs {
		if s.held.Load()+size > subscriberBudget {
			// It does not read: dropped before it holds more.
			delete(b.subs, s)
			close(s.gone)
			continue
		}
		select {
		case s.ch <- it:
			s.held.Add(size)
		default:
			s.dropped.Add(1)
		}
	}
}

// keep keeps it among the recent items, forgetting the oldest ones
// beyond [recentItems] or [recentBudget]; b.mu is held.
func (b *Board) keep(it Item) {
	size := it.size()
	for b.kept > 0 && (b.kept == recentItems || b.keptB+size > recentBudget) {
		old := &b.recent[(b.next-b.kept+recentItems)%recentItems]
		b.keptB -= old.size()
		*old = Item{}
		b.kept--
	}
	b.recent[b.next] = it
	b.next = (b.next + 1) % recentItems
	b.kept++
	b.keptB += size
}

// countMinute counts the refusal it in its minute; b.mu is held.
func (b *Board) countMinute(it *Item) {
	n := it.Time.Unix() / 60
	m := &b.minutes[n%Minutes]
	if m.n != n {
		*m = minute{n: n, by: make(map[string]int64)}
	}
	reason := it.Reason
	if _, ok := m.by[reason]; !ok && len(m.by) >= maxReasons {
		reason = "other"
	}
	m.by[reason]++
}

// countOrigin counts a refusal of origin; b.mu is held.
func (b *Board) countOrigin(origin string) {
	if origin == "" {
		return
	}
	if _, ok := b.origins[origin]; !ok && len(b.origins) >= maxOrigins {
		least, min := "", int64(-1)
		for o, c := range b.origins {
			if min < 0 || c < min {
				least, min = o, c
			}
		}
		delete(b.origins, least)
		b.origins[origin] = min
	}
	b.origins[origin]++
}

// MinuteCounts is the refusals of one minute by reason.
type MinuteCounts struct {
	Minute   time.Time        `json:"minute"`
	ByReason map[string]int64 `json:"by_reason"`
}

// OriginCount is an origin and its refusals.
type OriginCount struct {
	Origin string `json:"origin"`
	Count  int64  `json:"count"`
}

// Snapshot is what a Board holds at one time.
type Snapshot struct {
	Now       time.Time      `json:"now"`
	Seq       int64          `json:"seq"`      // the Seq of the last record published: a stream opened after it misses nothing
	Records   int64          `json:"records"`  // records published since start
	Refusals  int64          `json:"refusals"` // refusals among them
	PerMinute []MinuteCounts `json:"refusals_per_minute"`
	Top       []OriginCount  `json:"top_refused_origins"`
	Recent    []Item         `json:"recent"` // newest last
	// HeldBytes is what the Board holds of records ([Item.size]): the
	// recent ones, and those its event streams have not sent yet.
	HeldBytes int64 `json:"held_bytes"`
}

// Snapshot returns the counts of the last [Minutes] minutes (oldest
// first, every minute present), the top origins by refusals, and the
// last records.
func (b *Board) Snapshot(top int) Snapshot {
	now := b.now().UTC()
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Snapshot{Now: now, Seq: b.seen, Records: b.seen, Refusals: b.refused, HeldBytes: b.keptB}
	for sub := range b.subs {
		s.HeldBytes += sub.held.Load()
	}
	cur := now.Unix() / 60
	for n := cur - Minutes + 1; n <= cur; n++ {
		mc := MinuteCounts{Minute: time.Unix(n*60, 0).UTC(), ByReason: map[string]int64{}}
		if m := &b.minutes[n%Minutes]; m.n == n {
			for r, c := range m.by {
				mc.ByReason[r] = c
			}
		}
		s.PerMinute = append(s.PerMinute, mc)
	}
	for o, c := range b.origins {
		s.Top = append(s.Top, OriginCount{o, c})
	}
	slices.SortFunc(s.Top, func(a, b OriginCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Origin, b.Origin))
	})
	s.Top = s.Top[:min(top, len(s.Top))]
	for i := range recentItems {
		if it := b.recent[(b.next+i)%recentItems]; !it.Time.IsZero() {
			s.Recent = append(s.Recent, it)
		}
	}
	return s
}

// Subscriber is one open event stream: it receives the records published
// after it subscribed, as long as it keeps up.
type Subscriber struct {
	ch      chan Item
	dropped atomic.Int64
	held    atomic.Int64  // bytes of the records in ch (Item.size)
	gone    chan struct{} // closed when the Board dropped the stream
}

// Items is the stream's records; call took for each one received.
func (s *Subscriber) Items() <-chan Item { return s.ch }

// took says that the stream took it from Items: its bytes are no longer
// held for the stream.
func (s *Subscriber) took(it *Item) { s.held.Add(-it.size()) }

// Dropped returns how many records the stream lost since the last call,
// and resets the count.
func (s *Subscriber) Dropped() int64 { return s.dropped.Swap(0) }

// Subscribe opens a stream of the records published from now on; ok is
// false when [maxSubscribers] are open already or the Board is closed.
func (b *Board) Subscribe() (s *Subscriber, ok bool) { return b.subscribe(-1) }

// subscribe opens a stream that starts after the position after (a
// Snapshot's Seq, or the last Seq a stream delivered): the records
// published since then that the Board still holds come first, in order,
// and those it no longer holds are counted as dropped. A negative after
// starts from now; one beyond the last record (a position of an earlier
// process) starts from the first record held.
func (b *Board) subscribe(after int64) (s *Subscriber, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.subs) >= maxSubscribers || b.isClosed() {
		return nil, false
	}
	s = &Subscriber{ch: make(chan Item, subscriberBuffer), gone: make(chan struct{})}
	if after >= 0 {
		if after > b.seen {
			after = 0
		}
		b.replay(s, after)
	}
	b.subs[s] = struct{}{}
	return s, true
}

// replay puts the records after the position after that the ring still
// holds into s, oldest first, and counts the others as dropped; b.mu is
// held.
func (b *Board) replay(s *Subscriber, after int64) {
	sent := int64(0)
	for i := range recentItems {
		it := b.recent[(b.next+i)%recentItems]
		if it.Seq <= after {
			continue
		}
		if s.held.Load()+it.size() > subscriberBudget {
			break
		}
		select {
		case s.ch <- it:
			s.held.Add(it.size())
			sent++
		default:
		}
	}
	s.dropped.Add(b.seen - after - sent)
}

// Unsubscribe closes the stream s.
func (b *Board) Unsubscribe(s *Subscriber) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.subs, s)
}

// Close ends every open stream (their handlers return), so that a
// server's shutdown does not wait for them; no stream opens afterwards.
func (b *Board) Close() {
	if b != nil {
		b.closeOnce.Do(func() { close(b.done) })
	}
}

// Done is closed by Close.
func (b *Board) Done() <-chan struct{} { return b.done }

func (b *Board) isClosed() bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}
