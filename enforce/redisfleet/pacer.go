package redisfleet

import (
	"context"
	"fmt"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisReserve hands out one crawl-delay slot, atomically. KEYS[1] holds
// the origin's next free slot (Unix ms); ARGV: now, delay, maxWait (ms),
// [redisPaceKeepMargin] (ms), floor (ms; 0 when none). It returns {ok, slot}:
// slot = max(now, next, floor); when slot-now > maxWait nothing changes
// and ok is 0, else next becomes slot+delay (if delay > 0), kept until
// then plus that margin.
var redisReserve = redis.NewScript(`
local now = tonumber(ARGV[1])
local delay = tonumber(ARGV[2])
local maxwait = tonumber(ARGV[3])
local slot = now
local nxt = tonumber(redis.call('GET', KEYS[1]) or '0')
if nxt and nxt > slot then slot = nxt end
local floor = tonumber(ARGV[5])
if floor and floor > slot then slot = floor end
if slot - now > maxwait then return {0, slot} end
if delay > 0 then
  redis.call('SET', KEYS[1], slot + delay, 'PX', slot + delay - now + tonumber(ARGV[4]))
end
return {1, slot}`)

// redisPaceKeepMargin is how long a pacing key outlives its next free
// slot: slack for clocks of replicas that run behind.
const redisPaceKeepMargin = time.Minute

// redisPacer is the [politeness.Pacer] shared by a fleet: each origin's next free slot
// lives in Redis ("<prefix>pace:<origin>", Unix milliseconds) and one Lua
// script per reservation reads it, computes slot = max(now, next), refuses
// when slot-now > maxWait and otherwise moves next to slot+delay, all
// atomically, so the spacing holds across all replicas.
//
// Time comes from the caller: "now" is the [enforce.Clock] of Options, passed
// to the script in milliseconds. This keeps tests deterministic (a fake
// clock drives every replica) and returns slots in the caller's own time
// frame, at the price of trusting the replicas' clocks: with clocks
// skewed by s, two requests from different replicas can be up to s closer
// than the delay. NTP-synchronised hosts are off by milliseconds, crawl
// delays are seconds. Slots are whole milliseconds.
//
// While Redis is down, a local [politeness.MemoryPacer] paces: each
// replica then spaces only its own requests. The switch keeps the spacing
// in both directions: each slot Redis hands out also moves the local next slot,
// so the first local slot after an outage begins is at least a delay
// after the last Redis one; and the local next slot is passed to the
// script as a floor, so the first Redis slot after recovery (Redis may
// have lost its keys) is at least a delay after the last local one.
type redisPacer struct {
	r     *Redis
	local *politeness.MemoryPacer
}

// Reserve implements Pacer.
func (p *redisPacer) Reserve(ctx context.Context, origin string, delay, maxWait time.Duration) (time.Time, bool, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, false, err
	}
	now := p.r.opts.Clock.Now()
	nowMS := now.UnixMilli()
	var floorMS int64
	if f := p.local.Next(origin); f.After(now) {
		floorMS = nowMS + (f.Sub(now) + time.Millisecond - 1).Milliseconds() // rounded up
	}
	var res []int64
	ok := p.r.call(ctx, "reserve", func(ctx context.Context) error {
		v, err := redisReserve.Run(ctx, p.r.client, []string{p.r.keys.pace(origin)},
			nowMS, max(delay, 0).Milliseconds(), max(maxWait, 0).Milliseconds(),
			redisPaceKeepMargin.Milliseconds(), floorMS).Int64Slice()
		if err == nil && len(v) != 2 {
			err = fmt.Errorf("reserve script returned %d values, want 2", len(v))
		}
		res = v
		return err
	})
	if !ok {
		return p.local.Reserve(ctx, origin, delay, maxWait)
	}
	at := now.Add(time.Duration(res[1]-nowMS) * time.Millisecond)
	if res[0] == 1 && delay > 0 {
		p.local.Hold(origin, at.Add(delay))
	}
	return at, res[0] == 1, nil
}
