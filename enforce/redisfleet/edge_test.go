package redisfleet

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/redistest"
)

// TestRedisUndecodableEntryReplaced: an entry robotsgate cannot decode
// is replaced by the next fetch, even when it claims a fetch time in the
// future (which the compare-and-set would otherwise defer to): the origin
// is fetched once, not once per request.
func TestRedisUndecodableEntryReplaced(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	clock := enforcetest.NewClock(redisT0)
	future := strconv.FormatInt(redisT0.AddDate(1, 0, 0).UnixMilli(), 10)
	for name, junk := range map[string]string{
		"not JSON":      "{not json",
		"not an object": `[` + future + `]`,
		"other version": `{"v":99,"fetched_ms":` + future + `,"result":{"status":"ok"}}`,
		"no status":     `{"v":1,"fetched_ms":` + future + `,"result":{}}`,
		"bad body":      `{"v":1,"fetched_ms":` + future + `,"result":{"status":"ok","body":"*not base64*"}}`,
		"bad time":      `{"v":1,"fetched_ms":` + future + `,"fetched_at":"soon","result":{"status":"ok"}}`,
		"wrong field":   `{"v":1,"fetched_ms":` + future + `,"failures":"many","result":{"status":"ok"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			o := newRedisOrigin(t, redisTestRobots)
			key := testKeys.robots(o.origin(t))
			if err := c.Set(context.Background(), key, junk, 0).Err(); err != nil {
				t.Fatal(err)
			}
			r := newTestRedis(t, srv, clock, nil)
			e := newRedisEnforcer(t, r, clock)
			for i := range 3 {
				d := e.Decide(context.Background(), o.url(t, "/private/x"), "", enforce.DecideOptions{})
				if d.Allowed || d.RobotsStatus != enforce.StatusOK {
					t.Fatalf("decision %d: %+v, want disallowed by the fetched robots.txt", i, d)
				}
			}
			if n := o.robots.Load(); n != 1 {
				t.Fatalf("%d robots.txt fetches for 3 requests, want 1", n)
			}
			raw, err := c.Get(context.Background(), key).Result()
			if err != nil {
				t.Fatal(err)
			}
			if st, err := decodeRedisEntry([]byte(raw), robotsKey(o.origin(t)), 0); err != nil || st.Result.Status != enforce.StatusOK {
				t.Fatalf("redis entry after the fetch: %v, %v", st, err)
			}
			if !r.Healthy() {
				t.Fatal("Redis marked down")
			}
		})
	}
}

// TestRedisWrongTypeKeyIsBadEntry: a robots key of another type (a list,
// a hash: WRONGTYPE errors) is a bad entry for its origin, replaced by a
// fetch; Redis stays in use for every origin.
func TestRedisWrongTypeKeyIsBadEntry(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	clock := enforcetest.NewClock(redisT0)
	ctx := context.Background()
	for i, make := range []func(key string) error{
		func(key string) error { return c.RPush(ctx, key, "x").Err() },
		func(key string) error { return c.HSet(ctx, key, "fetched_ms", "1").Err() },
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			o := newRedisOrigin(t, redisTestRobots)
			key := testKeys.robots(o.origin(t))
			if err := make(key); err != nil {
				t.Fatal(err)
			}
			r := newTestRedis(t, srv, clock, nil)
			e := newRedisEnforcer(t, r, clock)
			for i := range 3 {
				d := e.Decide(ctx, o.url(t, "/private/x"), "", enforce.DecideOptions{})
				if d.Allowed || d.RobotsStatus != enforce.StatusOK {
					t.Fatalf("decision %d: %+v, want disallowed by the fetched robots.txt", i, d)
				}
				if !r.Healthy() || r.Fallbacks() != 0 {
					t.Fatalf("decision %d: Redis healthy %v, %d fallbacks; a bad key is not Redis down", i, r.Healthy(), r.Fallbacks())
				}
			}
			if n := o.robots.Load(); n != 1 {
				t.Fatalf("%d robots.txt fetches for 3 requests, want 1", n)
			}
			if typ := c.Type(ctx, key).Val(); typ != "string" {
				t.Fatalf("key type %q after the fetch, want string", typ)
			}
		})
	}
}

// TestRedisSetReplacesBadEntry: the compare-and-set itself replaces what
// robotsgate could not decode (another version, no result status, not an
// object) or a key of another type, whatever fetch time it claims.
func TestRedisSetReplacesBadEntry(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	ctx := context.Background()
	s := newTestRedis(t, srv, enforcetest.NewClock(redisT0), nil).store
	future := strconv.FormatInt(redisT0.AddDate(1, 0, 0).UnixMilli(), 10)
	bad := map[string]func(key string) error{
		"other version": func(key string) error {
			return c.Set(ctx, key, `{"v":99,"fetched_ms":`+future+`,"result":{"status":"ok"}}`, 0).Err()
		},
		"no status": func(key string) error {
			return c.Set(ctx, key, `{"v":1,"fetched_ms":`+future+`,"result":{"status":""}}`, 0).Err()
		},
		"result not an object": func(key string) error {
			return c.Set(ctx, key, `{"v":1,"fetched_ms":`+future+`,"result":"ok"}`, 0).Err()
		},
		"a set": func(key string) error { return c.SAdd(ctx, key, future).Err() },
	}
	for name, put := range bad {
		t.Run(name, func(t *testing.T) {
			origin := "http://" + strings.ReplaceAll(name, " ", "-") + ".test"
			key := testKeys.robots(origin)
			if err := put(key); err != nil {
				t.Fatal(err)
			}
			e := &enforce.Entry{Key: robotsKey(origin), Result: enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200, Body: []byte(redisTestRobots)},
				FetchedAt: redisT0, Expires: redisT0.Add(time.Hour)}
			s.Set(ctx, robotsKey(origin), e, time.Hour)
			raw, err := c.Get(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			if st, err := decodeRedisEntry([]byte(raw), e.Key, 0); err != nil || !st.FetchedAt.Equal(redisT0) {
				t.Fatalf("stored after Set: %v, %v", st, err)
			}
			if !s.Healthy() {
				t.Fatal("Redis marked down")
			}
		})
	}
}

// TestRedisCloseStopsEveryGoroutine: after Close, none of the goroutines
// New started is left. Close waits for them, but a goroutine that has
// signalled its WaitGroup is still on its way out when Close returns, so
// the test waits (bounded) for the stacks to be gone rather than
// sampling them once.
func TestRedisCloseStopsEveryGoroutine(t *testing.T) {
	srv := redistest.Start(t)
	r := newTestRedis(t, srv, enforcetest.NewClock(redisT0), nil)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	funcs := []string{"go-cache.(*janitor).Run", "redisfleet.(*Redis).subscribe", "redisfleet.(*Redis).sweepL1"}
	if left := waitGoroutinesGone(funcs, 10*time.Second); len(left) > 0 {
		t.Errorf("still running 10s after Close: %v", left)
	}
}

// waitGoroutinesGone scans every goroutine's stack until none runs any of
// funcs or bound has passed, and returns those of funcs still running.
func waitGoroutinesGone(funcs []string, bound time.Duration) []string {
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(bound)
	for {
		stacks := string(buf[:runtime.Stack(buf, true)])
		var left []string
		for _, f := range funcs {
			if strings.Contains(stacks, f) {
				left = append(left, f)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(time.Millisecond)
	}
}
