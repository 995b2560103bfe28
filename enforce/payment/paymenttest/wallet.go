// Package paymenttest is the conformance test of [payment.Wallet]
// implementations: every wallet (per replica, fleet-wide on Redis) must
// pass the same scenarios, driven by a fake clock.
package paymenttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/enforce/payment"
)

// T0 is the start of every scenario: an hour before a day and a month
// end (UTC).
var T0 = time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC)

// Factory returns n wallets that share one state (the replicas of one
// fleet; a per-replica wallet returns itself n times), reading clock, with
// reservations expiring after ttl.
type Factory func(t *testing.T, clock *enforcetest.Clock, ttl time.Duration, n int) []payment.Wallet

// TTL is the reservation lifetime the scenarios ask for.
const TTL = time.Minute

// usd parses "USD <s>".
func usd(s string) payment.Amount { return payment.MustParseAmount("USD " + s) }

// policy returns a max_price and budgets.
func policy(maxPrice string, budgets ...payment.Budget) payment.Policy {
	return payment.Policy{MaxPrice: payment.MustParseAmount(maxPrice), Budgets: budgets}
}

// budget returns a budget.
func budget(scope payment.Scope, period payment.Period, limit string) payment.Budget {
	return payment.Budget{Scope: scope, Period: period, Limit: payment.MustParseAmount(limit)}
}

// Run runs every scenario on the wallets of newWallets.
func Run(t *testing.T, newWallets Factory) {
	t.Run("cap", func(t *testing.T) { testCap(t, newWallets) })
	t.Run("budget", func(t *testing.T) { testBudget(t, newWallets) })
	t.Run("expiry", func(t *testing.T) { testExpiry(t, newWallets) })
	t.Run("periods", func(t *testing.T) { testPeriods(t, newWallets) })
	t.Run("scopes", func(t *testing.T) { testScopes(t, newWallets) })
	t.Run("settle", func(t *testing.T) { testSettle(t, newWallets) })
	t.Run("quotes", func(t *testing.T) { testQuotes(t, newWallets) })
	t.Run("concurrent", func(t *testing.T) { testConcurrent(t, newWallets, 50, 10) })
}

func testCap(t *testing.T, newWallets Factory) {
	w := newWallets(t, enforcetest.NewClock(T0), TTL, 1)[0]
	ctx := context.Background()
	cases := []struct {
		name   string
		policy payment.Policy
		price  payment.Amount
	}{
		{"above max_price", policy("USD 0.02"), usd("0.03")},
		{"other currency", policy("EUR 1"), usd("0.01")},
		{"no max_price", payment.Policy{}, usd("0.01")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := w.Reserve(ctx, payment.Request{Origin: "https://a.test", Amount: c.price, Policy: c.policy})
			if !errors.Is(err, payment.ErrOverCap) {
				t.Fatalf("Reserve %v under %+v: %v, want ErrOverCap", c.price, c.policy, err)
			}
		})
	}
	if _, err := w.Reserve(ctx, payment.Request{Origin: "https://a.test", Amount: usd("0.02"), Policy: policy("USD 0.02")}); err != nil {
		t.Fatalf("a price equal to max_price: %v", err)
	}
}

