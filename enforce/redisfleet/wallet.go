package redisfleet

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/patrickmn/go-cache"
	"github.com/redis/go-redis/v9"

	"github.com/robotsgate/robotsgate/enforce/payment"
)

// redisWalletReserve checks and holds a payment against every budget,
// atomically. KEYS[1] is the reservation's marker, then for each counter
// its spent total (an integer of micro-units) and its holdings (a sorted
// set of "id|units" scored by expiry, Unix ms). ARGV: now (ms), expiry
// (ms), the member, its units, the holdings' lifetime (ms), the
// marker's lifetime (ms), then each counter's limit. Expired holdings
// are dropped first. It returns 0 when it held the amount, else the
// 1-based index of the first counter it would exceed.
var redisWalletReserve = redis.NewScript(`
local now, exp, amt = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4])
local n = (#KEYS - 1) / 2
for i = 1, n do
  local sk, hk = KEYS[2*i], KEYS[2*i+1]
  redis.call('ZREMRANGEBYSCORE', hk, '-inf', now)
  local held = 0
  for _, m in ipairs(redis.call('ZRANGE', hk, 0, -1)) do
    held = held + (tonumber(string.match(m, '|(%d+)$')) or 0)
  end
  local spent = tonumber(redis.call('GET', sk) or '0') or 0
  if spent + held + amt > tonumber(ARGV[6 + i]) then return i end
end
for i = 1, n do
  redis.call('ZADD', KEYS[2*i+1], exp, ARGV[3])
  redis.call('PEXPIRE', KEYS[2*i+1], ARGV[5])
end
redis.call('SET', KEYS[1], 'open', 'PX', ARGV[6])
return 0`)

// redisWalletEnd ends a reservation once: unless its marker KEYS[1] says
// it ended already, it marks it ended (for ARGV[4] ms: "done" when
// settled, "released" when released), drops the member ARGV[1] from the
// ARGV[3] holdings keys that follow KEYS[1], and adds ARGV[2] micro-units
// to each remaining key (spent totals: a settle), keeping each for its
// lifetime (ms) in ARGV[5...]. It returns 1 when it did, 0 for a
// reservation already ended; a settle after a release still counts (the
// origin charged an answer robotsgate had given up waiting for).
var redisWalletEnd = redis.NewScript(`
local h = tonumber(ARGV[3])
local settle = #KEYS > h + 1
local m = redis.call('GET', KEYS[1])
if m == 'done' or (m == 'released' and not settle) then return 0 end
redis.call('SET', KEYS[1], settle and 'done' or 'released', 'PX', ARGV[4])
for i = 2, h + 1 do redis.call('ZREM', KEYS[i], ARGV[1]) end
for i = h + 2, #KEYS do
  redis.call('INCRBY', KEYS[i], ARGV[2])
  redis.call('PEXPIRE', KEYS[i], ARGV[5 + i - h - 2])
end
return 1`)

// redisWalletSpend returns a counter's {spent, held}: KEYS[1] the spent
// total, KEYS[2] the holdings, ARGV[1] now (ms).
var redisWalletSpend = redis.NewScript(`
local held = 0
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[1], '+inf')) do
  held = held + (tonumber(string.match(m, '|(%d+)$')) or 0)
end
return {tonumber(redis.call('GET', KEYS[1]) or '0') or 0, held}`)

// redisMarkerKeep is how long a reservation's marker outlives the
// reservation, so that a late Settle or Release still counts once.
const redisMarkerKeep = time.Hour

// redisWallet is the [payment.Wallet] shared by a fleet: every budget
// counter lives in Redis ("<prefix>{payment}:spent:<counter>", an
// integer of micro-units, and "<prefix>{payment}:held:<counter>", the
// live reservations), and one Lua script per Reserve checks every
// counter and holds the amount, atomically, so budgets hold across
// replicas. All payment keys share one hash tag, so that the counters
// of a fleet, an identity and an origin that one Reserve touches live in
// one Cluster slot. Reservations expire after the TTL ([Options.ReservationTTL]):
// the script drops expired holdings before it sums them.
//
// While Redis is down nothing is paid (Reserve fails with
// [payment.ErrUnavailable]): a per-replica fallback could not keep a
// fleet budget. A Settle that cannot reach Redis returns an error; the
// charge is still in the audit log (the ledger).
//
// Remembered quotes live under the origin's own tag
// ("<prefix>{<origin>}:quote", the wire form and, after "|", the end of
// its life in Unix ms), for [payment.DefaultQuoteTTL].
//
// Quoted runs for every request, so its answers (a quote or none) are
// kept in process memory for Options.L1TTL: another replica's new quote
// is seen up to that much later, this replica's own at once.
type redisWallet struct {
	r   *Redis
	ttl time.Duration
	l1  *cache.Cache // origin -> walletQuote; nil when disabled
}

