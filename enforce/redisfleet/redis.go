package redisfleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"strings"
	"sync"
	"time"

	"github.com/patrickmn/go-cache"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Defaults of Options.
const (
	defaultPrefix        = "robotsgate:"
	defaultL1TTL         = 10 * time.Second
	defaultTimeout       = 150 * time.Millisecond
	defaultLockTTL       = 3 * time.Second
	defaultRetryInterval = time.Second
	defaultLogInterval   = time.Minute
)

// Options configures New. Zero values take the documented
// defaults.
type Options struct {
	// Prefix starts every Redis key and channel name robotsgate uses;
	// default [defaultPrefix]. Replicas that share robots.txt state
	// must use the same prefix.
	Prefix string
	// [enforce.Clock] is the Enforcer's clock: the pacer reads it and passes its
	// time to Redis (see Pacer). Default [enforce.SystemClock]{}.
	Clock enforce.Clock
	// Log receives the outage and recovery messages (at most one per
	// LogInterval while Redis is down).
	Log zerolog.Logger
	// MaxBytes is the robots.txt parse limit used when an entry loaded
	// from Redis is parsed again ([enforce.Entry.Rebuild]): the Enforcer's
	// MaxBytes (robots.max_bytes). Required.
	MaxBytes int
	// L1TTL is how long an entry read from Redis is served from process
	// memory before Redis is asked again; default [defaultL1TTL]. A
	// negative value disables the L1 cache.
	L1TTL time.Duration
	// Timeout bounds every Redis call made on a request's path; when it
	// passes, the local fallback answers the call, and Redis is marked
	// down after three such calls in a row (a refused or broken
	// connection marks it down at once). Default [defaultTimeout].
	Timeout time.Duration
	// LockTTL is the lifetime of the per-origin fetch lock. Its holder
	// extends it every LockTTL/3 while it fetches, so a crashed holder
	// blocks the origin for at most LockTTL. Default [defaultLockTTL].
	LockTTL time.Duration
	// RetryInterval is how often Redis is probed (PING) while it is
	// considered down; default [defaultRetryInterval].
	RetryInterval time.Duration
	// LogInterval is the minimum time between two "Redis still down" log
	// lines; default [defaultLogInterval].
	LogInterval time.Duration

	// ReservationTTL is how long a payment reservation holds its amount
	// when it is neither settled nor released (a replica crashed);
	// default [payment.DefaultReservationTTL].
	ReservationTTL time.Duration

	// Local is the process-local Store used while Redis is down; required
	// (cmd/robotsgate passes the bounded MemoryStore it would use without
	// Redis). The pacer and pauses fall back to a [politeness.MemoryPacer]
	// and MemoryPauses of their own.
	Local enforce.Store
}

