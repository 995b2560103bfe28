package redisfleet

import (
	"context"
	"errors"
	"fmt"
	"github.com/robotsgate/robotsgate/enforce"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// errRedisDown is returned by Once while Redis is marked down.
var errRedisDown = fmt.Errorf("redis unavailable: %w", enforce.ErrCoordinatorUnavailable)

// redisRelease deletes the lock KEYS[1] if it still holds the token
// ARGV[1], and announces on channel ARGV[2] the change ARGV[3]
// (waiters wake up and take their turn).
var redisRelease = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1`)

// redisExtend sets the lifetime of the lock KEYS[1] to ARGV[2] ms if it
// still holds the token ARGV[1].
var redisExtend = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`)

// Once wait bounds.
const (
	onceFirstPoll = 10 * time.Millisecond  // first re-check of the lock
	onceMaxPoll   = 250 * time.Millisecond // backoff cap between re-checks
	onceNoDL      = 30 * time.Second       // wait bound when ctx has no deadline
)

// Once implements Coordinator: it runs fetch in at most one process of
// the fleet at a time per key. It takes the key's lock
// ("<prefix>{<origin>}:lock" and the rest of the key, see [redisKeys];
// SET NX PX LockTTL with a random token), runs
// fetch while extending the lock every LockTTL/3, then releases it (a
// compare-and-delete script, so an expired lock taken over by another
// replica is never released by mistake) and publishes the change. The
// Enforcer's fetch function re-reads the Store first, so the replicas
// that waited find the holder's fresh entry in Redis and fetch nothing.
//
// A replica that finds the lock taken waits for the holder's message, or
// re-checks the lock with backoff (10 ms doubling to 250 ms) in case the
// message is lost. A crashed holder stops extending its lock, which then
// expires within LockTTL and is taken by a waiter. Waiting stops when
// four fifths of ctx's remaining time at the call (30s without a
// deadline) have passed: the replica then fetches without the lock, on a
// full budget of its own, and keeps the result local (see fetchUnlocked),
// so a late or failed fetch never replaces the holder's entry in Redis.
// A waiter thus answers within 1.8 times its budget at worst. Waiting
// stops with an error when Redis fails; while Redis is down Once fails at
// once.
func (s *redisStore) Once(ctx context.Context, key enforce.Key, fetch func(context.Context, enforce.Store) *enforce.Entry) (*enforce.Entry, error) {
	r := s.r
	if !r.health.up.Load() {
		r.health.fallback(ctx)
		return nil, errRedisDown
	}
	name := key.String()
	lock := r.keys.lock(name)
	token := newToken()
	budget := onceNoDL
	if dl, ok := ctx.Deadline(); ok {
		budget = time.Until(dl)
	}
	giveUp := time.Now().Add(budget * 4 / 5)
	poll := onceFirstPoll
	for {
		woken, unwatch := r.watch(name)
		var got bool
		ok := r.call(ctx, "lock", func(ctx context.Context) (err error) {
			got, err = r.client.SetNX(ctx, lock, token, r.opts.LockTTL).Result()
			return err
		})
		if !ok || got {
			unwatch()
		}
		if !ok {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("waiting for the fetch lock of %s: %w", name, err)
			}
			return nil, fmt.Errorf("fetch lock of %s: %w", name, errRedisDown)
		}
		if got {
			return s.holdAndFetch(ctx, key, lock, token, fetch), nil
		}

		wait := min(poll, time.Until(giveUp))
		poll = min(2*poll, onceMaxPoll)
		t := time.NewTimer(max(wait, 0))
		select {
		case <-woken:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		unwatch()
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("waiting for the fetch lock of %s: %w", name, err)
		}
		if !time.Now().Before(giveUp) {
			return s.fetchUnlocked(ctx, key, budget, fetch), nil
		}
	}
}

// fetchUnlocked runs fetch for a replica that gave up waiting for the
// lock holder's result. The fetch gets a budget of its own (budget, the
// time ctx had left when Once was called), detached from ctx, rather than
// the fifth of it that is left: a fetch with too little time would fail
// and make the origin look unreachable. Its result is stored only in
// this process (the holder's result, when it comes, is the fleet's). If
// that result is a failure while Redis meanwhile got a fresh entry from
// the holder, the holder's entry is returned (and cached) instead.
func (s *redisStore) fetchUnlocked(ctx context.Context, key enforce.Key, budget time.Duration, fetch func(context.Context, enforce.Store) *enforce.Entry) *enforce.Entry {
	s.r.opts.Log.Debug().Str("origin", key.String()).Int64("budget_ms", budget.Milliseconds()).
		Msg("robots.txt fetch lock still held by another replica: fetching without it, result kept local")
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
	defer cancel()
	en := fetch(fctx, localWrites{s})
	if en == nil || en.Result.Status != enforce.StatusUnreachable {
		return en
	}
	cur, keep, ok := s.getCall(fctx, key)
	if !ok || cur == nil || cur.Result.Status == enforce.StatusUnreachable ||
		!s.r.opts.Clock.Now().Before(cur.Expires) {
		return en
	}
	s.setLocal(fctx, key, cur, keep)
	return cur
}

