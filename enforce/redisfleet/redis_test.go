package redisfleet

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/redistest"
)

var redisT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const redisTestRobots = "User-agent: *\nDisallow: /private\nAllow: /private/ok\nCrawl-delay: 2\n\nUser-agent: foobot\nDisallow: /\n"

// newTestRedis returns a Redis on srv with test-friendly intervals; extra
// options are applied by mod.
func newTestRedis(t testing.TB, srv *redistest.Server, clock enforce.Clock, mod func(*Options)) *Redis {
	t.Helper()
	SetRedisClientLog(zerolog.Nop()) // go-redis's own dial-failure lines
	o := Options{
		Clock:         clock,
		Log:           zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel),
		RetryInterval: 20 * time.Millisecond,
		Timeout:       time.Second, // generous: the race detector on 2 shared cores is slow
		MaxBytes:      testMaxBytes,
		Local:         newLocalStore(),
	}
	if mod != nil {
		mod(&o)
	}
	r, err := New(context.Background(), srv.URL(0), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// redisClient returns a plain client on srv, to look at keys.
func redisClient(t testing.TB, srv *redistest.Server) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// redisOrigin is an httptest origin counting its robots.txt fetches; gate,
// when set, is waited for before each robots.txt answer.
type redisOrigin struct {
	srv    *httptest.Server
	robots atomic.Int64
	body   atomic.Pointer[string]
	onHit  atomic.Pointer[func()]
}

func newRedisOrigin(t testing.TB, body string) *redisOrigin {
	t.Helper()
	o := &redisOrigin{}
	o.body.Store(&body)
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		o.robots.Add(1)
		if f := o.onHit.Load(); f != nil {
			(*f)()
		}
		fmt.Fprint(w, *o.body.Load())
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *redisOrigin) url(t testing.TB, path string) *url.URL {
	t.Helper()
	u, err := url.Parse(o.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// robotsKey is the key of origin's robots.txt fetched wherever its name
// resolves.
func robotsKey(origin string) enforce.Key { return enforce.RobotsKey(origin, netip.Addr{}) }

func (o *redisOrigin) origin(t testing.TB) string {
	t.Helper()
	s, err := enforce.Origin(o.url(t, "/"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newRedisEnforcer(t testing.TB, r *Redis, clock enforce.Clock) *enforce.Enforcer {
	t.Helper()
	e, err := enforce.New(filledEnforce(enforce.Config{
		Fetcher:      &enforce.HTTPFetcher{MaxRedirects: 5, Timeout: 5 * time.Second},
		Store:        r.store,
		Clock:        clock,
		FetchTimeout: 10 * time.Second,
		Log:          zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel),
	}))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// waitFor polls cond until it holds, failing the test after 10s.
func redisWaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestValidateRedisURL(t *testing.T) {
	for _, u := range []string{"redis://127.0.0.1:6379/0", "rediss://cache.internal:6380/2", "redis://:pw@127.0.0.1"} {
		if err := ValidateRedisURL(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"memory", "http://127.0.0.1:6379", "redis://", "redis://127.0.0.1/notadb", "unix:///tmp/r.sock", "redis://[::1"} {
		if err := ValidateRedisURL(u); err == nil {
			t.Errorf("%s: accepted", u)
		}
	}
	if err := ValidateRedisURL("redis://:s3cret@127.0.0.1/x"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error for a URL with a password: %v", err)
	}
	for in, want := range map[string]string{
		"memory":                           "memory",
		"redis://127.0.0.1:6379/0":         "redis://127.0.0.1:6379/0",
		"rediss://u:s3cret@cache:6380/1":   "rediss://u:xxxxx@cache:6380/1",
		"redis://:s3cret@127.0.0.1:6379/0": "redis://:xxxxx@127.0.0.1:6379/0",
	} {
		if got := RedactCacheURL(in); got != want {
			t.Errorf("RedactCacheURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// testKeys names the keys of the default prefix, as a Redis of these
// tests writes them.
var testKeys = redisKeys{prefix: defaultPrefix}
