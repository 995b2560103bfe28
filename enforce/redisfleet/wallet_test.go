package redisfleet

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/enforce/payment/paymenttest"
	"github.com/robotsgate/robotsgate/internal/redistest"
)

// walletFactory returns a paymenttest.Factory of replicas on the Redis at
// url: each scenario gets a prefix of its own, so scenarios sharing one
// server do not see each other's counters.
func walletFactory(url string) paymenttest.Factory {
	var n atomic.Int64
	return func(t *testing.T, clock *enforcetest.Clock, ttl time.Duration, count int) []payment.Wallet {
		prefix := fmt.Sprintf("wallet%d:", n.Add(1))
		ws := make([]payment.Wallet, count)
		for i := range ws {
			ws[i] = newURLRedis(t, url, clock, func(o *Options) { o.Prefix, o.ReservationTTL = prefix, ttl }).Wallet()
		}
		return ws
	}
}

// newURLRedis is newTestRedis for any URL (a cluster's too).
func newURLRedis(t *testing.T, url string, clock *enforcetest.Clock, mod func(*Options)) *Redis {
	t.Helper()
	SetRedisClientLog(zerolog.Nop())
	o := Options{Clock: clock, Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel),
		RetryInterval: 20 * time.Millisecond, Timeout: 2 * time.Second, MaxBytes: testMaxBytes, Local: newLocalStore()}
	mod(&o)
	r, err := New(context.Background(), url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// TestRedisWallet runs the wallet scenarios on replicas sharing one
// redis-server, among them 50 concurrent reservations from two replicas
// against a fleet budget covering 10: exactly 10 succeed.
func TestRedisWallet(t *testing.T) {
	srv := redistest.Start(t)
	paymenttest.Run(t, walletFactory(srv.URL(0)))
}

// TestRedisWalletCluster: on a Redis Cluster, the counters one Reserve
// touches (fleet, identity, origin) share a slot, so the script runs;
// two replicas' 30 concurrent reservations of USD 0.01 against a fleet
// budget of USD 0.10 give exactly 10.
func TestRedisWalletCluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	f := walletFactory(cl.URL())
	clock := enforcetest.NewClock(paymenttest.T0)
	ws := f(t, clock, paymenttest.TTL, 2)
	ctx := context.Background()
	pol := payment.Policy{MaxPrice: payment.MustParseAmount("USD 1"), Budgets: []payment.Budget{
		{Scope: payment.ScopeFleet, Period: payment.PeriodDay, Limit: payment.MustParseAmount("USD 5")},
		{Scope: payment.ScopeIdentity, Period: payment.PeriodMonth, Limit: payment.MustParseAmount("USD 5")},
		{Scope: payment.ScopeOrigin, Period: payment.PeriodDay, Limit: payment.MustParseAmount("USD 0.02")},
	}}
	for i, want := range []bool{true, true, false} { // the origin's 0.02 a day
		_, err := ws[i%2].Reserve(ctx, payment.Request{Identity: "alice", Origin: "https://pay.test", Amount: payment.MustParseAmount("USD 0.01"), Policy: pol})
		if (err == nil) != want {
			t.Fatalf("reservation %d with three budgets: %v, want ok=%v", i, err, want)
		}
	}
	paymenttest.Concurrent(t, f(t, clock, paymenttest.TTL, 2), 30, 10)
	if err := ws[0].Remember(ctx, "https://pay.test", payment.MustParseAmount("USD 0.01")); err != nil {
		t.Fatal(err)
	}
	if p, ok := ws[1].Quoted(ctx, "https://pay.test"); !ok || p.String() != "USD 0.01" {
		t.Fatalf("Quoted on the other replica: %v %v", p, ok)
	}
}

// TestRedisWalletDown: with Redis unreachable nothing is paid (Reserve
// fails with ErrUnavailable rather than spending per replica), and a
// settle reports that the charge was not recorded.
func TestRedisWalletDown(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(paymenttest.T0)
	w := walletFactory(srv.URL(0))(t, clock, paymenttest.TTL, 1)[0]
	ctx := context.Background()
	req := payment.Request{Origin: "https://pay.test", Amount: payment.MustParseAmount("USD 0.01"),
		Policy: payment.Policy{MaxPrice: payment.MustParseAmount("USD 1")}}
	res, err := w.Reserve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if _, err := w.Reserve(ctx, req); !errors.Is(err, payment.ErrUnavailable) {
		t.Fatalf("Reserve with Redis down: %v, want ErrUnavailable", err)
	}
	if _, err := w.Settle(ctx, res, req.Amount); !errors.Is(err, payment.ErrUnavailable) {
		t.Fatalf("Settle with Redis down: %v, want ErrUnavailable", err)
	}
}

// TestRedisWalletKeys: the keys are integers of micro-units under the
// payment tag, the quote under its origin's tag, and every key expires.
func TestRedisWalletKeys(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(paymenttest.T0)
	r := newURLRedis(t, srv.URL(0), clock, func(o *Options) {})
	ctx := context.Background()
	req := payment.Request{Identity: "alice", Origin: "https://pay.test", Amount: payment.MustParseAmount("USD 0.01"),
		Policy: payment.Policy{MaxPrice: payment.MustParseAmount("USD 1"), Budgets: []payment.Budget{
			{Scope: payment.ScopeOrigin, Period: payment.PeriodDay, Limit: payment.MustParseAmount("USD 1")}}}}
	res, err := r.Wallet().Reserve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Wallet().Settle(ctx, res, payment.MustParseAmount("USD 0.015")); err != nil {
		t.Fatal(err)
	}
	_ = r.Wallet().Remember(ctx, req.Origin, req.Amount)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), DisableIdentity: true})
	defer c.Close()
	spent := defaultPrefix + "{payment}:spent:origin|https%3A%2F%2Fpay.test|day|2026-03-31|USD"
	if v, err := c.Get(ctx, spent).Result(); err != nil || v != "15000" {
		t.Fatalf("%s = %q %v, want 15000", spent, v, err)
	}
	keys, _ := c.Keys(ctx, "*").Result()
	for _, k := range keys {
		if ttl, _ := c.PTTL(ctx, k).Result(); ttl <= 0 {
			t.Errorf("key %s does not expire (%v)", k, ttl)
		}
	}
	if v, _ := c.Get(ctx, defaultPrefix+"{https://pay.test}:quote").Result(); v != fmt.Sprintf("USD 0.01|%d", paymenttest.T0.Add(payment.DefaultQuoteTTL).UnixMilli()) {
		t.Fatalf("quote key holds %q", v)
	}
}
