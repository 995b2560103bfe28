package payment

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// DefaultReservationTTL is how long a reservation holds its amount
// against the budgets when it is neither settled nor released: a replica
// that crashes between reserving and settling frees the budget after it.
// It spans the paid retry up to its response headers (crawler-charged is
// a header), with room for a slow origin.
const DefaultReservationTTL = 2 * time.Minute

// DefaultQuoteTTL is how long an origin that quoted a price is
// remembered ([Wallet.Remember]).
const DefaultQuoteTTL = 24 * time.Hour

// SpentRetention is how long a period's spending stays queryable after
// the period ends (the previous month's, for summaries).
const SpentRetention = 40 * 24 * time.Hour

// Why a Reserve refuses.
var (
	// ErrOverCap: the price is above the policy's max_price, in another
	// currency than max_price, or no max_price is set.
	ErrOverCap = errors.New("price over the cap")
	// ErrBudgetExhausted: a budget would be exceeded ([BudgetError]
	// names which).
	ErrBudgetExhausted = errors.New("budget exhausted")
	// ErrUnavailable: the wallet's shared state (Redis) cannot be
	// reached; nothing is paid, as fleet-wide budgets could not hold.
	ErrUnavailable = errors.New("wallet unavailable")
)

// BudgetError is a refusal by one budget; it matches
// [ErrBudgetExhausted] with [errors.Is].
type BudgetError struct {
	Counter Counter
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("%s budget %s (%s) exhausted", e.Counter.Budget, e.Counter.Key, e.Counter.Name)
}

// Is makes a [BudgetError] match [ErrBudgetExhausted].
func (e *BudgetError) Is(target error) bool { return target == ErrBudgetExhausted }

// Request is one payment a request asks for.
type Request struct {
	Identity string // the proxy user ("" without credentials)
	Origin   string // the canonical origin ([enforce.Origin])
	Amount   Amount // the quoted price
	Policy   Policy // the caps in force for this request
}

// Reservation is an amount held against every budget of a Request until
// it is settled, released, or expires.
type Reservation struct {
	ID       string
	Request  Request
	At       time.Time // when it was made: its counters' periods
	Expires  time.Time
	Counters []Counter // the budgets it is held against
}

// Settlement is what Settle recorded.
type Settlement struct {
	// Charged is the amount recorded as spent.
	Charged Amount
	// Over is true when the charge is above the reserved amount or in
	// another currency: it is recorded all the same (the money was spent)
	// and may take budgets past their limits.
	Over bool
	// Duplicate is true when the reservation had already been settled:
	// nothing was recorded. A settle after a release is recorded (the
	// origin charged an answer robotsgate had given up waiting for).
	Duplicate bool
}

// Spend is a counter's state: the settled total and the amount held by
// live reservations.
type Spend struct {
	Spent, Reserved Amount
}

// SpendQuery names a counter: the scope, its key (identity or origin; ""
// for the fleet), the period and currency, at a time (its period).
type SpendQuery struct {
	Scope    Scope
	Key      string
	Period   Period
	Currency string
	At       time.Time
}

// Wallet holds the budgets. Implementations are safe for concurrent
// use: Reserve checks the caps and reserves atomically, so concurrent
// requests never overspend a budget together.
type Wallet interface {
	// Reserve checks the request's price against its max_price and every
	// budget of its currency (spent + reserved + amount <= limit) and, when
	// all allow it, holds the amount until Settle, Release or expiry.
	// Errors: [ErrOverCap], a *[BudgetError] ([ErrBudgetExhausted]),
	// [ErrUnavailable].
	Reserve(ctx context.Context, req Request) (Reservation, error)
	// Settle records the charged amount as spent and ends the
	// reservation. The charge is recorded even when it differs from the
	// reservation ([Settlement.Over] when it is more).
	Settle(ctx context.Context, res Reservation, charged Amount) (Settlement, error)
	// Release ends the reservation without spending; a later Settle of
	// it still records its charge.
	Release(ctx context.Context, res Reservation) error
	// Spent returns a counter's totals.
	Spent(ctx context.Context, q SpendQuery) (Spend, error)
	// Remember notes that origin quoted price, for [DefaultQuoteTTL] (the
	// latest quote wins); Quoted returns it, so later requests to the
	// origin can carry crawler-max-price up front.
	Remember(ctx context.Context, origin string, price Amount) error
	Quoted(ctx context.Context, origin string) (Amount, bool)
}

// CheckCap checks the price of req against its max_price: nil, or an
// error matching [ErrOverCap]. Wallets call it first.
func CheckCap(req Request) error {
	p := req.Policy.MaxPrice
	if req.Amount.IsZero() || req.Amount.Units < 0 || req.Amount.Units > MaxUnits {
		return fmt.Errorf("price %q: %w", req.Amount, ErrOverCap)
	}
	if p.IsZero() {
		return fmt.Errorf("no max_price set: %w", ErrOverCap)
	}
	c, err := req.Amount.Cmp(p)
	if err != nil {
		return fmt.Errorf("max_price %s, price %s: %w", p, req.Amount, ErrOverCap)
	}
	if c > 0 {
		return fmt.Errorf("price %s above max_price %s: %w", req.Amount, p, ErrOverCap)
	}
	return nil
}

// SettleCounters returns the counters a charge of res is recorded
// against: the reservation's own, or, for a charge in another currency,
// that currency's budgets in the reservation's periods.
func SettleCounters(res Reservation, charged Amount) []Counter {
	if charged.Currency == res.Request.Amount.Currency {
		return res.Counters
	}
	r := res.Request
	return Counters(r.Policy.Budgets, r.Identity, r.Origin, charged.Currency, res.At)
}

// NewReservationID returns a random reservation ID.
func NewReservationID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