// walletQuote is a remembered quote and the end of its life (Unix ms;
// 0: no quote).
type walletQuote struct {
	price payment.Amount
	until int64
}

// newRedisWallet returns the wallet of r.
func newRedisWallet(r *Redis) *redisWallet {
	w := &redisWallet{r: r, ttl: r.opts.ReservationTTL}
	if r.opts.L1TTL > 0 {
		w.l1 = cache.New(r.opts.L1TTL, 0) // swept by Redis.sweepL1
	}
	return w
}

// Wallet returns the fleet-wide payment Wallet.
func (r *Redis) Wallet() payment.Wallet { return r.wallet }

// payKey returns the payment key of kind for a counter or reservation.
func (k redisKeys) payKey(kind, name string) string {
	return k.prefix + "{payment}:" + kind + ":" + name
}

// quote returns the key of an origin's remembered quote.
func (k redisKeys) quote(origin string) string { return k.tagged(origin, "quote") }

// Reserve implements [payment.Wallet].
func (w *redisWallet) Reserve(ctx context.Context, req payment.Request) (payment.Reservation, error) {
	if err := payment.CheckCap(req); err != nil {
		return payment.Reservation{}, err
	}
	now := w.r.opts.Clock.Now()
	res := payment.Reservation{ID: payment.NewReservationID(), Request: req, At: now, Expires: now.Add(w.ttl),
		Counters: payment.Counters(req.Policy.Budgets, req.Identity, req.Origin, req.Amount.Currency, now)}
	keys := []string{w.r.keys.payKey("res", res.ID)}
	args := []any{now.UnixMilli(), res.Expires.UnixMilli(), member(res), req.Amount.Units,
		(w.ttl + redisPaceKeepMargin).Milliseconds(), (w.ttl + redisMarkerKeep).Milliseconds()}
	for _, c := range res.Counters {
		keys = append(keys, w.r.keys.payKey("spent", c.ID()), w.r.keys.payKey("held", c.ID()))
		args = append(args, c.Budget.Limit.Units)
	}
	var over int64
	ok := w.r.call(ctx, "payment reserve", func(ctx context.Context) error {
		var err error
		over, err = redisWalletReserve.Run(ctx, w.r.client, keys, args...).Int64()
		return err
	})
	switch {
	case !ok:
		return payment.Reservation{}, fmt.Errorf("reserving %s: %w", req.Amount, payment.ErrUnavailable)
	case over < 0 || over > int64(len(res.Counters)):
		return payment.Reservation{}, fmt.Errorf("reserve script returned %d: %w", over, payment.ErrUnavailable)
	case over > 0:
		return payment.Reservation{}, &payment.BudgetError{Counter: res.Counters[over-1]}
	}
	return res, nil
}

// member is a reservation's member in the holdings: "id|units".
func member(res payment.Reservation) string {
	return res.ID + "|" + strconv.FormatInt(res.Request.Amount.Units, 10)
}

// Settle implements [payment.Wallet].
func (w *redisWallet) Settle(ctx context.Context, res payment.Reservation, charged payment.Amount) (payment.Settlement, error) {
	if err := payment.CheckCharge(res, charged); err != nil {
		return payment.Settlement{}, err
	}
	done, err := w.end(ctx, res, charged, payment.SettleCounters(res, charged))
	if err != nil {
		return payment.Settlement{}, fmt.Errorf("recording the charge of %s: %w", charged, err)
	}
	return payment.Settlement{Charged: charged, Over: payment.IsOver(res, charged), Duplicate: !done}, nil
}

// Release implements [payment.Wallet].
func (w *redisWallet) Release(ctx context.Context, res payment.Reservation) error {
	if res.ID == "" {
		return errors.New("releasing no reservation")
	}
	if _, err := w.end(ctx, res, payment.Amount{}, nil); err != nil {
		return fmt.Errorf("releasing %s: %w", res.Request.Amount, err)
	}
	return nil
}

