package redisfleet

import (
	"bytes"
	"compress/flate"
	"context"
	"io"
	"net/netip"
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
	old := v1JSON(&enforce.Entry{Key: robotsKey(origin), Result: enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200,
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
	if e, err := decodeRedisEntry(raw, robotsKey(origin), testMaxBytes); err != nil || e.Parsed == nil {
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
	e := &enforce.Entry{Key: robotsKey("http://a.test"), Result: enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200,
		Body: []byte(redisTestRobots)}, FetchedAt: redisT0, Expires: redisT0.Add(time.Hour)}
	for i := range 2 {
		if err := c.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		r.store.Set(ctx, e.Key, e, time.Hour)
		if _, ok, err := r.pacer.Reserve(ctx, e.Key.Origin(), time.Second, time.Minute); err != nil || !ok {
			t.Fatalf("round %d: reserve: %v, %v", i, ok, err)
		}
	}
	if n, err := c.Exists(ctx, testKeys.robots(e.Key.String()), testKeys.pace(e.Key.Origin())).Result(); err != nil || n != 2 {
		t.Fatalf("keys in Redis: %d, %v", n, err)
	}
	if f := r.Fallbacks(); f != 0 || !r.Healthy() {
		t.Fatalf("%d calls answered locally, healthy %v", f, r.Healthy())
	}
}

// TestKeyLayoutPinned: the Redis keys of every kind of Store key (a
// robots.txt, with and without an address, a tdmrep.json, a license
// document) and the key a stored entry's payload names are spelled as
// replicas of earlier versions spell them, so that a fleet being upgraded
// keeps sharing its entries and locks. A change here is a change of the
// layout: it needs a new version, documented in docs/redis.md.
func TestKeyLayoutPinned(t *testing.T) {
	k := redisKeys{prefix: defaultPrefix}
	a4, a6 := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")
	for _, c := range []struct {
		name  string
		key   enforce.Key
		form  string // the Store key's string form
		robot string // its entry's Redis key
		lock  string // its fetch lock's Redis key
	}{
		{"robots.txt", enforce.RobotsKey("https://example.com", netip.Addr{}), "https://example.com",
			"robotsgate:{https://example.com}:robots", "robotsgate:{https://example.com}:lock"},
		{"robots.txt at an IPv4 address", enforce.RobotsKey("https://example.com", a4), "https://example.com|192.0.2.1",
			"robotsgate:{https://example.com}:robots|192.0.2.1", "robotsgate:{https://example.com}:lock|192.0.2.1"},
		{"robots.txt at an IPv6 address", enforce.RobotsKey("https://example.com:8443", a6), "https://example.com:8443|2001:db8::1",
			"robotsgate:{https://example.com:8443}:robots|2001:db8::1", "robotsgate:{https://example.com:8443}:lock|2001:db8::1"},
		{"robots.txt of an IP literal at its address", enforce.RobotsKey("http://192.0.2.1:8080", netip.MustParseAddr("::ffff:192.0.2.1")), "http://192.0.2.1:8080",
			"robotsgate:{http://192.0.2.1:8080}:robots", "robotsgate:{http://192.0.2.1:8080}:lock"},
		{"robots.txt of an IPv6 literal at another address", enforce.RobotsKey("http://[2001:db8::1]", a4), "http://[2001:db8::1]|192.0.2.1",
			"robotsgate:{http://[2001:db8::1]}:robots|192.0.2.1", "robotsgate:{http://[2001:db8::1]}:lock|192.0.2.1"},
		{"tdmrep.json", enforce.TDMKey("https://example.com", netip.Addr{}), "https://example.com/.well-known/tdmrep.json",
			"robotsgate:{https://example.com}:robots/.well-known/tdmrep.json", "robotsgate:{https://example.com}:lock/.well-known/tdmrep.json"},
		{"tdmrep.json at an IPv4 address", enforce.TDMKey("https://example.com", a4), "https://example.com|192.0.2.1/.well-known/tdmrep.json",
			"robotsgate:{https://example.com}:robots|192.0.2.1/.well-known/tdmrep.json", "robotsgate:{https://example.com}:lock|192.0.2.1/.well-known/tdmrep.json"},
		{"tdmrep.json at an IPv6 address", enforce.TDMKey("https://example.com:8443", a6), "https://example.com:8443|2001:db8::1/.well-known/tdmrep.json",
			"robotsgate:{https://example.com:8443}:robots|2001:db8::1/.well-known/tdmrep.json", "robotsgate:{https://example.com:8443}:lock|2001:db8::1/.well-known/tdmrep.json"},
		{"license document", enforce.LicenseKey("https://example.com/license.xml"), "https://example.com/license.xml#rsl-license",
			"robotsgate:{https://example.com}:robots/license.xml#rsl-license", "robotsgate:{https://example.com}:lock/license.xml#rsl-license"},
		{"license document spelled as written", enforce.LicenseKey("https://EXAMPLE.com:443/l.xml?x=1"), "https://EXAMPLE.com:443/l.xml?x=1#rsl-license",
			"robotsgate:{https://EXAMPLE.com:443}:robots/l.xml?x=1#rsl-license", "robotsgate:{https://EXAMPLE.com:443}:lock/l.xml?x=1#rsl-license"},
	} {
		t.Run(c.name, func(t *testing.T) {
			form := c.key.String()
			if form != c.form {
				t.Fatalf("string form %q, want %q", form, c.form)
			}
			if got := k.robots(form); got != c.robot {
				t.Errorf("entry key %q, want %q", got, c.robot)
			}
			if got := k.lock(form); got != c.lock {
				t.Errorf("lock key %q, want %q", got, c.lock)
			}
			if got := payloadKey(t, &enforce.Entry{Key: c.key, Result: enforce.FetchResult{Status: enforce.StatusUnavailable}}); got != c.form {
				t.Errorf("stored entry names %q, want %q", got, c.form)
			}
		})
	}
}

// payloadKey returns the key the stored form of e names.
func payloadKey(t *testing.T, e *enforce.Entry) string {
	t.Helper()
	data, err := encodeRedisEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	_, z, err := parseEntryHeader(data)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(flate.NewReaderDict(bytes.NewReader(z), []byte(entryDict)))
	if err != nil {
		t.Fatal(err)
	}
	d := reader{b: raw}
	return d.str()
}
