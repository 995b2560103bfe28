package payment

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
)

// maxMemoryQuotes bounds the quoting origins a [MemoryWallet] remembers.
const maxMemoryQuotes = 1 << 16

// MemoryWallet is the Wallet of one replica (no Redis): budgets hold
// for the requests of this process only. One mutex orders every
// operation, so Reserve's check and hold are atomic.
type MemoryWallet struct {
	clock enforce.Clock
	ttl   time.Duration

	mu       sync.Mutex
	counters map[string]*memCounter // by Counter.ID
	ended    map[string]time.Time   // settled or released reservations, kept until expiry
	released map[string]bool        // those of ended a Release ended: a later Settle still counts
	quotes   map[string]memQuote
	pruned   time.Time // last prune
}

// memPruneEvery is how often Reserve drops old counters and ended
// reservations.
const memPruneEvery = time.Minute

// memCounter is one counter's totals.
type memCounter struct {
	end   time.Time             // the period's end
	spent int64                 // micro-units settled
	held  map[string]memHolding // live reservations by ID
}

// memHolding is a reservation's amount and expiry.
type memHolding struct {
	units   int64
	expires time.Time
}

// memQuote is a remembered quote.
type memQuote struct {
	price Amount
	until time.Time
}

// NewMemoryWallet returns an empty [MemoryWallet] reading time from clock
// (nil: the system clock); reservations expire after ttl (<= 0:
// [DefaultReservationTTL]).
func NewMemoryWallet(clock enforce.Clock, ttl time.Duration) *MemoryWallet {
	if clock == nil {
		clock = enforce.SystemClock{}
	}
	if ttl <= 0 {
		ttl = DefaultReservationTTL
	}
	return &MemoryWallet{clock: clock, ttl: ttl, counters: map[string]*memCounter{},
		ended: map[string]time.Time{}, released: map[string]bool{}, quotes: map[string]memQuote{}}
}

// Reserve implements Wallet.
func (w *MemoryWallet) Reserve(ctx context.Context, req Request) (Reservation, error) {
	if err := ctx.Err(); err != nil {
		return Reservation{}, err
	}
	if err := CheckCap(req); err != nil {
		return Reservation{}, err
	}
	now := w.clock.Now()
	res := Reservation{ID: NewReservationID(), Request: req, At: now, Expires: now.Add(w.ttl),
		Counters: Counters(req.Policy.Budgets, req.Identity, req.Origin, req.Amount.Currency, now)}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.prune(now)
	for _, c := range res.Counters {
		mc := w.counter(c)
		if mc.spent+mc.reserved(now)+req.Amount.Units > c.Budget.Limit.Units {
			return Reservation{}, &BudgetError{Counter: c}
		}
	}
	for _, c := range res.Counters {
		w.counter(c).held[res.ID] = memHolding{units: req.Amount.Units, expires: res.Expires}
	}
	return res, nil
}

