package redisfleet

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/redistest"
)

// TestPreviousLayoutReplacedWithOneFetch: a Redis holding what earlier
// versions wrote (JSON entries under "robotsgate:robots:<origin>", and a
// JSON entry under the new key too) costs each origin one robots.txt
// fetch, fleet-wide, and never an error: two replicas' concurrent first
// requests decide right, Redis stays in use, and the new key then holds
// an entry of the current form.
func TestPreviousLayoutReplacedWithOneFetch(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	ctx := context.Background()
	clock := enforcetest.NewClock(redisT0)
	o := newRedisOrigin(t, redisTestRobots)
	origin := o.origin(t)
	// A version-1 entry that allows everything, fetched "later" than any
	// fetch of this test: read as such, it would let /private through.
	old := v1JSON(&enforce.Entry{Origin: origin, Result: enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200,
		Body: []byte("User-agent: *\nAllow: /\n")}, FetchedAt: redisT0.Add(time.Hour), Expires: redisT0.Add(48 * time.Hour)})
	for _, key := range []string{defaultPrefix + "robots:" + origin, testKeys.robots(origin)} {
		if err := c.Set(ctx, key, old, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Set(ctx, defaultPrefix+"lock:"+origin, "old-holder", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	rs := []*Redis{newTestRedis(t, srv, clock, nil), newTestRedis(t, srv, clock, nil)}
	es := []*enforce.Enforcer{newRedisEnforcer(t, rs[0], clock), newRedisEnforcer(t, rs[1], clock)}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if d := es[i%2].Decide(ctx, o.url(t, "/private/x"), "", enforce.DecideOptions{}); d.Allowed || d.RobotsStatus != enforce.StatusOK {
				t.Errorf("decision %d: %+v, want disallowed by the fetched robots.txt", i, d)
			}
		})
	}
	wg.Wait()
	if n := o.robots.Load(); n != 1 {
		t.Fatalf("%d robots.txt fetches, want 1", n)
	}
	for i, r := range rs {
		if !r.Healthy() {
			t.Fatalf("replica %d marked Redis down", i)
		}
	}
	raw, err := c.Get(ctx, testKeys.robots(origin)).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if e, err := decodeRedisEntry(raw, testMaxBytes); err != nil || e.Parsed == nil {
		t.Fatalf("new key after the fetch: %v", err)
	}
}

// TestScriptsReloadAfterScriptFlush: a server that lost its scripts (a
// restart, a node newly promoted, SCRIPT FLUSH) answers NOSCRIPT, and the
// call is sent again with the script's source: nothing is answered
// locally, Redis stays in use.
func TestScriptsReloadAfterScriptFlush(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	ctx := context.Background()
	clock := enforcetest.NewClock(redisT0)
	r := newTestRedis(t, srv, clock, nil)
	e := &enforce.Entry{Origin: "http://a.test", Result: enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200,
		Body: []byte(redisTestRobots)}, FetchedAt: redisT0, Expires: redisT0.Add(time.Hour)}
	for i := range 2 {
		if err := c.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		r.store.Set(ctx, e.Origin, e, time.Hour)
		if _, ok, err := r.pacer.Reserve(ctx, e.Origin, time.Second, time.Minute); err != nil || !ok {
			t.Fatalf("round %d: reserve: %v, %v", i, ok, err)
		}
	}
	if n, err := c.Exists(ctx, testKeys.robots(e.Origin), testKeys.pace(e.Origin)).Result(); err != nil || n != 2 {
		t.Fatalf("keys in Redis: %d, %v", n, err)
	}
	if f := r.Fallbacks(); f != 0 || !r.Healthy() {
		t.Fatalf("%d calls answered locally, healthy %v", f, r.Healthy())
	}
}
