package redisfleet

import (
	"context"
	"errors"
	"fmt"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/patrickmn/go-cache"
	"github.com/redis/go-redis/v9"
)

// redisPauseParse is the Lua prelude that reads the pause record KEYS[1]
// ("since|until|streak", Unix ms; a bare number, the form of earlier
// versions, is an end of pause) into since, untilms and n.
const redisPauseParse = `
local since, untilms, n = 0, 0, 0
local cur = redis.call('GET', KEYS[1])
if cur then
  local a, b, c = string.match(cur, '^(%d+)|(%d+)|(%d+)$')
  if a then since, untilms, n = tonumber(a), tonumber(b), tonumber(c)
  elseif tonumber(cur) then untilms = tonumber(cur) end
end
local function store(keep)
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > keep then keep = ttl end
  if keep < 1 then keep = 1 end
  redis.call('SET', KEYS[1], string.format('%.0f|%.0f|%.0f', since, untilms, n), 'PX', string.format('%.0f', keep))
end
`

// redisBackoff records a 503/429 seen at ARGV[1] (ms), fleet-wide: unless
// the current pause runs past now, the streak grows; the pause is
// ARGV[2] ms when > 0, else the streak's step of ARGV[3] (the
// comma-separated BackoffPolicy.Steps in ms; the last one for a longer
// streak); never shortened. The record is kept ARGV[4] (the cap) plus
// ARGV[5] ms after the pause ends (the streak's memory). A change is
// announced (ARGV[7]) on channel ARGV[6]. It returns {extended, until,
// streak}.
var redisBackoff = redis.NewScript(redisPauseParse + `
local now = tonumber(ARGV[1])
local ra = tonumber(ARGV[2])
local steps = {}
for v in string.gmatch(ARGV[3], '%d+') do steps[#steps + 1] = tonumber(v) end
local maxd = tonumber(ARGV[4])
if n == 0 or now >= untilms then n = n + 1 end
local d = ra
if d <= 0 then d = steps[math.min(n, #steps)] end
if now + d <= untilms then return {0, untilms, n} end
untilms = now + d
since = now
store(untilms - now + maxd + tonumber(ARGV[5]))
redis.call('PUBLISH', ARGV[6], ARGV[7])
return {1, untilms, n}`)

// redisPauseMerge extends the pause KEYS[1] to ARGV[2] (ms) as set at
// ARGV[3] with streak ARGV[4] (the larger streak is kept), never
// shortening it; ARGV[1] is now, ARGV[5] the keep margin (ms). A change
// is announced (ARGV[7]) on channel ARGV[6]. It returns 1 when the pause
// was extended.
var redisPauseMerge = redis.NewScript(redisPauseParse + `
local now = tonumber(ARGV[1])
local nu = tonumber(ARGV[2])
local nn = tonumber(ARGV[4])
if nu <= untilms and nn <= n then return 0 end
local ext = 0
if nu > untilms then untilms = nu; since = tonumber(ARGV[3]); ext = 1 end
if nn > n then n = nn end
store(untilms - now + tonumber(ARGV[5]))
redis.call('PUBLISH', ARGV[6], ARGV[7])
return ext`)