// Settle implements Wallet.
func (w *MemoryWallet) Settle(_ context.Context, res Reservation, charged Amount) (Settlement, error) {
	if err := CheckCharge(res, charged); err != nil {
		return Settlement{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.end(res, true) {
		return Settlement{Charged: charged, Duplicate: true}, nil
	}
	for _, c := range SettleCounters(res, charged) {
		w.counter(c).spent += charged.Units
	}
	return Settlement{Charged: charged, Over: IsOver(res, charged)}, nil
}

// Release implements Wallet.
func (w *MemoryWallet) Release(_ context.Context, res Reservation) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.end(res, false)
	return nil
}

// end drops res's holdings and marks it ended (settled when settle);
// false when it had ended already, except for a settle after a release:
// the origin may charge a request whose answer came after robotsgate gave
// it up, and that money was spent. w.mu is held.
func (w *MemoryWallet) end(res Reservation, settle bool) bool {
	if _, done := w.ended[res.ID]; done {
		if !settle || !w.released[res.ID] {
			return false
		}
		delete(w.released, res.ID)
		return true
	}
	w.ended[res.ID] = res.Expires
	if !settle {
		w.released[res.ID] = true
	}
	for _, c := range res.Counters {
		if mc := w.counters[c.ID()]; mc != nil {
			delete(mc.held, res.ID)
		}
	}
	return true
}

// Spent implements Wallet.
func (w *MemoryWallet) Spent(_ context.Context, q SpendQuery) (Spend, error) {
	now := w.clock.Now()
	c := QueryCounter(q, now)
	w.mu.Lock()
	defer w.mu.Unlock()
	s := Spend{Spent: Amount{Currency: q.Currency}, Reserved: Amount{Currency: q.Currency}}
	if mc := w.counters[c.ID()]; mc != nil {
		s.Spent.Units, s.Reserved.Units = mc.spent, mc.reserved(now)
	}
	return s, nil
}

// Remember implements Wallet.
func (w *MemoryWallet) Remember(_ context.Context, origin string, price Amount) error {
	now := w.clock.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.quotes[origin]; !ok && len(w.quotes) >= maxMemoryQuotes {
		for o, q := range w.quotes { // drop the expired, or else one at random
			if !q.until.After(now) || len(w.quotes) >= maxMemoryQuotes {
				delete(w.quotes, o)
			}
		}
	}
	w.quotes[origin] = memQuote{price: price, until: now.Add(DefaultQuoteTTL)}
	return nil
}

// Quoted implements Wallet.
func (w *MemoryWallet) Quoted(_ context.Context, origin string) (Amount, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	q, ok := w.quotes[origin]
	if !ok || !q.until.After(w.clock.Now()) {
		return Amount{}, false
	}
	return q.price, true
}

// counter returns (creating it) the totals of c. w.mu is held.
func (w *MemoryWallet) counter(c Counter) *memCounter {
	id := c.ID()
	mc := w.counters[id]
	if mc == nil {
		mc = &memCounter{end: c.End, held: map[string]memHolding{}}
		w.counters[id] = mc
	}
	return mc
}

// prune drops counters past their retention or holding nothing, and
// ended reservations past their expiry, at most every [memPruneEvery].
// w.mu is held.
func (w *MemoryWallet) prune(now time.Time) {
	if now.Sub(w.pruned) < memPruneEvery {
		return
	}
	w.pruned = now
	for id, mc := range w.counters {
		if now.After(mc.end.Add(SpentRetention)) || (mc.spent == 0 && mc.reserved(now) == 0) {
			delete(w.counters, id)
		}
	}
	for id, exp := range w.ended {
		if now.After(exp) {
			delete(w.ended, id)
			delete(w.released, id)
		}
	}
}

// reserved sums the live holdings, dropping the expired ones.
func (mc *memCounter) reserved(now time.Time) int64 {
	var n int64
	for id, h := range mc.held {
		if !h.expires.After(now) {
			delete(mc.held, id)
			continue
		}
		n += h.units
	}
	return n
}

// QueryCounter returns the counter a [SpendQuery] names; a query without
// a time is about now.
func QueryCounter(q SpendQuery, now time.Time) Counter {
	if q.At.IsZero() {
		q.At = now
	}
	c := Counter{Budget: Budget{Scope: q.Scope, Period: q.Period, Limit: Amount{Currency: q.Currency}}, Key: q.Key}
	if q.Scope == ScopeFleet {
		c.Key = ""
	}
	c.Name, c.End = q.Period.Bounds(q.At)
	return c
}

// CheckCharge checks a reservation and its charged amount before the
// charge is recorded.
func CheckCharge(res Reservation, a Amount) error {
	if res.ID == "" {
		return errors.New("settling no reservation")
	}
	if a.IsZero() || !validCurrency(a.Currency) || a.Units < 0 || a.Units > MaxUnits {
		return fmt.Errorf("charged amount %q is not a valid amount", a)
	}
	return nil
}

// IsOver reports whether charged exceeds what res reserved (or is in
// another currency).
func IsOver(res Reservation, charged Amount) bool {
	c, err := charged.Cmp(res.Request.Amount)
	return err != nil || c > 0
}
