package redisfleet

import (
	"bytes"
	"compress/flate"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/redistest"
)

// TestEntryCodecVersions: version 3 keeps validators, flags and hash;
// a version 2 entry still decodes (its body hashed on load); a version 3
// payload read as version 2 is rejected, never misread.
func TestEntryCodecVersions(t *testing.T) {
	res := enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200, Body: []byte(redisTestRobots),
		ETag: `"v1"`, LastModified: "Thu, 01 Jan 2026 00:00:00 GMT", NoCache: true, NotModified: true}
	e := &enforce.Entry{Key: robotsKey("https://a.test"), Result: res, FetchedAt: redisT0, Expires: redisT0.Add(time.Hour)}
	e.Rebuild(0)
	t.Run("v3", func(t *testing.T) {
		got := roundTrip(t, e).Result
		if got.ETag != res.ETag || got.LastModified != res.LastModified || !got.NoCache || !got.NotModified ||
			got.SHA256 != e.Result.SHA256 || len(got.SHA256) != 64 {
			t.Fatalf("decoded %+v, want the validators, flags and hash of %+v", got, e.Result)
		}
	})
	t.Run("v2", func(t *testing.T) {
		v2 := encodeV2(t, e)
		got, err := decodeRedisEntry(v2, e.Key, testMaxBytes)
		if err != nil {
			t.Fatal(err)
		}
		if got.Result.ETag != "" || got.Result.SHA256 != e.Result.SHA256 || got.Parsed == nil {
			t.Fatalf("version 2 entry decoded as %+v", got.Result)
		}
	})
	t.Run("v3-read-as-v2", func(t *testing.T) {
		raw, err := encodeRedisEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		relabelled := append([]byte(entryVersion2), raw[len(entryVersion):]...)
		if _, err := decodeRedisEntry(relabelled, e.Key, testMaxBytes); err == nil {
			t.Fatal("a version 3 payload decoded as version 2")
		}
	})
}

// encodeV2 returns e (a good copy, no Good) in the version 2 form.
func encodeV2(t *testing.T, e *enforce.Entry) []byte {
	t.Helper()
	var p payload // version 2
	p.str(e.Key.String())
	p.result(e.Result)
	for _, tm := range []time.Time{e.FetchedAt, e.Expires, e.GoodAt, e.UnreachableSince} {
		p.time(tm)
	}
	p.uint(uint64(e.Failures))
	var out bytes.Buffer
	out.WriteString(entryVersion2 + "|" + strconv.FormatInt(e.FetchedAt.UnixMilli(), 10) + "|o|0|" + strconv.Itoa(e.Failures) + "|")
	w, err := flate.NewWriterDict(&out, flate.BestCompression, []byte(entryDict))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write(p.b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestRedisFleetConditionalRefetch: the validators travel through Redis,
// so another replica revalidates the entry one fetched: the origin sends
// the body once, then only 304s.
func TestRedisFleetConditionalRefetch(t *testing.T) {
	srv := redistest.Start(t)
	clock := enforcetest.NewClock(redisT0)
	var full, notModified atomic.Int64
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		w.Header().Set("ETag", `"v1"`)
		_, _ = w.Write([]byte(redisTestRobots))
	}))
	t.Cleanup(o.Close)
	a := newRedisEnforcer(t, newTestRedis(t, srv, clock, nil), clock)
	first, err := a.Entry(context.Background(), o.URL)
	if err != nil || first.Result.SHA256 == "" {
		t.Fatalf("first fetch: %+v, %v", first, err)
	}
	for i := range 3 {
		clock.Advance(24 * time.Hour)
		b := newRedisEnforcer(t, newTestRedis(t, srv, clock, nil), clock) // a new replica: nothing local
		en, err := b.Entry(context.Background(), o.URL)
		if err != nil || en.Parsed == nil || en.Result.SHA256 != first.Result.SHA256 || !en.Result.NotModified {
			t.Fatalf("revalidation %d: %+v, %v", i, en, err)
		}
	}
	if full.Load() != 1 || notModified.Load() != 3 {
		t.Fatalf("origin answered %d in full and %d not modified, want 1 and 3", full.Load(), notModified.Load())
	}
}
