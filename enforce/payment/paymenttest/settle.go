package paymenttest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/enforce/payment"
)

func testSettle(t *testing.T, newWallets Factory) {
	w := newWallets(t, enforcetest.NewClock(T0), TTL, 1)[0]
	ctx := context.Background()
	req := payment.Request{Identity: "alice", Origin: "https://a.test", Amount: usd("0.01"),
		Policy: policy("USD 1", budget(payment.ScopeFleet, payment.PeriodDay, "USD 0.05"),
			budget(payment.ScopeFleet, payment.PeriodDay, "EUR 5"))}
	fleet := payment.SpendQuery{Scope: payment.ScopeFleet, Period: payment.PeriodDay, Currency: "USD"}

	r, _ := w.Reserve(ctx, req)
	s, err := w.Settle(ctx, r, usd("0.01"))
	if err != nil || s.Over || s.Duplicate {
		t.Fatalf("exact charge: %+v %v", s, err)
	}
	if s, _ := w.Settle(ctx, r, usd("0.01")); !s.Duplicate {
		t.Fatalf("second settle: %+v, want Duplicate", s)
	}
	_ = w.Release(ctx, r) // after a settle: nothing changes
	wantSpend(t, w, fleet, "0.01", "0")

	// A charge answered after the reservation was given up (released)
	// was spent: it counts, once.
	r, _ = w.Reserve(ctx, req)
	if err := w.Release(ctx, r); err != nil {
		t.Fatal(err)
	}
	wantSpend(t, w, fleet, "0.01", "0")
	if s, err := w.Settle(ctx, r, usd("0.01")); err != nil || s.Duplicate {
		t.Fatalf("settle after a release: %+v %v, want counted", s, err)
	}
	if s, _ := w.Settle(ctx, r, usd("0.01")); !s.Duplicate {
		t.Fatalf("second settle after a release: %+v, want Duplicate", s)
	}
	_ = w.Release(ctx, r)
	wantSpend(t, w, fleet, "0.02", "0")

	r, _ = w.Reserve(ctx, req)
	if s, err := w.Settle(ctx, r, usd("0.005")); err != nil || s.Over {
		t.Fatalf("smaller charge: %+v %v", s, err)
	}
	wantSpend(t, w, fleet, "0.025", "0")

	r, _ = w.Reserve(ctx, req)
	if s, err := w.Settle(ctx, r, usd("0.04")); err != nil || !s.Over {
		t.Fatalf("larger charge: %+v %v, want Over", s, err)
	}
	wantSpend(t, w, fleet, "0.065", "0") // recorded, past the limit: money was spent
	if _, err := w.Reserve(ctx, req); err == nil {
		t.Fatal("a reservation past an overcharged budget succeeded")
	}

	r, err = w.Reserve(ctx, payment.Request{Origin: "https://b.test", Amount: usd("0.01"), Policy: policy("USD 1", req.Policy.Budgets[1])})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := w.Settle(ctx, r, payment.MustParseAmount("EUR 0.5")); err != nil || !s.Over {
		t.Fatalf("charge in another currency: %+v %v, want Over", s, err)
	}
	eur, _ := w.Spent(ctx, payment.SpendQuery{Scope: payment.ScopeFleet, Period: payment.PeriodDay, Currency: "EUR"})
	if eur.Spent != payment.MustParseAmount("EUR 0.5") {
		t.Fatalf("EUR spent %+v, want EUR 0.5", eur)
	}
	if _, err := w.Settle(ctx, r, payment.Amount{}); err == nil {
		t.Fatal("settling with no amount succeeded")
	}
	if _, err := w.Settle(ctx, payment.Reservation{}, usd("0.01")); err == nil {
		t.Fatal("settling no reservation succeeded")
	}
}

func testQuotes(t *testing.T, newWallets Factory) {
	clock := enforcetest.NewClock(T0)
	ws := newWallets(t, clock, TTL, 2)
	ctx := context.Background()
	if _, ok := ws[0].Quoted(ctx, "https://a.test"); ok {
		t.Fatal("a quote before any was remembered")
	}
	if err := ws[0].Remember(ctx, "https://a.test", usd("0.01")); err != nil {
		t.Fatal(err)
	}
	if p, ok := ws[1].Quoted(ctx, "https://a.test"); !ok || p != usd("0.01") {
		t.Fatalf("Quoted on the other replica: %v %v", p, ok)
	}
	if _, ok := ws[1].Quoted(ctx, "https://b.test"); ok {
		t.Fatal("another origin has a quote")
	}
	clock.Advance(payment.DefaultQuoteTTL + time.Second)
	if _, ok := ws[1].Quoted(ctx, "https://a.test"); ok {
		t.Fatal("the quote outlived DefaultQuoteTTL")
	}
}

// testConcurrent: n concurrent reservations spread over the wallets,
// against a fleet budget covering want of them: exactly want succeed.
func testConcurrent(t *testing.T, newWallets Factory, n, want int) {
	ws := newWallets(t, enforcetest.NewClock(T0), TTL, 2)
	Concurrent(t, ws, n, want)
}

// Concurrent makes n concurrent reservations of USD 0.01 spread over ws
// against a fleet budget of want×USD 0.01 and checks that exactly want
// succeed, and that the fleet counter then holds exactly that.
func Concurrent(t *testing.T, ws []payment.Wallet, n, want int) {
	t.Helper()
	ctx := context.Background()
	limit := payment.Amount{Currency: "USD", Units: int64(want) * usd("0.01").Units}
	pol := payment.Policy{MaxPrice: usd("0.02"), Budgets: []payment.Budget{{Scope: payment.ScopeFleet, Period: payment.PeriodDay, Limit: limit}}}
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r, err := ws[i%len(ws)].Reserve(ctx, payment.Request{Identity: "crawler", Origin: "https://pay.test", Amount: usd("0.01"), Policy: pol})
			if err != nil {
				failed.Add(1)
				return
			}
			ok.Add(1)
			if _, err := ws[(i+1)%len(ws)].Settle(ctx, r, usd("0.01")); err != nil {
				t.Errorf("settle: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if ok.Load() != int64(want) || failed.Load() != int64(n-want) {
		t.Fatalf("%d concurrent reservations against a budget of %d: %d succeeded, %d refused", n, want, ok.Load(), failed.Load())
	}
	s, err := ws[0].Spent(ctx, payment.SpendQuery{Scope: payment.ScopeFleet, Period: payment.PeriodDay, Currency: "USD", At: T0})
	if err != nil || s.Spent != limit || s.Reserved.Units != 0 {
		t.Fatalf("fleet spend %+v %v, want %v spent, none reserved", s, err, limit)
	}
}
