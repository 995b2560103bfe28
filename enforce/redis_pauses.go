package enforce

import (
	"context"
	"errors"
	"time"

	"github.com/patrickmn/go-cache"
	"github.com/redis/go-redis/v9"
)

// redisPause extends the pause KEYS[1] to ARGV[1] (Unix ms), never
// shortening it; the key is kept ARGV[2] ms. It announces the change
// (ARGV[4]) on channel ARGV[3].
var redisPause = redis.NewScript(`
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local untilms = tonumber(ARGV[1])
if cur and cur >= untilms then return cur end
redis.call('SET', KEYS[1], untilms, 'PX', ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return untilms`)

// redisPauseL1Max caps how long a pause lookup is served from process
// memory (shorter when RedisOptions.L1TTL is).
const redisPauseL1Max = time.Second

// RedisPauses is the Pauses shared by a fleet: the end of each origin's
// pause lives in Redis ("<prefix>pause:<origin>", Unix milliseconds), so
// a 503/429 seen by one replica pauses the origin for all of them. Pause
// extends with a Lua script (the later end wins); the key expires when
// the pause ends (plus a margin for clock skew). Times are the callers'
// (see RedisPacer on clocks).
//
// PausedUntil runs for every request, so its answers are kept in process
// memory for at most a second (or L1TTL if shorter; never when the L1 is
// disabled); Pause and Resume announce the change and every replica drops
// its copy at once.
//
// Every pause is also recorded in the local Pauses
// (RedisOptions.LocalPauses), which answers while Redis is down.
type RedisPauses struct {
	r     *Redis
	l1    *cache.Cache // origin -> int64 end of pause (Unix ms, 0: none); nil when disabled
	local Pauses
}

func newRedisPauses(r *Redis) *RedisPauses {
	p := &RedisPauses{r: r, local: r.opts.LocalPauses}
	if r.opts.L1TTL > 0 {
		ttl := min(r.opts.L1TTL, redisPauseL1Max)
		p.l1 = cache.New(ttl, max(ttl, time.Minute))
	}
	return p
}

// Pause implements Pauses.
func (p *RedisPauses) Pause(ctx context.Context, origin string, until time.Time) error {
	if err := p.local.Pause(ctx, origin, until); err != nil {
		return err
	}
	p.dropL1(origin)
	keep := until.Sub(p.r.opts.Clock.Now()) + redisPaceKeepMargin
	if keep <= 0 {
		return nil // already over
	}
	p.r.call(ctx, "pause", func(ctx context.Context) error {
		return redisPause.Run(ctx, p.r.client, []string{p.r.keys.pause(origin)},
			until.UnixMilli(), max(keep.Milliseconds(), 1),
			p.r.keys.events(), p.r.event(eventPause, origin)).Err()
	})
	return nil
}

// PausedUntil implements Pauses.
func (p *RedisPauses) PausedUntil(ctx context.Context, origin string, now time.Time) (time.Time, bool, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, false, err
	}
	ms, cached := int64(0), false
	if p.l1 != nil && p.r.health.up.Load() {
		if v, ok := p.l1.Get(origin); ok {
			ms, cached = v.(int64), true
		}
	}
	if !cached {
		ok := p.r.call(ctx, "paused", func(ctx context.Context) (err error) {
			ms, err = p.r.client.Get(ctx, p.r.keys.pause(origin)).Int64()
			if errors.Is(err, redis.Nil) {
				ms, err = 0, nil
			}
			return err
		})
		if !ok {
			return p.local.PausedUntil(ctx, origin, now)
		}
		if p.l1 != nil {
			p.l1.SetDefault(origin, ms)
		}
	}
	if ms == 0 {
		return time.Time{}, false, nil
	}
	until := time.UnixMilli(ms)
	if !until.After(now) {
		return time.Time{}, false, nil
	}
	return until, true, nil
}

// Resume implements Pauses.
func (p *RedisPauses) Resume(ctx context.Context, origin string) error {
	if err := p.local.Resume(ctx, origin); err != nil {
		return err
	}
	p.dropL1(origin)
	p.r.call(ctx, "resume", func(ctx context.Context) error {
		_, err := p.r.client.Pipelined(ctx, func(pl redis.Pipeliner) error {
			pl.Del(ctx, p.r.keys.pause(origin))
			pl.Publish(ctx, p.r.keys.events(), p.r.event(eventPause, origin))
			return nil
		})
		return err
	})
	return nil
}

// dropL1 forgets origin's cached pause lookup.
func (p *RedisPauses) dropL1(origin string) {
	if p.l1 != nil {
		p.l1.Delete(origin)
	}
}