// holdAndFetch runs fetch of key's entry while holding the lock (with
// token), extending it until fetch returns, then releases it and
// announces the change.
func (s *redisStore) holdAndFetch(ctx context.Context, key enforce.Key, lock, token string, fetch func(context.Context, enforce.Store) *enforce.Entry) *enforce.Entry {
	r := s.r
	name := key.String()
	// This process's L1 may hold the expired copy that made the Enforcer
	// refresh: fetch must see what Redis has.
	s.dropL1(name)

	stop := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(max(r.opts.LockTTL/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				r.call(context.WithoutCancel(ctx), "lock-extend", func(ctx context.Context) error {
					return redisExtend.Run(ctx, r.client, []string{lock}, token, r.opts.LockTTL.Milliseconds()).Err()
				})
			}
		}
	}()
	defer func() {
		close(stop)
		<-stopped
		r.call(context.WithoutCancel(ctx), "unlock", func(ctx context.Context) error {
			return redisRelease.Run(ctx, r.client, []string{lock}, token, r.keys.events(), r.event(eventRobots, name)).Err()
		})
	}()
	return fetch(ctx, s)
}

// watch registers interest in announcements about the entry whose Store
// key's string form is name: the returned channel is closed at the next
// one. unwatch must be called when done.
func (r *Redis) watch(name string) (woken <-chan struct{}, unwatch func()) {
	ch := make(chan struct{})
	r.waitMu.Lock()
	if r.waiters == nil {
		r.waiters = make(map[string]map[chan struct{}]struct{})
	}
	set := r.waiters[name]
	if set == nil {
		set = make(map[chan struct{}]struct{})
		r.waiters[name] = set
	}
	set[ch] = struct{}{}
	r.waitMu.Unlock()
	return ch, func() {
		r.waitMu.Lock()
		defer r.waitMu.Unlock()
		if set := r.waiters[name]; set != nil {
			delete(set, ch)
			if len(set) == 0 {
				delete(r.waiters, name)
			}
		}
	}
}

// Kinds of announcements on the events channel.
const (
	eventRobots = "r" // a Store entry (robots.txt or another policy file) was fetched or purged
	eventPause  = "p" // an origin was paused or resumed
)

// event returns the announcement "<kind> <id> <name>": name is the
// Store key's string form of a robots.txt change, the origin of a pause.
func (r *Redis) event(kind, name string) string { return kind + " " + r.id + " " + name }

// handle acts on an announcement: another replica's change drops this
// process's L1 copy, and a robots.txt change wakes every waiter for the
// entry.
func (r *Redis) handle(payload string) {
	kind, rest, _ := strings.Cut(payload, " ")
	id, name, ok := strings.Cut(rest, " ")
	if !ok {
		return
	}
	if kind == eventPause {
		if id != r.id {
			r.pauses.dropL1(name)
		}
		return
	}
	if kind != eventRobots {
		return
	}
	if id != r.id {
		r.store.dropL1(name)
	}
	r.waitMu.Lock()
	defer r.waitMu.Unlock()
	for ch := range r.waiters[name] {
		close(ch)
	}
	delete(r.waiters, name)
}

// subscribe listens to the events channel while Redis is up, until Close.
// Lost messages cost at most a poll interval (Once) or an L1 lifetime.
func (r *Redis) subscribe(ctx context.Context) {
	defer r.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.health.upChan():
		}
		ps := r.client.Subscribe(ctx, r.keys.events())
		stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
		var err error
		for {
			var msg any
			msg, err = ps.Receive(ctx)
			if err != nil {
				break
			}
			if m, ok := msg.(*redis.Message); ok {
				r.handle(m.Payload)
			}
		}
		stop()
		_ = ps.Close()
		if ctx.Err() != nil || errors.Is(err, redis.ErrClosed) {
			return
		}
		r.health.fail(ctx, "subscribe", err)
	}
}
