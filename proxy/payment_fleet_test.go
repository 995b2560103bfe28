package proxy

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/enforce/redisfleet"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/redistest"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// walletT0 is the wallets' time in these tests: budgets count by UTC
// day, never by today's.
var walletT0 = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// fleetBudget is the done-when budget: USD 0.10 a day for the fleet.
var fleetBudget = payment.Budget{Scope: payment.ScopeFleet, Period: payment.PeriodDay, Limit: payment.MustParseAmount("USD 0.10")}

// redisWallets returns n wallets of replicas sharing the Redis at url.
func redisWallets(t *testing.T, clock enforce.Clock, url string, n int) []payment.Wallet {
	t.Helper()
	redisfleet.SetRedisClientLog(zerolog.Nop())
	ws := make([]payment.Wallet, n)
	for i := range ws {
		r, err := redisfleet.New(context.Background(), url, redisfleet.Options{Clock: clock, Log: zerolog.Nop(), Timeout: 2 * time.Second,
			MaxBytes: 1 << 20, Local: enforce.NewMemoryStore(100, 1<<20)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		ws[i] = r.Wallet()
	}
	return ws
}

// payFleet runs the done-when scenario on one replica per wallet: an
// origin quoting USD 0.01, max_price USD 0.02, the fleet budget of USD
// 0.10 a day; 30 concurrent distinct URLs, spread over the replicas, give
// exactly 10 paid 200s and 20 402s marked budget-exhausted, and the
// origin's charges equal the ledger's sum.
func payFleet(t *testing.T, clock enforce.Clock, wallets []payment.Wallet) {
	k, kp := newSigningKey(t, "wba.pem")
	o := newPayOrigin(t, k, "USD 0.01")
	o.now = clock.Now // robotsgate signs at its clock's time
	proxies := make([]*payProxy, len(wallets))
	for i, w := range wallets {
		proxies[i] = newPayProxy(t, kp, "USD 0.02", Deps{Wallet: w, Clock: clock}, nil, fleetBudget)
	}
	const n = 30
	statuses := make([]*http.Response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], _ = get(t, proxies[i%len(proxies)].client, fmt.Sprintf("%s/page/%d", o.url, i))
		}()
	}
	wg.Wait()
	paid, exhausted := 0, 0
	for i, resp := range statuses {
		switch {
		case resp.StatusCode == http.StatusOK:
			paid++
		case resp.StatusCode == http.StatusPaymentRequired && resp.Header.Get(answer.HeaderDecision) == string(answer.ReasonBudgetExhausted):
			exhausted++
		default:
			t.Errorf("request %d: %d %s", i, resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
		}
	}
	var ledger int64
	records := 0
	for _, p := range proxies {
		recs, sum := paidRecords(t, p.audit)
		records, ledger = records+len(recs), ledger+sum
	}
	charges, charged := o.totals()
	if paid != 10 || exhausted != 20 || charges != 10 || records != 10 || ledger != charged || charged != 100_000 {
		t.Fatalf("%d paid, %d budget-exhausted; origin: %d charges of %d; ledger: %d records of %d", paid, exhausted, charges, charged, records, ledger)
	}
	for _, p := range proxies { // the status page: today's fleet spend, as the wallet (shared with Redis) says
		if sp := p.srv.statusInfo().Spend; len(sp) != 1 || sp[0].Spent != "USD 0.1" || sp[0].Budget != "fleet/day USD 0.1" {
			t.Errorf("status page spend %+v", sp)
		}
	}
	for _, path := range []string{"/robots.txt", "/sitemap.xml"} {
		get(t, proxies[0].client, o.url+path)
		for _, r := range o.received(path) {
			if payment.PriceHeaderComponent(r.Header) != "" {
				t.Errorf("%s carried a price header: %v", path, r.Header)
			}
		}
	}
}

// TestPaymentBudgetConcurrent: one replica on its own wallet.
func TestPaymentBudgetConcurrent(t *testing.T) {
	clock := enforcetest.NewClock(walletT0)
	payFleet(t, clock, []payment.Wallet{payment.NewMemoryWallet(clock, 0)})
}

// TestPaymentFleetBudgetRedis: two replicas on one Redis hold the fleet
// budget together.
func TestPaymentFleetBudgetRedis(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(walletT0)
	payFleet(t, clock, redisWallets(t, clock, srv.URL(0), 2))
}

// TestPaymentFleetBudgetCluster: the same on a Redis Cluster.
func TestPaymentFleetBudgetCluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	clock := enforcetest.NewClock(walletT0)
	payFleet(t, clock, redisWallets(t, clock, cl.URL(), 2))
}

// TestPaymentReloadCap: a reload lowering max_price below the origin's
// price applies to the next request: it is not paid.
func TestPaymentReloadCap(t *testing.T) {
	k, kp := newSigningKey(t, "wba.pem")
	o := newPayOrigin(t, k, "USD 0.01")
	p := newPayProxy(t, kp, "USD 0.02", Deps{}, nil)
	if resp, _ := get(t, p.client, o.url+"/a"); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /a: %d", resp.StatusCode)
	}
	next := p.srv.live.Load().cfg
	next.Payment.MaxPrice = payment.MustParseAmount("USD 0.005")
	p.srv.reload.load = func() (config.Config, error) { return next, nil }
	if res, err := p.srv.Reload("test"); err != nil || res.Result != ReloadOK {
		t.Fatalf("reload: %+v %v", res, err)
	}
	resp, _ := get(t, p.client, o.url+"/b")
	if resp.StatusCode != http.StatusPaymentRequired || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonPaymentOverCap) {
		t.Fatalf("GET /b after the reload: %d %s", resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
	}
	if n, _ := o.totals(); n != 1 {
		t.Errorf("origin: %d charges, want 1", n)
	}
}
