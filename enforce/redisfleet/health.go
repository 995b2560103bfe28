package redisfleet

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// redisSlowTrips is how many consecutive calls must run over their
// timeout before a slow Redis is marked down: one slow call (a GC pause,
// a busy moment) must not switch the fleet to per-replica pacing for a
// whole retry interval.
const redisSlowTrips = 3

// redisHealth is the circuit breaker in front of Redis. While up, calls go
// to Redis; a hard failure (connection refused or reset, an error reply)
// marks it down at once, and so do [redisSlowTrips] consecutive timeouts
// (each timed-out call is answered locally). Once down, calls go straight
// to the local fallbacks (no per-request timeout is paid) while a single
// goroutine PINGs Redis every RetryInterval and marks it up again when it
// answers. Outages are logged when they start, at most once per
// LogInterval while they last, and when they end.
type redisHealth struct {
	ctx   context.Context // ends at Close
	wg    *sync.WaitGroup
	log   zerolog.Logger
	addr  string
	ping  func(context.Context) error
	retry time.Duration
	every time.Duration // log interval
	tmo   time.Duration

	up        atomic.Bool
	fallbacks atomic.Uint64
	toLocal   atomic.Uint64 // switches from Redis to the local fallbacks
	toFleet   atomic.Uint64 // switches back to Redis
	slow      atomic.Int32  // consecutive timed-out calls while up
	onUp      func()        // run (in its own goroutine) after each recovery
	// describe words an error that no retry mends ("" for any other):
	// the setting cannot work (setup.go).
	describe func(error) string

	mu         sync.Mutex
	upCh       chan struct{} // closed while up; replaced when going down
	downSince  time.Time
	lastLog    time.Time
	lastErr    error
	problem    string    // describe(lastErr) while down
	logged     string    // the problem the last error line named
	atLog      uint64    // fallbacks at the last log line
	lastKeyLog time.Time // last WRONGTYPE log line
}

func newRedisHealth(ctx context.Context, wg *sync.WaitGroup, o Options, addr string, ping func(context.Context) error) *redisHealth {
	h := &redisHealth{
		ctx: ctx, wg: wg, log: o.Log, addr: addr, ping: ping,
		retry: o.RetryInterval, every: o.LogInterval, tmo: max(o.Timeout, time.Second),
		upCh: make(chan struct{}),
	}
	close(h.upCh)
	h.up.Store(true)
	return h
}

// upChan returns a channel that is closed while Redis is up.
func (h *redisHealth) upChan() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.upCh
}

// ok records a successful call: the count of consecutive timeouts
// starts again.
func (h *redisHealth) ok() {
	if h.slow.Load() != 0 {
		h.slow.Store(0)
	}
}

// isTimeout reports whether err is a call running over its deadline
// (rather than a refused or broken connection).
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isWrongType reports whether err is Redis's WRONGTYPE error reply: a
// key holding another type than the command expects. That is a bad key,
// for one origin, not a Redis that is down.
func isWrongType(err error) bool { return redis.HasErrorPrefix(err, "WRONGTYPE") }

// fail records that op failed with err: the call is answered locally and
// Redis is marked down (starting the prober) if it was up and err is a
// hard failure or the [redisSlowTrips]-th consecutive timeout. A WRONGTYPE
// error (see [isWrongType]) is logged, at most once per log interval, and
// never marks Redis down.
func (h *redisHealth) fail(_ context.Context, op string, err error) {
	n := h.fallbacks.Add(1)
	if isWrongType(err) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if now := time.Now(); now.Sub(h.lastKeyLog) >= h.every {
			h.lastKeyLog = now
			h.log.Warn().Err(err).Str("redis", h.addr).Str("op", op).
				Msg("redis key of the wrong type (written by something else than robotsgate?): this call is answered locally")
		}
		return
	}
	if op != "connect" && h.up.Load() && isTimeout(err) && h.slow.Add(1) < redisSlowTrips {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.noteErrLocked(err)
	if !h.up.Load() {
		h.logStillDownLocked(n)
		return
	}
	if h.ctx.Err() != nil {
		return // closing
	}
	h.up.Store(false)
	h.toLocal.Add(1)
	h.slow.Store(0)
	h.upCh = make(chan struct{})
	now := time.Now()
	h.downSince, h.lastLog, h.atLog = now, now, n
	if h.problem != "" {
		h.logged = h.problem
		h.log.Error().Str("redis", h.addr).Str("op", op).
			Msg("redis setting cannot work: " + h.problem + "; fleet state: local only (robots.txt cache, pacing and pauses of this replica alone)")
	} else {
		h.log.Warn().Err(err).Str("redis", h.addr).Str("op", op).
			Msg("redis unavailable: using local robots.txt cache, pacing and pauses until it answers again")
	}
	h.wg.Add(1)
	go h.probe()
}

// fallback records a call answered locally because Redis is down.
func (h *redisHealth) fallback(_ context.Context) {
	n := h.fallbacks.Add(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logStillDownLocked(n)
}

func (h *redisHealth) logStillDownLocked(n uint64) {
	now := time.Now()
	if h.up.Load() || now.Sub(h.lastLog) < h.every {
		return
	}
	if h.problem != "" {
		h.log.Error().Str("redis", h.addr).Dur("down_for", now.Sub(h.downSince)).Uint64("fallbacks", n-h.atLog).
			Msg("redis setting still cannot work: " + h.problem + "; fleet state: local only")
		h.lastLog, h.atLog = now, n
		return
	}
	h.log.Warn().AnErr("last_error", h.lastErr).Str("redis", h.addr).
		Dur("down_for", now.Sub(h.downSince)).Uint64("fallbacks", n-h.atLog).
		Msg("redis still unavailable: answering locally")
	h.lastLog, h.atLog = now, n
}

// noteErrLocked records err as the last error, and whether it says the
// setting cannot work. While down, a problem that was not there before
// is logged at once (going down logs its own line).
func (h *redisHealth) noteErrLocked(err error) {
	h.lastErr = err
	was := h.problem
	h.problem = ""
	if h.describe != nil {
		h.problem = h.describe(err)
	}
	// A problem is logged at once when it is new, not when a transient
	// error (a dropped connection) came between two of the same: those
	// wait for the log interval like every other line.
	if h.problem != "" && was == "" && !h.up.Load() &&
		(h.problem != h.logged || time.Since(h.lastLog) >= h.every) {
		h.lastLog, h.logged = time.Now(), h.problem
		h.log.Error().Str("redis", h.addr).Dur("down_for", h.lastLog.Sub(h.downSince)).
			Msg("redis setting cannot work: " + h.problem + "; fleet state: local only")
	}
}

// probe PINGs Redis every retry interval until it answers (marking it up)
// or the Redis is closed.
func (h *redisHealth) probe() {
	defer h.wg.Done()
	t := time.NewTicker(h.retry)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(h.ctx, h.tmo)
		err := h.ping(ctx)
		cancel()
		h.mu.Lock()
		if err != nil {
			h.noteErrLocked(err)
			if h.problem != "" {
				h.logStillDownLocked(h.fallbacks.Load())
			}
			h.mu.Unlock()
			continue
		}
		h.problem, h.logged = "", ""
		h.up.Store(true)
		h.toFleet.Add(1)
		close(h.upCh)
		h.log.Info().Str("redis", h.addr).Int64("down_for_ms", time.Since(h.downSince).Milliseconds()).
			Uint64("fallbacks", h.fallbacks.Load()-h.atLog).
			Msg("redis available again: fleet-wide cache, pacing and pauses resumed")
		h.mu.Unlock()
		if h.onUp != nil {
			h.onUp()
		}
		return
	}
}