// redisResumeSent deletes the pause record KEYS[1] unless its pause began
// after ARGV[1] (ms; -1: unconditionally), and announces (ARGV[3]) on
// channel ARGV[2] that it did. It returns 1 when it deleted the record.
var redisResumeSent = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
local since = tonumber(string.match(cur, '^(%d+)|') or '0')
local sent = tonumber(ARGV[1])
if sent >= 0 and sent < since then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1`)

// redisPauseL1Max caps how long a pause lookup is served from process
// memory (shorter when Options.L1TTL is).
const redisPauseL1Max = time.Second

// pauseRec is an origin's pause record (Unix ms); the zero value means
// none.
type pauseRec struct {
	since, until, n int64
}

// parsePauseRec reads "since|until|streak" (or a bare end of pause).
func parsePauseRec(v string) (pauseRec, error) {
	f := strings.Split(v, "|")
	var r pauseRec
	var err error
	switch len(f) {
	case 1:
		r.until, err = strconv.ParseInt(f[0], 10, 64)
	case 3:
		var e1, e2, e3 error
		r.since, e1 = strconv.ParseInt(f[0], 10, 64)
		r.until, e2 = strconv.ParseInt(f[1], 10, 64)
		r.n, e3 = strconv.ParseInt(f[2], 10, 64)
		err = errors.Join(e1, e2, e3)
	default:
		err = errors.New("not since|until|streak")
	}
	if err != nil {
		return pauseRec{}, fmt.Errorf("pause record %q: %w", v, err)
	}
	return r, nil
}

// redisPauses is the [politeness.Pauses] shared by a fleet: each
// origin's pause lives in Redis ("<prefix>pause:<origin>", the text
// "since|until|streak", times in Unix milliseconds), so a 503/429 seen by
// one replica pauses the origin for all of them. Lua scripts keep it
// consistent: Backoff counts the streak fleet-wide (the exponential
// backoff doubles with every replica's 503/429, not per replica) and
// never shortens a pause; ResumeSent (a 2xx) deletes the record only if
// the pause began at or before the 2xx request was sent, so an old
// answer never ends a newer pause set by another replica. The record
// expires BackoffMax after its pause ends (plus a margin for clock skew),
// which is how long the streak is remembered. Times are the callers'
// (see Pacer on clocks).
//
// PausedUntil runs for every request, so its answers are kept in process
// memory for at most a second (or L1TTL if shorter; never when the L1 is
// disabled); changes are announced and every replica drops its copy at
// once. ResumeSent, called for every 2xx, skips Redis when that copy says
// the origin has no record.
//
// Every pause is also recorded in the local Pauses
// (a [politeness.MemoryPauses]), which answers while Redis is down. A pause
// recorded while Redis was down is kept as pending: PausedUntil honours it
// after Redis returns (the later end wins), and it is written to Redis as
// soon as Redis answers again, so the fleet learns of it.
type redisPauses struct {
	r     *Redis
	l1    *cache.Cache // origin -> pauseRec; nil when disabled
	local *politeness.MemoryPauses

	mu      sync.Mutex
	pending map[string]pauseRec // pauses not yet in Redis
}

func newRedisPauses(r *Redis) *redisPauses {
	p := &redisPauses{r: r, local: politeness.NewMemoryPauses()}
	if r.opts.L1TTL > 0 {
		ttl := min(r.opts.L1TTL, redisPauseL1Max)
		p.l1 = cache.New(ttl, 0) // swept by Redis.sweepL1
	}
	return p
}

// Pause implements Pauses.
func (p *redisPauses) Pause(ctx context.Context, origin string, until time.Time) error {
	if err := p.local.Pause(ctx, origin, until); err != nil {
		return err
	}
	now := p.r.opts.Clock.Now()
	if !until.After(now) {
		return nil // already over
	}
	p.merge(ctx, origin, pauseRec{since: now.UnixMilli(), until: until.UnixMilli()}, now)
	return nil
}

// merge writes rec to Redis (never shortening the stored pause), or keeps
// it pending when Redis does not answer. It reports whether Redis took it.
func (p *redisPauses) merge(ctx context.Context, origin string, rec pauseRec, now time.Time) bool {
	p.dropL1(origin)
	ok := p.r.call(ctx, "pause", func(ctx context.Context) error {
		return redisPauseMerge.Run(ctx, p.r.client, []string{p.r.keys.pause(origin)},
			now.UnixMilli(), rec.until, rec.since, rec.n, redisPaceKeepMargin.Milliseconds(),
			p.r.keys.events(), p.r.event(eventPause, origin)).Err()
	})
	if !ok {
		p.addPending(origin, rec)
	}
	return ok
}

// Backoff implements [politeness.Pauses]: the streak and the pause are kept in
// Redis; while Redis is down, in the local Pauses (the pause then stays
// pending until Redis answers).
func (p *redisPauses) Backoff(ctx context.Context, origin string, now time.Time, retryAfter time.Duration, b politeness.BackoffPolicy) (time.Time, bool, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, false, err
	}
	p.dropL1(origin)
	var res []int64
	ok := p.r.call(ctx, "backoff", func(ctx context.Context) error {
		v, err := redisBackoff.Run(ctx, p.r.client, []string{p.r.keys.pause(origin)},
			now.UnixMilli(), max(retryAfter, 0).Milliseconds(), stepsMS(b), b.Max.Milliseconds(),
			redisPaceKeepMargin.Milliseconds(), p.r.keys.events(), p.r.event(eventPause, origin)).Int64Slice()
		if err == nil && len(v) != 3 {
			err = fmt.Errorf("backoff script returned %d values, want 3", len(v))
		}
		res = v
		return err
	})
	if !ok {
		until, extended, err := p.local.Backoff(ctx, origin, now, retryAfter, b)
		if err == nil && extended {
			p.addPending(origin, pauseRec{since: now.UnixMilli(), until: until.UnixMilli(), n: 1})
		}
		return until, extended, err
	}
	until := time.UnixMilli(res[1])
	if res[0] == 0 {
		return until, false, nil
	}
	// The local Pauses answer during an outage: let them know.
	if err := p.local.Pause(ctx, origin, until); err != nil {
		return until, true, err
	}
	return until, true, nil
}

// stepsMS returns b.Steps in milliseconds, comma-separated, for
// [redisBackoff].
func stepsMS(b politeness.BackoffPolicy) string {
	steps := b.Steps()
	ms := make([]string, len(steps))
	for i, d := range steps {
		ms[i] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	return strings.Join(ms, ",")
}

// PausedUntil implements Pauses: the later of Redis's pause and a pending
// one (recorded while Redis was down); the local Pauses while Redis is
// down.
func (p *redisPauses) PausedUntil(ctx context.Context, origin string, now time.Time) (time.Time, bool, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, false, err
	}
	rec, ok := p.lookup(ctx, origin)
	if !ok {
		return p.local.PausedUntil(ctx, origin, now)
	}
	ms := max(rec.until, p.pendingUntil(origin, now))
	if ms == 0 {
		return time.Time{}, false, nil
	}
	until := time.UnixMilli(ms)
	if !until.After(now) {
		return time.Time{}, false, nil
	}
	return until, true, nil
}

// lookup returns origin's pause record from the L1 or Redis; ok is false
// when Redis did not answer.
func (p *redisPauses) lookup(ctx context.Context, origin string) (pauseRec, bool) {
	if p.l1 != nil && p.r.health.up.Load() {
		if v, ok := p.l1.Get(origin); ok {
			return v.(pauseRec), true
		}
	}
	var rec pauseRec
	ok := p.r.call(ctx, "paused", func(ctx context.Context) error {
		v, err := p.r.client.Get(ctx, p.r.keys.pause(origin)).Result()
		if errors.Is(err, redis.Nil) {
			return nil
		}
		if err != nil {
			return err
		}
		if rec, err = parsePauseRec(v); err != nil {
			p.r.opts.Log.Warn().Err(err).Str("origin", origin).Msg("undecodable pause record in redis: treated as none")
		}
		return nil
	})
	if ok && p.l1 != nil {
		p.l1.SetDefault(origin, rec)
	}
	return rec, ok
}

// Resume implements Pauses: it ends origin's pause and streak,
// fleet-wide, unconditionally.
func (p *redisPauses) Resume(ctx context.Context, origin string) error {
	return p.ResumeSent(ctx, origin, time.Time{})
}

// ResumeSent implements [politeness.Pauses].
func (p *redisPauses) ResumeSent(ctx context.Context, origin string, sent time.Time) error {
	if err := p.local.ResumeSent(ctx, origin, sent); err != nil {
		return err
	}
	p.mu.Lock()
	if rec, ok := p.pending[origin]; ok && (sent.IsZero() || sent.UnixMilli() >= rec.since) {
		delete(p.pending, origin)
	}
	p.mu.Unlock()
	if p.l1 != nil && p.r.health.up.Load() {
		if v, ok := p.l1.Get(origin); ok && v.(pauseRec) == (pauseRec{}) {
			return nil // no record: nothing to end (the common 2xx)
		}
	}
	sentMS := int64(-1)
	if !sent.IsZero() {
		sentMS = sent.UnixMilli()
	}
	p.dropL1(origin)
	p.r.call(ctx, "resume", func(ctx context.Context) error {
		return redisResumeSent.Run(ctx, p.r.client, []string{p.r.keys.pause(origin)},
			sentMS, p.r.keys.events(), p.r.event(eventPause, origin)).Err()
	})
	return nil
}

// addPending keeps rec as a pause Redis has not seen (the later end wins).
func (p *redisPauses) addPending(origin string, rec pauseRec) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == nil {
		p.pending = make(map[string]pauseRec)
	}
	if cur, ok := p.pending[origin]; !ok || rec.until > cur.until {
		rec.n = max(rec.n, cur.n)
		p.pending[origin] = rec
	}
}

// pendingUntil returns the end (Unix ms) of origin's pending pause, 0
// when none runs at now.
func (p *redisPauses) pendingUntil(origin string, now time.Time) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	rec, ok := p.pending[origin]
	if !ok {
		return 0
	}
	if rec.until <= now.UnixMilli() {
		delete(p.pending, origin)
		return 0
	}
	return rec.until
}

// flush writes the pending pauses that still run to Redis (called when
// Redis answers again). Those Redis does not take stay pending.
func (p *redisPauses) flush(ctx context.Context) {
	now := p.r.opts.Clock.Now()
	p.mu.Lock()
	todo := make(map[string]pauseRec, len(p.pending))
	for origin, rec := range p.pending {
		if rec.until > now.UnixMilli() {
			todo[origin] = rec
		} else {
			delete(p.pending, origin)
		}
	}
	p.mu.Unlock()
	for origin, rec := range todo {
		if !p.merge(ctx, origin, rec, now) {
			return // Redis failed again: the rest stays pending
		}
		p.mu.Lock()
		if p.pending[origin] == rec { // unless a newer pause came meanwhile
			delete(p.pending, origin)
		}
		p.mu.Unlock()
	}
}

// dropL1 forgets origin's cached pause lookup.
func (p *redisPauses) dropL1(origin string) {
	if p.l1 != nil {
		p.l1.Delete(origin)
	}
}