// Redis is robotsgate's optional fleet-wide layer: a robots.txt Store
// with fleet-wide single fetch (Store), a crawl-delay Pacer
// (Pacer), a Pauses (Pauses) and a payment Wallet (Wallet; it does
// not fall back: see [redisWallet]), all on one Redis database and
// all falling back to process-local implementations while Redis is down
// or slow. Requests never fail because of Redis: a failed or slow call is
// answered locally; a failed connection (or three slow calls in a row)
// marks Redis down, after which it is probed every RetryInterval and used
// again as soon as it answers.
//
// A Redis is safe for concurrent use. Close it when done.
type Redis struct {
	client   redis.UniversalClient
	topology Topology
	opts     Options
	keys     redisKeys
	health   *redisHealth
	id       string // this instance, in published messages

	store  *redisStore
	pacer  *redisPacer
	pauses *redisPauses
	wallet *redisWallet

	waitMu  sync.Mutex
	waiters map[string]map[chan struct{}]struct{} // Once waiters by the Store key's string form

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New connects to the Redis database at rawURL
// ("redis://[user:password@]host[:port][/db]", or "rediss://" for TLS)
// and returns the fleet-wide Store, Pacer and Pauses on it. It fails for
// an unusable URL and for a setting that cannot work, which the servers
// that answered say at once (setup.go: an unknown master name, a missing
// database, the wrong topology, refused credentials, a certificate that
// does not verify). When Redis does not answer at start, the Redis starts
// in fallback mode (local state, logged) and switches to Redis when it
// answers. ctx bounds the initial checks.
func New(ctx context.Context, rawURL string, opts Options) (*Redis, error) {
	target, err := parseRedisURL(rawURL)
	if err != nil {
		return nil, err
	}
	if opts.MaxBytes <= 0 || opts.Local == nil {
		return nil, errors.New("redis: Options.MaxBytes and Options.Local are required")
	}
	if strings.ContainsAny(opts.Prefix, "{}") {
		return nil, errors.New("redis: Options.Prefix must not hold { or } (the keys' hash tags)")
	}
	opts = opts.withDefaults()
	client, addr := target.newClient(opts.Timeout)

	r := &Redis{
		client:   client,
		topology: target.topology,
		opts:     opts,
		keys:     redisKeys{prefix: opts.Prefix},
		id:       newToken(),
	}
	rctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.health = newRedisHealth(rctx, &r.wg, opts, addr, r.ping)
	r.store = newRedisStore(r)
	r.pacer = &redisPacer{r: r, local: politeness.NewMemoryPacer(opts.Clock)}
	r.pauses = newRedisPauses(r)
	r.wallet = newRedisWallet(r)
	// Pauses recorded during an outage reach the fleet when Redis returns.
	r.health.onUp = func() { r.pauses.flush(rctx) }

	r.health.describe = target.cannotWork
	pctx, pcancel := context.WithTimeout(ctx, max(opts.Timeout, time.Second))
	err = r.checkStart(pctx, target) // setup.go
	pcancel()
	if err != nil {
		cancel()
		_ = client.Close()
		return nil, err
	}
	r.wg.Add(2)
	go r.subscribe(rctx)
	go r.sweepL1(rctx)
	return r, nil
}

// l1SweepEvery is how often expired L1 copies are dropped.
const l1SweepEvery = time.Minute

// sweepL1 drops the expired copies of the L1 caches every l1SweepEvery
// until ctx ends (Close). The caches run no janitor of their own, so
// Close stops every goroutine a Redis started.
func (r *Redis) sweepL1(ctx context.Context) {
	defer r.wg.Done()
	t := time.NewTicker(l1SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, c := range []*cache.Cache{r.store.l1, r.pauses.l1, r.wallet.l1} {
				if c != nil {
					c.DeleteExpired()
				}
			}
		}
	}
}

// SetRedisClientLog sends go-redis's own log lines (dial failures and
// the like, written to stderr by default) to log at debug level; outages
// are reported by Redis itself, once per LogInterval. It changes a
// process-wide setting of go-redis: call it from main.
func SetRedisClientLog(log zerolog.Logger) { redis.SetLogger(redisClientLog{log}) }

// redisClientLog adapts zerolog to go-redis's logging interface.
type redisClientLog struct{ log zerolog.Logger }

// Printf implements go-redis's internal.Logging.
func (l redisClientLog) Printf(_ context.Context, format string, v ...any) {
	l.log.Debug().Str("component", "go-redis").Msgf(format, v...)
}

// Store returns the fleet-wide robots.txt Store (also an [enforce.Coordinator],
// and it reports its health: Healthy).
func (r *Redis) Store() enforce.Store { return r.store }

// Pacer returns the fleet-wide crawl-delay Pacer.
func (r *Redis) Pacer() politeness.Pacer { return r.pacer }

// Pauses returns the fleet-wide Pauses.
func (r *Redis) Pauses() politeness.Pauses { return r.pauses }

// Problem returns why the Redis setting cannot work, as the servers
// last said (a refused password, an unknown master name…), while that
// keeps Redis out of use; "" otherwise, and during an ordinary outage.
func (r *Redis) Problem() string {
	r.health.mu.Lock()
	defer r.health.mu.Unlock()
	return r.health.problem
}

// Healthy reports whether Redis is in use (true) or the local fallbacks
// answer because Redis failed or was slow (false).
func (r *Redis) Healthy() bool { return r.health.up.Load() }

// Fallbacks returns how many calls the local fallbacks have answered
// because Redis was down, failed or slow, since New. Metrics export
// it as a counter.
func (r *Redis) Fallbacks() uint64 { return r.health.fallbacks.Load() }

// Switches returns how many times this replica switched from Redis to
// its local fallbacks (toLocal) and back (toFleet), since New.
func (r *Redis) Switches() (toLocal, toFleet uint64) {
	return r.health.toLocal.Load(), r.health.toFleet.Load()
}

