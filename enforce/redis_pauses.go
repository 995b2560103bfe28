package enforce

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisPause extends the pause KEYS[1] to ARGV[1] (Unix ms), never
// shortening it; the key is kept ARGV[2] ms.
var redisPause = redis.NewScript(`
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local untilms = tonumber(ARGV[1])
if cur and cur >= untilms then return cur end
redis.call('SET', KEYS[1], untilms, 'PX', ARGV[2])
return untilms`)

// RedisPauses is the Pauses shared by a fleet: the end of each origin's
// pause lives in Redis ("<prefix>pause:<origin>", Unix milliseconds), so
// a 503/429 seen by one replica pauses the origin for all of them. Pause
// extends with a Lua script (the later end wins); the key expires when
// the pause ends (plus a margin for clock skew). Times are the callers'
// (see RedisPacer on clocks).
//
// Every pause is also recorded in the local Pauses
// (RedisOptions.LocalPauses), which answers while Redis is down.
type RedisPauses struct {
	r     *Redis
	local Pauses
}

// Pause implements Pauses.
func (p *RedisPauses) Pause(ctx context.Context, origin string, until time.Time) error {
	if err := p.local.Pause(ctx, origin, until); err != nil {
		return err
	}
	keep := until.Sub(p.r.opts.Clock.Now()) + redisPaceKeepMargin
	if keep <= 0 {
		return nil // already over
	}
	p.r.call(ctx, "pause", func(ctx context.Context) error {
		return redisPause.Run(ctx, p.r.client, []string{p.r.keys.pause(origin)},
			until.UnixMilli(), max(keep.Milliseconds(), 1)).Err()
	})
	return nil
}

// PausedUntil implements Pauses.
func (p *RedisPauses) PausedUntil(ctx context.Context, origin string, now time.Time) (time.Time, bool, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, false, err
	}
	var ms int64
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
	p.r.call(ctx, "resume", func(ctx context.Context) error {
		return p.r.client.Del(ctx, p.r.keys.pause(origin)).Err()
	})
	return nil
}
