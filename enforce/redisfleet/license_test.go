package redisfleet

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/redistest"
	"github.com/robotsgate/robotsgate/robots/aipref"
	"github.com/robotsgate/robotsgate/robots/rsl"
)

const redisLicense = `<rsl xmlns="https://rslstandard.org/rsl"><content url="/private"><license><prohibits type="usage">ai-train</prohibits></license></content></rsl>`

// TestLicenseEntryRoundTrip: an RSL license entry stored in Redis comes
// back with its document rebuilt, also from its last good copy.
func TestLicenseEntryRoundTrip(t *testing.T) {
	key := enforce.LicenseKey("https://example.com/license.xml")
	body := []byte(redisLicense)
	for _, e := range []*enforce.Entry{
		{Key: key, Result: enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200, Body: body}},
		{Key: key, Result: enforce.FetchResult{Status: enforce.StatusUnreachable, HTTPStatus: 503},
			Good: &enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200, Body: body}, Failures: 1},
	} {
		got := roundTrip(t, e)
		if got.Parsed != nil || got.TDM != nil || got.License == nil || got.LicenseErr != nil {
			t.Fatalf("decoded: %+v", got)
		}
		if v := got.License.Decide("https://example.com", "/private/x", rsl.UseAITrain); v.State != rsl.Prohibited {
			t.Fatalf("verdict: %+v", v)
		}
	}
}

// TestRedisFleetLicenseSingleFetch: three replicas sharing one Redis,
// concurrent first license decisions over them, one license fetch at
// the origin, and every replica decides by it.
func TestRedisFleetLicenseSingleFetch(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	var fetches atomic.Int64
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "License: http://"+r.Host+"/license.xml\nUser-agent: *\nAllow: /\n")
		case "/license.xml":
			fetches.Add(1)
			io.WriteString(w, redisLicense)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(o.Close)
	const n = 12
	results := decideOnReplicas(t, srv, clock, n, func(e *enforce.Enforcer, path string) enforce.LicenseVerdict {
		u, _ := url.Parse(o.URL + path)
		e.Decide(context.Background(), u, "", enforce.DecideOptions{})
		return e.Licenses(context.Background(), u, "GET", "", aipref.SetOf(aipref.TrainAI))
	})()
	if got := fetches.Load(); got != 1 {
		t.Fatalf("%d license fetches for %d decisions over 3 replicas, want 1", got, n)
	}
	for i, v := range results {
		want := rsl.None
		if i%2 == 0 {
			want = rsl.Prohibited
		}
		if v.State != want || v.Unknown || !v.Checked {
			t.Fatalf("decision %d: %+v", i, v)
		}
	}
}
