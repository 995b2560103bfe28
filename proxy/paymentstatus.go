package proxy

import (
	"context"
	"slices"
	"time"

	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/status"
)

// The status page's payment budgets: what each fleet budget, and each
// identity budget for every user of the credentials file (and requests
// without credentials), has spent and holds in its current period, from
// the wallet (fleet-wide with Redis). Origin budgets are one per origin,
// too many for the page: "robotsgate audit -summary" sums them.

// spendTimeout bounds the wallet's answers for one page refresh.
const spendTimeout = 2 * time.Second

// spendStatus returns the budgets' state, nil without budgets.
func (s *Server) spendStatus() []status.Spend {
	l := s.live.Load()
	budgets := l.cfg.Payment.Budgets
	if len(budgets) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), spendTimeout)
	defer cancel()
	now := s.clock.Now()
	var out []status.Spend
	for _, b := range budgets {
		keys := []string{""}
		switch b.Scope {
		case payment.ScopeOrigin:
			continue
		case payment.ScopeIdentity:
			keys = append(keys, users(l.acl.Identities())...)
		}
		for _, k := range keys {
			out = append(out, s.spendOf(ctx, b, k, now))
		}
	}
	return out
}

// maxSpendUsers bounds the identities the page lists per budget.
const maxSpendUsers = 50

// users returns the distinct user names of ids, at most [maxSpendUsers].
func users(ids []access.Identity) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(out, id.User) && len(out) < maxSpendUsers {
			out = append(out, id.User)
		}
	}
	return out
}

// spendOf is budget b's state for key at now.
func (s *Server) spendOf(ctx context.Context, b payment.Budget, key string, now time.Time) status.Spend {
	name, _ := b.Period.Bounds(now)
	row := status.Spend{Budget: b.String(), Key: key, Period: name}
	sp, err := s.wallet.Spent(ctx, payment.SpendQuery{Scope: b.Scope, Key: key, Period: b.Period, Currency: b.Limit.Currency, At: now})
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