// Close stops the background work (probing, subscription) and closes the
// connections to Redis. The Store, Pacer and Pauses must not be used
// afterwards.
func (r *Redis) Close() error {
	r.cancel()
	// After this, health sees the cancelled context and starts no prober.
	r.health.mu.Lock()
	r.health.mu.Unlock() //nolint:staticcheck // an empty critical section orders Close after any fail in progress
	err := r.client.Close()
	r.wg.Wait()
	if err != nil && !errors.Is(err, redis.ErrClosed) {
		return fmt.Errorf("closing redis: %w", err)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.Prefix == "" {
		o.Prefix = defaultPrefix
	}
	if o.Clock == nil {
		o.Clock = enforce.SystemClock{}
	}
	if o.L1TTL == 0 {
		o.L1TTL = defaultL1TTL
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	if o.LockTTL <= 0 {
		o.LockTTL = defaultLockTTL
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = defaultRetryInterval
	}
	if o.LogInterval <= 0 {
		o.LogInterval = defaultLogInterval
	}
	if o.ReservationTTL <= 0 {
		o.ReservationTTL = payment.DefaultReservationTTL
	}
	return o
}

// call runs fn with the per-call timeout. It reports false (after
// recording the failure) when Redis is down or fn failed, in which case
// the caller answers locally.
func (r *Redis) call(ctx context.Context, op string, fn func(ctx context.Context) error) bool {
	if !r.health.up.Load() {
		r.health.fallback(ctx)
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	err := fn(cctx)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			// The caller gave up; that says nothing about Redis.
			r.health.fallbacks.Add(1)
			return false
		}
		r.health.fail(ctx, op, err)
		return false
	}
	r.health.ok()
	return true
}

// redisKeys names robotsgate's Redis keys and channel. Every key of one
// origin carries the same hash tag, the origin in braces
// ("<prefix>{https://example.com}:robots"), so that in a Redis Cluster
// all of them live in one slot and a script never touches two slots. The
// names are made of a Store key's string form ([enforce.Key.String]): one
// longer than its origin (a tdmrep.json key, "<origin>/.well-known/tdmrep.json",
// a license document's, or a key naming an address) keeps its origin's
// tag and adds the rest after the kind.
type redisKeys struct{ prefix string }

func (k redisKeys) robots(key string) string { return k.tagged(key, "robots") }
func (k redisKeys) lock(key string) string   { return k.tagged(key, "lock") }
func (k redisKeys) pace(origin string) string {
	return k.tagged(origin, "pace")
}
func (k redisKeys) pause(origin string) string { return k.tagged(origin, "pause") }

// tagged returns "<prefix>{<origin of key>}:<kind><rest of key>".
func (k redisKeys) tagged(key, kind string) string {
	tag := originOf(key)
	return k.prefix + "{" + tag + "}:" + kind + strings.TrimPrefix(key, tag)
}

// originOf returns the origin ("scheme://host[:port]") a Store key
// starts with: the key up to the first character after "://" that an
// origin's host and port never hold, such as the "/" of the TDMRep key
// or the separator of an address the key adds ([enforce.Key.String]). It is
// the whole key when it has no "://", and "-" for an empty key, since an
// empty hash tag would not count as one.
func originOf(key string) string {
	if key == "" {
		return "-"
	}
	_, after, ok := strings.Cut(key, "://")
	if !ok {
		return key
	}
	if i := strings.IndexFunc(after, notInAuthority); i >= 0 {
		return key[:len(key)-len(after)+i]
	}
	return key
}

// notInAuthority reports whether r cannot appear in a canonical origin's
// host and port (ASCII letters and digits, "-", ".", "_", "~", "%", ":",
// and the brackets of an IPv6 literal).
func notInAuthority(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("-._~%:[]", r)
}

// events is the channel on which replicas announce that an origin's
// robots.txt entry or pause changed; the message is
// "<kind> <replica id> <origin>" (see [Redis.event]). It is a classic
// Pub/Sub channel: in a Redis Cluster every PUBLISH is relayed to every
// node (see docs/redis.md for the cost), and a subscriber may listen on
// any node.
func (k redisKeys) events() string { return k.prefix + "events" }

// newToken returns a random 128-bit hex string.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