// end runs [redisWalletEnd] for res, adding charged to the spent totals of
// spend; it reports whether the reservation was still open.
func (w *redisWallet) end(ctx context.Context, res payment.Reservation, charged payment.Amount, spend []payment.Counter) (bool, error) {
	now := w.r.opts.Clock.Now()
	keys := []string{w.r.keys.payKey("res", res.ID)}
	for _, c := range res.Counters {
		keys = append(keys, w.r.keys.payKey("held", c.ID()))
	}
	args := []any{member(res), charged.Units, len(res.Counters), (w.ttl + redisMarkerKeep).Milliseconds()}
	for _, c := range spend {
		keys = append(keys, w.r.keys.payKey("spent", c.ID()))
		args = append(args, max(c.End.Add(payment.SpentRetention).Sub(now), time.Second).Milliseconds())
	}
	var n int64
	ok := w.r.call(ctx, "payment settle", func(ctx context.Context) error {
		var err error
		n, err = redisWalletEnd.Run(ctx, w.r.client, keys, args...).Int64()
		return err
	})
	if !ok {
		return false, payment.ErrUnavailable
	}
	return n == 1, nil
}

// Spent implements [payment.Wallet].
func (w *redisWallet) Spent(ctx context.Context, q payment.SpendQuery) (payment.Spend, error) {
	now := w.r.opts.Clock.Now()
	c := payment.QueryCounter(q, now)
	var v []int64
	ok := w.r.call(ctx, "payment spent", func(ctx context.Context) error {
		var err error
		v, err = redisWalletSpend.Run(ctx, w.r.client,
			[]string{w.r.keys.payKey("spent", c.ID()), w.r.keys.payKey("held", c.ID())}, now.UnixMilli()).Int64Slice()
		if err == nil && len(v) != 2 {
			err = fmt.Errorf("spend script returned %d values, want 2", len(v))
		}
		return err
	})
	if !ok {
		return payment.Spend{}, payment.ErrUnavailable
	}
	return payment.Spend{Spent: payment.Amount{Currency: q.Currency, Units: v[0]},
		Reserved: payment.Amount{Currency: q.Currency, Units: v[1]}}, nil
}

// Remember implements [payment.Wallet].
func (w *redisWallet) Remember(ctx context.Context, origin string, price payment.Amount) error {
	until := w.r.opts.Clock.Now().Add(payment.DefaultQuoteTTL).UnixMilli()
	if w.l1 != nil {
		w.l1.SetDefault(origin, walletQuote{price: price, until: until})
	}
	ok := w.r.call(ctx, "payment remember", func(ctx context.Context) error {
		return w.r.client.Set(ctx, w.r.keys.quote(origin), price.String()+"|"+strconv.FormatInt(until, 10),
			payment.DefaultQuoteTTL+redisPaceKeepMargin).Err()
	})
	if !ok {
		return payment.ErrUnavailable
	}
	return nil
}

// Quoted implements [payment.Wallet]. An unreadable, missing or expired
// quote (by the caller's clock: "price|until", Unix ms), or Redis down,
// is "none".
func (w *redisWallet) Quoted(ctx context.Context, origin string) (payment.Amount, bool) {
	q, ok := walletQuote{}, false
	if w.l1 != nil {
		var v any
		if v, ok = w.l1.Get(origin); ok {
			q = v.(walletQuote)
		}
	}
	if !ok {
		if q, ok = w.readQuote(ctx, origin); !ok {
			return payment.Amount{}, false
		}
		if w.l1 != nil {
			w.l1.SetDefault(origin, q)
		}
	}
	if q.until <= w.r.opts.Clock.Now().UnixMilli() {
		return payment.Amount{}, false
	}
	return q.price, true
}

// readQuote reads origin's quote from Redis; false when Redis failed
// (a missing or unreadable quote is the zero [walletQuote]).
func (w *redisWallet) readQuote(ctx context.Context, origin string) (walletQuote, bool) {
	var v string
	ok := w.r.call(ctx, "payment quoted", func(ctx context.Context) error {
		var err error
		v, err = w.r.client.Get(ctx, w.r.keys.quote(origin)).Result()
		if errors.Is(err, redis.Nil) {
			v, err = "", nil
		}
		return err
	})
	if !ok {
		return walletQuote{}, false
	}
	price, until, _ := strings.Cut(v, "|")
	ms, err := strconv.ParseInt(until, 10, 64)
	a, perr := payment.ParseAmount(price)
	if err != nil || perr != nil {
		return walletQuote{}, true
	}
	return walletQuote{price: a, until: ms}, true
}
