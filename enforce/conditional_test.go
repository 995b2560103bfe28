package enforce

import (
	"context"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// conditionalOrigin serves body with ETag etag, answering 304 to a
// request whose If-None-Match is etag; full and notModified count the
// answers of each kind.
type conditionalOrigin struct {
	full, notModified atomic.Int64
}

func (c *conditionalOrigin) handler(body, etag, notModifiedETag string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == etag {
			c.notModified.Add(1)
			if notModifiedETag != "" {
				w.Header().Set("ETag", notModifiedETag)
			}
			w.WriteHeader(http.StatusNotModified)
			return
		}
		c.full.Add(1)
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT")
		_, _ = w.Write([]byte(body))
	}
}

func TestConditionalRefetchKeepsCopy(t *testing.T) {
	var c conditionalOrigin
	var hooked304 atomic.Int64
	hooks := Hooks{Fetched: func(_ string, r FetchResult, _ time.Duration) {
		if r.HTTPStatus == http.StatusNotModified {
			hooked304.Add(1)
		}
	}}
	v := newEnv(t, c.handler(testRobots, `"v1"`, ""), Config{Hooks: hooks})
	first := v.decide("/private", 1)
	if first.Allowed || first.RobotsSHA256 == "" {
		t.Fatalf("first: %+v", first)
	}
	en0, _ := v.e.Cached(context.Background(), v.o.srv.URL)
	for i := int64(1); i <= 3; i++ {
		v.clock.Advance(24 * time.Hour)
		v.decide("/private", i+1) // the stale copy decides while it is revalidated
		d := v.decide("/private", i+1)
		if d.Allowed || d.RobotsAge != 0 || d.RobotsSHA256 != first.RobotsSHA256 {
			t.Fatalf("after revalidation %d: %+v", i, d)
		}
		en, _ := v.e.Cached(context.Background(), v.o.srv.URL)
		if en.Parsed != en0.Parsed || !en.Expires.Equal(v.clock.Now().Add(24*time.Hour)) || en.Result.ETag != `"v1"` {
			t.Fatalf("entry after revalidation %d: %+v", i, en)
		}
	}
	if c.full.Load() != 1 || c.notModified.Load() != 3 || hooked304.Load() != 3 {
		t.Fatalf("origin answered %d in full, %d not modified; hook saw %d 304s", c.full.Load(), c.notModified.Load(), hooked304.Load())
	}
}

func TestNotModifiedNeverOpens(t *testing.T) {
	t.Run("unasked", func(t *testing.T) {
		v := newEnv(t, serve(http.StatusNotModified, ""), Config{})
		if d := v.decide("/private", 1); d.Allowed || d.RobotsStatus != StatusUnreachable {
			t.Fatalf("a 304 nobody asked for: %+v", d)
		}
	})
	t.Run("other-etag", func(t *testing.T) {
		var c conditionalOrigin
		v := newEnv(t, c.handler(testRobots, `"v1"`, ""), Config{})
		v.decide("/private", 1)
		// Now a 304 names another version; the full answer is new rules.
		v.o.set(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("If-None-Match") != "" {
				w.Header().Set("ETag", `"v2"`)
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", `"v3"`)
			_, _ = w.Write([]byte("User-agent: *\nDisallow: /other\n"))
		})
		v.clock.Advance(24 * time.Hour)
		v.decide("/x", 3) // stale copy decides; the revalidation fetched twice
		if d := v.decide("/other", 3); d.Allowed || d.Rule != "Disallow: /other" {
			t.Fatalf("after a 304 with another ETag: %+v", d)
		}
	})
	t.Run("no-parsed-copy", func(t *testing.T) {
		en := &Entry{Key: RobotsKey("http://a", netip.Addr{}), Result: FetchResult{Status: StatusOK, ETag: `"v1"`}}
		if _, ok := validatorsOf(en); ok {
			t.Fatal("an entry without its parsed form is revalidated")
		}
	})
}

func TestFreshnessCeiling(t *testing.T) {
	tests := []struct {
		name   string
		header string
	}{
		{"max-age above a day", "max-age=999999"},
		{"no max-age", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t, serve(200, testRobots, "Cache-Control", tt.header), Config{TTL: 72 * time.Hour})
			v.decide("/", 1)
			en, ok := v.e.Cached(context.Background(), v.o.srv.URL)
			if !ok || en.Expires.Sub(en.FetchedAt) != MaxFreshness {
				t.Fatalf("entry fresh for %v, want %v", en.Expires.Sub(en.FetchedAt), MaxFreshness)
			}
		})
	}
}
