package redisfleet

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/robotsgate/robotsgate/enforce"
	"time"

	"github.com/patrickmn/go-cache"
	"github.com/redis/go-redis/v9"
)

// redisStore is the [enforce.Store] shared by a fleet of robotsgate processes. An
// entry is kept in Redis under "<prefix>{<origin>}:robots" (followed by
// the rest of its key's string form, see [redisKeys]) as the fetched
// bodies and fetch metadata, compressed (see codec.go; never a compiled
// form: it is parsed again locally on load, so a newer parser never reads
// a stale compiled form), with the Redis key's lifetime set to keep.
//
// In front of Redis sits a short in-process L1 cache (Options.L1TTL)
// so that a hot origin costs no Redis round trip per request. Replicas
// drop an origin from their L1 when another replica announces a new fetch
// or a purge of it (Redis pub/sub); if that message is lost, the L1 copy
// is at most L1TTL old.
//
// Every entry is also kept in a process-local Store, which answers while
// Redis is down. redisStore implements [enforce.Coordinator]: see Once.
type redisStore struct {
	r     *Redis
	l1    *cache.Cache // nil when disabled
	local enforce.Store
}

func newRedisStore(r *Redis) *redisStore {
	s := &redisStore{r: r, local: r.opts.Local}
	if r.opts.L1TTL > 0 {
		s.l1 = cache.New(r.opts.L1TTL, 0) // swept by Redis.sweepL1
	}
	return s
}

// Get returns key's entry: from the L1 cache, else from Redis (the
// entry is parsed again), else, while Redis is down, from the local
// store.
func (s *redisStore) Get(ctx context.Context, key enforce.Key) (*enforce.Entry, bool) {
	if s.l1 != nil {
		if v, ok := s.l1.Get(key.String()); ok {
			return v.(*enforce.Entry), true
		}
	}
	e, keep, ok := s.getCall(ctx, key)
	if !ok {
		return s.local.Get(ctx, key)
	}
	if e == nil {
		// Redis is the source of truth while it is up: a missing entry
		// was purged (or Redis lost its data), so forget the local copy.
		s.local.Delete(ctx, key)
		return nil, false
	}
	s.local.Set(ctx, key, e, keep)
	if s.l1 != nil {
		s.l1.SetDefault(key.String(), e)
	}
	return e, true
}

// getCall is getRemote as one call (see [Redis.call]): ok is false when
// Redis is down or the read failed, and the caller answers locally.
func (s *redisStore) getCall(ctx context.Context, key enforce.Key) (e *enforce.Entry, keep time.Duration, ok bool) {
	ok = s.r.call(ctx, "get", func(ctx context.Context) (err error) {
		e, keep, err = s.getRemote(ctx, key)
		return err
	})
	return e, keep, ok
}

// getRemote reads key's entry and its remaining lifetime from Redis.
// A missing or undecodable entry is (nil, 0, nil).
func (s *redisStore) getRemote(ctx context.Context, key enforce.Key) (*enforce.Entry, time.Duration, error) {
	rkey := s.r.keys.robots(key.String())
	var get *redis.StringCmd
	var ttl *redis.DurationCmd
	_, err := s.r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, rkey)
		ttl = p.PTTL(ctx, rkey)
		return nil
	})
	if errors.Is(err, redis.Nil) {
		return nil, 0, nil
	}
	if isWrongType(err) {
		return nil, 0, s.dropBad(ctx, key, "", err)
	}
	if err != nil {
		return nil, 0, err
	}
	e, err := decodeRedisEntry([]byte(get.Val()), key, s.r.opts.MaxBytes)
	if err != nil {
		sum := sha1.Sum([]byte(get.Val()))
		return nil, 0, s.dropBad(ctx, key, hex.EncodeToString(sum[:]), err)
	}
	keep := ttl.Val()
	if keep < 0 { // -1: no expiry; -2: gone since GET
		keep = 0
	}
	return e, keep, nil
}

