package status

import (
	"context"
	"time"

	"github.com/robotsgate/robotsgate/enforce/payment"
)

// The page's payment budgets: what each fleet budget, and each identity
// budget for every user given, has spent and holds in its current
// period, from the wallet (fleet-wide with Redis). Origin budgets are one
// per origin, too many for the page: "robotsgate audit -summary" sums
// them.

// Spend is a payment budget's state in its current period (today, this
// month): spent (settled) and held (reserved) against its limit.
type Spend struct {
	Budget   string `json:"budget"` // e.g. "fleet/day USD 0.1"
	Key      string `json:"key"`    // the identity (identity budgets), "" for the fleet
	Period   string `json:"period"` // e.g. 2026-12-06
	Spent    string `json:"spent"`
	Reserved string `json:"reserved"`
	Error    string `json:"error,omitempty"` // why the wallet could not say
}

// spendTimeout bounds the wallet's answers for one page refresh.
const spendTimeout = 2 * time.Second

// maxSpendUsers bounds the identities the page lists per budget.
const maxSpendUsers = 50

// Spends returns the state of budgets at now in w, identity budgets for
// each of users (and requests without credentials); nil without
// budgets.
func Spends(w payment.Wallet, budgets []payment.Budget, users []string, now time.Time) []Spend {
	if len(budgets) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), spendTimeout)
	defer cancel()
	var out []Spend
	for _, b := range budgets {
		keys := []string{""}
		switch b.Scope {
		case payment.ScopeOrigin:
			continue
		case payment.ScopeIdentity:
			keys = append(keys, users[:min(len(users), maxSpendUsers)]...)
		}
		for _, k := range keys {
			out = append(out, spendOf(ctx, w, b, k, now))
		}
	}
	return out
}

// spendOf is budget b's state for key at now.
func spendOf(ctx context.Context, w payment.Wallet, b payment.Budget, key string, now time.Time) Spend {
	name, _ := b.Period.Bounds(now)
	row := Spend{Budget: b.String(), Key: key, Period: name}
	sp, err := w.Spent(ctx, payment.SpendQuery{Scope: b.Scope, Key: key, Period: b.Period, Currency: b.Limit.Currency, At: now})
	if err != nil {
		row.Error = err.Error()
		return row
	}
	zero := payment.Amount{Currency: b.Limit.Currency}
	row.Spent, row.Reserved = orZero(sp.Spent, zero), orZero(sp.Reserved, zero)
	return row
}

// orZero is a's wire form, that of zero when a is none.
func orZero(a, zero payment.Amount) string {
	if a.IsZero() {
		return zero.String()
	}
	return a.String()
}
