package status

import (
	"context"
	"slices"
	"time"

	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/proxy/access"
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
// each user of ids (and requests without credentials); nil without
// budgets.
func Spends(w payment.Wallet, budgets []payment.Budget, ids []access.Identity, now time.Time) []Spend {
	if len(budgets) == 0 {
		return nil
	}
	users := userNames(ids)
	ctx, cancel := context.WithTimeout(context.Background(), spendTimeout)
	defer cancel()
	var out []Spend
	for _, b := range budgets {
		keys := []string{""}
		switch b.Scope {
		case payment.ScopeOrigin:
			continue
		case payment.ScopeIdentity:
			keys = append(keys, users...)
		}
		for _, k := range keys {
			out = append(out, spendOf(ctx, w, b, k, now))
		}
	}
	return out
}

// userNames returns the distinct user names of ids, in order, at most
// [maxSpendUsers].
func userNames(ids []access.Identity) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(out, id.User) && len(out) < maxSpendUsers {
			out = append(out, id.User)
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