// redisDropBad deletes KEYS[1] when it is not a string (a key of another
// type), or when it is the string whose SHA-1 is ARGV[1] (an entry that
// could not be decoded, and was not replaced since it was read).
var redisDropBad = redis.NewScript(`
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'none' then return 0 end
if t ~= 'string' then return redis.call('DEL', KEYS[1]) end
if ARGV[1] ~= '' and redis.sha1hex(redis.call('GET', KEYS[1])) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

// dropBad deletes key's bad entry in Redis: one that could not be
// decoded (sum: the SHA-1 of what was read, in hex) or a key of another
// type (sum ""). The entry is then missing, so that the origin's next
// fetch is stored: left in place, such an entry would be read as missing
// by every request (one fetch each), while the compare-and-set might
// defer to its fetch time. why is the reason, for the log.
func (s *redisStore) dropBad(ctx context.Context, key enforce.Key, sum string, why error) error {
	rkey := s.r.keys.robots(key.String())
	s.r.opts.Log.Warn().Err(why).Str("origin", key.String()).Str("key", rkey).
		Msg("bad robots.txt entry in redis (undecodable, or a key of another type): deleted, robots.txt is fetched again")
	if err := redisDropBad.Run(ctx, s.r.client, []string{rkey}, sum).Err(); err != nil {
		return fmt.Errorf("redis: deleting the bad entry %s: %w", rkey, err)
	}
	return nil
}

// redisSetEntry stores the entry ARGV[1] at KEYS[1] (kept ARGV[2] ms; 0:
// no expiry) unless what is stored is better: an entry fetched later
// (its fetched ms > ARGV[3]), or, when the new entry is unreachable with
// no good copy (ARGV[4] = "1") and ARGV[5] consecutive failures, a [enforce.StatusOK]
// entry or an entry holding a good copy that the new one does not
// continue (as many failures or more). An entry that does continue the
// stored one (Enforcer.next carries the good copy over, and counts one
// more failure) is always stored. The script reads only the stored
// entry's header (see codec.go; ARGV[6] is its version, ARGV[7] the
// previous one, whose header is the same): what is stored
// is replaced without comparing when it has no such header (robotsgate
// could not decode it), or is a key of another type. It returns 1 when
// it stored the entry.
var redisSetEntry = redis.NewScript(`
local t = redis.call('TYPE', KEYS[1])['ok']
if t ~= 'none' and t ~= 'string' then redis.call('DEL', KEYS[1]) end
local cur = redis.call('GETRANGE', KEYS[1], 0, 63)
if cur and cur ~= '' then
  local v, fms, st, good, fails = string.match(cur, '^(%d+)|(%d+)|(%a)|([01])|(%d+)|')
  if v == ARGV[6] or v == ARGV[7] then
    if tonumber(fms) > tonumber(ARGV[3]) then return 0 end
    if ARGV[4] == '1' then
      if st == 'o' then return 0 end
      if good == '1' and tonumber(ARGV[5]) <= tonumber(fails) then return 0 end
    end
  end
end
if tonumber(ARGV[2]) > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  redis.call('SET', KEYS[1], ARGV[1])
end
return 1`)

// localWrites is the view of a Store whose writes stay in this process
// (the L1 and local stores): Once hands it to a fetch made without the
// fleet's lock. Reads and deletes go to the Store.
type localWrites struct{ *redisStore }

// Set stores e for key in the L1 and local stores only.
func (w localWrites) Set(ctx context.Context, key enforce.Key, e *enforce.Entry, keep time.Duration) {
	w.setLocal(ctx, key, e, keep)
}

// setLocal stores e for key in the L1 and local stores.
func (s *redisStore) setLocal(ctx context.Context, key enforce.Key, e *enforce.Entry, keep time.Duration) {
	s.local.Set(ctx, key, e, keep)
	if s.l1 != nil {
		s.l1.SetDefault(key.String(), e)
	}
}

// Set stores e for key in the L1 and local stores and, kept for keep
// (keep <= 0: until deleted), in Redis, unless Redis holds a better entry
// (see [redisSetEntry]): one fetched later, or a good robots.txt that e, a
// failure that does not carry it as its good copy, would replace. Then
// e stays local and the L1 copy is dropped, so that this process reads
// the better entry next. Entries fetched by a replica that gave up
// waiting for another's fetch (see Once) are written through [localWrites]
// and kept local only.
func (s *redisStore) Set(ctx context.Context, key enforce.Key, e *enforce.Entry, keep time.Duration) {
	s.setLocal(ctx, key, e, keep)
	name := key.String()
	data, err := encodeRedisEntry(e)
	if err != nil { // cannot happen for the types involved; keep it local
		s.r.opts.Log.Error().Err(err).Str("origin", name).Msg("cannot encode robots.txt entry for redis")
		return
	}
	if keep < 0 {
		keep = 0
	}
	noGood := "0"
	if e.Result.Status == enforce.StatusUnreachable && e.Good == nil {
		noGood = "1"
	}
	var stored int64
	ok := s.r.call(ctx, "set", func(ctx context.Context) (err error) {
		stored, err = redisSetEntry.Run(ctx, s.r.client, []string{s.r.keys.robots(name)},
			data, keep.Milliseconds(), e.FetchedAt.UnixMilli(), noGood, e.Failures, entryVersion, entryVersion2).Int64()
		return err
	})
	if ok && stored == 0 {
		s.dropL1(name)
		s.r.opts.Log.Debug().Str("origin", name).Str("status", string(e.Result.Status)).
			Msg("redis holds a better robots.txt entry: this fetch result stays local")
	}
}

// Delete forgets key's entry in Redis, locally, and (by a published
// message) in every replica's L1 cache.
func (s *redisStore) Delete(ctx context.Context, key enforce.Key) {
	s.local.Delete(ctx, key)
	name := key.String()
	s.dropL1(name)
	s.r.call(ctx, "delete", func(ctx context.Context) error {
		_, err := s.r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, s.r.keys.robots(name))
			p.Publish(ctx, s.r.keys.events(), s.r.event(eventRobots, name))
			return nil
		})
		return err
	})
}

// Len returns the number of robots.txt entries this process holds: its
// process-local copy of every entry it read or stored (see Get and Set),
// when the local store counts them (a [enforce.MemoryStore] does), else 0. It
// never asks Redis: the metric robotsgate_robots_cache_entries reads it
// at every scrape.
func (s *redisStore) Len() int {
	if l, ok := s.local.(interface{ Len() int }); ok {
		return l.Len()
	}
	return 0
}

// Healthy reports whether Redis is in use (see [Redis.Healthy]).
func (s *redisStore) Healthy() bool { return s.r.Healthy() }

// Fallbacks returns how many calls were answered locally (see
// [Redis.Fallbacks]).
func (s *redisStore) Fallbacks() uint64 { return s.r.Fallbacks() }

// Switches returns the switches between Redis and the local fallbacks
// (see [Redis.Switches]).
func (s *redisStore) Switches() (toLocal, toFleet uint64) { return s.r.Switches() }

// Topology returns how Redis is reached (see [Redis.Topology]).
func (s *redisStore) Topology() Topology { return s.r.topology }

// dropL1 forgets the L1 copy of the entry whose key's string form is
// name (another replica changed the entry).
func (s *redisStore) dropL1(name string) {
	if s.l1 != nil {
		s.l1.Delete(name)
	}
}