func testBudget(t *testing.T, newWallets Factory) {
	w := newWallets(t, enforcetest.NewClock(T0), TTL, 1)[0]
	ctx := context.Background()
	req := payment.Request{Identity: "alice", Origin: "https://a.test", Amount: usd("0.03"),
		Policy: policy("USD 0.05", budget(payment.ScopeFleet, payment.PeriodDay, "USD 0.10"))}
	var held []payment.Reservation
	for i := range 3 {
		r, err := w.Reserve(ctx, req)
		if err != nil {
			t.Fatalf("reservation %d: %v", i, err)
		}
		held = append(held, r)
	}
	_, err := w.Reserve(ctx, req)
	var be *payment.BudgetError
	if !errors.As(err, &be) || !errors.Is(err, payment.ErrBudgetExhausted) || be.Counter.Budget.Scope != payment.ScopeFleet {
		t.Fatalf("fourth reservation (0.12 > 0.10): %v, want the fleet budget exhausted", err)
	}
	// Another currency is not bound by a USD budget (only by max_price).
	eur := req
	eur.Amount, eur.Policy.MaxPrice = payment.MustParseAmount("EUR 0.03"), payment.MustParseAmount("EUR 1")
	if _, err := w.Reserve(ctx, eur); err != nil {
		t.Fatalf("EUR under a USD budget: %v", err)
	}
	if err := w.Release(ctx, held[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Reserve(ctx, req); err != nil {
		t.Fatalf("after a release: %v", err)
	}
	wantSpend(t, w, payment.SpendQuery{Scope: payment.ScopeFleet, Period: payment.PeriodDay, Currency: "USD", At: T0}, "0", "0.09")
}

// wantSpend checks a counter's totals.
func wantSpend(t *testing.T, w payment.Wallet, q payment.SpendQuery, spent, reserved string) {
	t.Helper()
	s, err := w.Spent(context.Background(), q)
	if err != nil || s.Spent != usd(spent) || s.Reserved != usd(reserved) {
		t.Fatalf("Spent(%+v) = %+v, %v; want spent %s reserved %s", q, s, err, spent, reserved)
	}
}

func testExpiry(t *testing.T, newWallets Factory) {
	clock := enforcetest.NewClock(T0.Add(-2 * time.Hour))
	w := newWallets(t, clock, TTL, 1)[0]
	ctx := context.Background()
	req := payment.Request{Origin: "https://a.test", Amount: usd("0.10"),
		Policy: policy("USD 0.10", budget(payment.ScopeFleet, payment.PeriodDay, "USD 0.10"))}
	if _, err := w.Reserve(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Reserve(ctx, req); !errors.Is(err, payment.ErrBudgetExhausted) {
		t.Fatalf("while the first is held: %v", err)
	}
	clock.Advance(TTL - time.Millisecond)
	if _, err := w.Reserve(ctx, req); !errors.Is(err, payment.ErrBudgetExhausted) {
		t.Fatalf("just before expiry: %v", err)
	}
	clock.Advance(2 * time.Millisecond)
	if _, err := w.Reserve(ctx, req); err != nil {
		t.Fatalf("after the first expired (never settled): %v", err)
	}
}

func testPeriods(t *testing.T, newWallets Factory) {
	clock := enforcetest.NewClock(T0)
	w := newWallets(t, clock, TTL, 1)[0]
	ctx := context.Background()
	req := payment.Request{Origin: "https://a.test", Amount: usd("0.05"),
		Policy: policy("USD 1", budget(payment.ScopeFleet, payment.PeriodDay, "USD 0.05"),
			budget(payment.ScopeFleet, payment.PeriodMonth, "USD 0.10"))}
	settle := func(what string) {
		t.Helper()
		r, err := w.Reserve(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if _, err := w.Settle(ctx, r, usd("0.05")); err != nil {
			t.Fatal(err)
		}
	}
	settle("31 March")
	if _, err := w.Reserve(ctx, req); !errors.Is(err, payment.ErrBudgetExhausted) {
		t.Fatalf("second on 31 March: %v, want the day budget exhausted", err)
	}
	clock.Advance(2 * time.Hour) // 1 April, 01:00 UTC: a new day and a new month
	settle("1 April")
	clock.Advance(24 * time.Hour)
	settle("2 April")
	clock.Advance(24 * time.Hour)
	if _, err := w.Reserve(ctx, req); !errors.Is(err, payment.ErrBudgetExhausted) {
		t.Fatalf("3 April: %v, want the month budget exhausted", err)
	}
	wantSpend(t, w, payment.SpendQuery{Scope: payment.ScopeFleet, Period: payment.PeriodMonth, Currency: "USD"}, "0.1", "0")
	wantSpend(t, w, payment.SpendQuery{Scope: payment.ScopeFleet, Period: payment.PeriodMonth, Currency: "USD", At: T0}, "0.05", "0")
}

func testScopes(t *testing.T, newWallets Factory) {
	w := newWallets(t, enforcetest.NewClock(T0), TTL, 1)[0]
	ctx := context.Background()
	pol := policy("USD 1", budget(payment.ScopeIdentity, payment.PeriodDay, "USD 0.02"),
		budget(payment.ScopeOrigin, payment.PeriodDay, "USD 0.03"))
	try := func(id, origin string, ok bool) {
		t.Helper()
		_, err := w.Reserve(ctx, payment.Request{Identity: id, Origin: origin, Amount: usd("0.01"), Policy: pol})
		if (err == nil) != ok {
			t.Fatalf("%s on %s: %v, want ok=%v", id, origin, err, ok)
		}
	}
	try("alice", "https://a.test", true)
	try("alice", "https://b.test", true)
	try("alice", "https://c.test", false) // alice's 0.02 spent
	try("bob", "https://a.test", true)
	try("carol", "https://a.test", true)
	try("dave", "https://a.test", false) // a.test's 0.03 spent
	try("dave", "https://b.test", true)
	wantSpend(t, w, payment.SpendQuery{Scope: payment.ScopeOrigin, Key: "https://a.test", Period: payment.PeriodDay, Currency: "USD"}, "0", "0.03")
	wantSpend(t, w, payment.SpendQuery{Scope: payment.ScopeIdentity, Key: "alice", Period: payment.PeriodDay, Currency: "USD"}, "0", "0.02")
}
