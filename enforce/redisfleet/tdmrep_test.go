package redisfleet

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/redistest"
	"github.com/robotsgate/robotsgate/robots/tdmrep"
)

// TestTDMRepEntryRoundTrip: a tdmrep.json entry stored in Redis comes
// back with its rules rebuilt (enforce.Entry.Rebuild), so a fleet shares
// tdmrep.json as it shares robots.txt, also its last good copy.
func TestTDMRepEntryRoundTrip(t *testing.T) {
	body := []byte(`[{"location": "/a/", "tdm-reservation": 1, "tdm-policy": "https://p.example/p"}]`)
	for _, e := range []*enforce.Entry{
		{Key: enforce.TDMKey("https://example.com", netip.Addr{}), Result: enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200, Body: body}},
		{Key: enforce.TDMKey("https://example.com", netip.Addr{}), Result: enforce.FetchResult{Status: enforce.StatusUnreachable, HTTPStatus: 503},
			Good: &enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200, Body: body}, Failures: 1},
	} {
		got := roundTrip(t, e)
		if got.Parsed != nil || got.TDM == nil || got.TDMErr != nil {
			t.Fatalf("decoded: %+v", got)
		}
		if r := got.TDM.Match("/a/x"); r == nil || r.Policy != "https://p.example/p" {
			t.Fatalf("rule: %+v", r)
		}
	}
}

// TestRedisFleetTDMRepSingleFetch: three replicas sharing one Redis, many
// concurrent first TDMRep decisions over them, exactly one tdmrep.json
// fetch at the origin, and every replica decides by its rules.
func TestRedisFleetTDMRepSingleFetch(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	release := make(chan struct{})
	var releaseOnce sync.Once
	open := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(open)
	var fetches atomic.Int64
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != tdmrep.WellKnownPath {
			http.NotFound(w, r)
			return
		}
		fetches.Add(1)
		<-release
		io.WriteString(w, `[{"location": "/private", "tdm-reservation": 1}]`)
	}))
	t.Cleanup(o.Close)
	c := redisClient(t, srv)
	lockKey := testKeys.lock(enforce.TDMKey(o.URL, netip.Addr{}).String())

	const n = 16
	wait := decideOnReplicas(t, srv, clock, n, func(e *enforce.Enforcer, path string) enforce.TDMVerdict {
		u, _ := url.Parse(o.URL + path)
		return e.TDMRep(context.Background(), u, "GET")
	})
	redisWaitFor(t, "the fetch lock", func() bool {
		n, err := c.Exists(context.Background(), lockKey).Result()
		return err == nil && n == 1
	})
	open()
	results := wait()
	if got := fetches.Load(); got != 1 {
		t.Fatalf("%d tdmrep.json fetches for %d decisions over 3 replicas, want 1", got, n)
	}
	for i, v := range results {
		if v.Reserved() != (i%2 == 0) || v.Unknown || v.FileStatus != enforce.StatusOK {
			t.Fatalf("decision %d: %+v", i, v)
		}
	}
}
