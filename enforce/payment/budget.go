package payment

import (
	"fmt"
	"net/url"
	"time"
)

// Scope is whose spending a budget caps.
type Scope string

// Scopes of budgets.
const (
	ScopeFleet    Scope = "fleet"    // every request of every replica
	ScopeIdentity Scope = "identity" // each identity (proxy user) on its own
	ScopeOrigin   Scope = "origin"   // each origin on its own
)

// Valid reports whether s is a scope.
func (s Scope) Valid() bool { return s == ScopeFleet || s == ScopeIdentity || s == ScopeOrigin }

// Period is the calendar period a budget's spending is counted over, in
// UTC: a budget starts afresh at midnight UTC (day) or on the first of
// the month, midnight UTC (month).
type Period string

// Periods of budgets.
const (
	PeriodDay   Period = "day"
	PeriodMonth Period = "month"
)

// Valid reports whether p is a period.
func (p Period) Valid() bool { return p == PeriodDay || p == PeriodMonth }

// Bounds returns the UTC calendar period of kind p holding t: its name
// ("2026-12-06" for a day, "2026-12" for a month) and its end.
func (p Period) Bounds(t time.Time) (name string, end time.Time) {
	t = t.UTC()
	if p == PeriodMonth {
		start := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		return start.Format("2006-01"), start.AddDate(0, 1, 0)
	}
	start := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return start.Format("2006-01-02"), start.AddDate(0, 0, 1)
}

// Budget is one spending cap: at most Limit (in Limit's currency) per
// Period, for the Scope. A budget binds only amounts of its currency.
type Budget struct {
	Scope  Scope
	Period Period
	Limit  Amount
}

// String is the budget as the settings write it ("fleet/day USD 0.1").
func (b Budget) String() string {
	return string(b.Scope) + "/" + string(b.Period) + " " + b.Limit.String()
}

// Policy is what one request may spend: MaxPrice caps a single payment
// (zero: nothing is paid) and every Budget of the price's currency caps
// the sum. The proxy builds it per request from the settings in force
// (global, or the identity's), so a reload applies to the next request.
type Policy struct {
	MaxPrice Amount
	Budgets  []Budget
}

// Counter is one budget as it applies to one request: the running
// total of the budget's scope key (the identity or origin; "" for the
// fleet) in one period and currency.
type Counter struct {
	Budget Budget
	Key    string    // identity or origin; "" for the fleet
	Name   string    // the period's name ([Period.Bounds])
	End    time.Time // when the period ends
}

// ID names the counter uniquely and safely (the key is escaped), e.g.
// "origin|https%3A%2F%2Fa.example|day|2026-12-06|USD": the wallets key
// their totals by it.
func (c Counter) ID() string {
	return string(c.Budget.Scope) + "|" + url.QueryEscape(c.Key) + "|" + string(c.Budget.Period) + "|" + c.Name + "|" + c.Budget.Limit.Currency
}

// Counters returns the counters of the budgets that bind a payment in
// currency by identity to origin at time at: the budgets of that
// currency, each with its scope's key and its period at that time.
func Counters(budgets []Budget, identity, origin, currency string, at time.Time) []Counter {
	var out []Counter
	for _, b := range budgets {
		if b.Limit.Currency != currency {
			continue
		}
		c := Counter{Budget: b}
		switch b.Scope {
		case ScopeIdentity:
			c.Key = identity
		case ScopeOrigin:
			c.Key = origin
		}
		c.Name, c.End = b.Period.Bounds(at)
		out = append(out, c)
	}
	return out
}

// CheckBudgets reports the first problem of a budget list: an invalid
// scope, period or limit, or two budgets of one scope, period and
// currency.
func CheckBudgets(budgets []Budget) error {
	seen := map[string]bool{}
	for i, b := range budgets {
		switch {
		case !b.Scope.Valid():
			return fmt.Errorf("budgets[%d]: scope %q is not fleet, identity or origin", i, b.Scope)
		case !b.Period.Valid():
			return fmt.Errorf("budgets[%d]: period %q is not day or month", i, b.Period)
		case b.Limit.IsZero():
			return fmt.Errorf("budgets[%d]: limit missing (e.g. USD 0.10)", i)
		}
		k := string(b.Scope) + "/" + string(b.Period) + "/" + b.Limit.Currency
		if seen[k] {
			return fmt.Errorf("budgets[%d]: a second %s budget per %s in %s", i, b.Scope, b.Period, b.Limit.Currency)
		}
		seen[k] = true
	}
	return nil
}
