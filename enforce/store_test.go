package enforce

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
)

func TestMemoryStoreEvictsLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStoreSize(3, 0)
	for _, o := range []string{"a", "b", "c"} {
		s.Set(ctx, o, &Entry{Origin: o}, 0)
	}
	s.Get(ctx, "a") // b is now the least recently used
	s.Set(ctx, "d", &Entry{Origin: "d"}, 0)
	if _, ok := s.Get(ctx, "b"); ok {
		t.Error("b kept: the least recently used entry was not evicted")
	}
	for _, o := range []string{"a", "c", "d"} {
		if e, ok := s.Get(ctx, o); !ok || e.Origin != o {
			t.Errorf("%s evicted", o)
		}
	}
	// Replacing an entry does not evict.
	s.Set(ctx, "a", &Entry{Origin: "a2"}, 0)
	if e, ok := s.Get(ctx, "a"); !ok || e.Origin != "a2" || s.Len() != 3 {
		t.Errorf("replace: %+v %v len %d", e, ok, s.Len())
	}
	s.Delete(ctx, "a")
	if _, ok := s.Get(ctx, "a"); ok || s.Len() != 2 {
		t.Errorf("after Delete: len %d", s.Len())
	}
}

func TestMemoryStoreBoundedUnderManyOrigins(t *testing.T) {
	ctx := context.Background()
	const max = 100
	s := NewMemoryStoreSize(max, 0)
	for i := 0; i < 50*max; i++ { // a broad crawl, or wildcard subdomains
		s.Set(ctx, "http://h"+strconv.Itoa(i)+".example", &Entry{}, time.Hour)
		if s.Len() > max {
			t.Fatalf("%d entries after %d origins, bound %d", s.Len(), i+1, max)
		}
	}
	if s := NewMemoryStoreSize(0, -1); s.max != DefaultMaxEntries || s.maxBytes != DefaultMaxCacheBytes || NewMemoryStore().max != DefaultMaxEntries {
		t.Error("default bound not applied")
	}
}

func TestMemoryStoreKeep(t *testing.T) {
	ctx := context.Background()
	now := t0
	s := NewMemoryStoreSize(2, 0)
	s.now = func() time.Time { return now }
	s.Set(ctx, "short", &Entry{}, time.Minute)
	s.Set(ctx, "long", &Entry{}, time.Hour)
	now = now.Add(time.Minute)
	if _, ok := s.Get(ctx, "short"); ok {
		t.Error("entry served past its keep")
	}
	if _, ok := s.Get(ctx, "long"); !ok {
		t.Error("entry dropped before its keep")
	}
	// An expired entry at the cold end goes before a live one is evicted.
	s.Set(ctx, "x", &Entry{}, time.Minute)
	now = now.Add(2 * time.Minute)
	s.Get(ctx, "long")
	s.Set(ctx, "y", &Entry{}, 0)
	if _, ok := s.Get(ctx, "long"); !ok || s.Len() != 2 {
		t.Errorf("live entry evicted although an expired one was there (len %d)", s.Len())
	}
}

func TestEnforcerStoreKeep(t *testing.T) {
	// The store's keep is on the real clock; tie it to the fake one.
	for _, tt := range []struct {
		code     int
		wantKept bool
	}{
		{200, true},  // a good copy serves while its origin is unreachable
		{503, true},  // the unreachable streak counts towards the window
		{404, false}, // nothing to serve once expired
	} {
		t.Run(strconv.Itoa(tt.code), func(t *testing.T) {
			s := NewMemoryStore()
			v := newEnv(t, serve(tt.code, testRobots), Config{Store: s, TTL: time.Hour, RetryMin: time.Hour, RetryMax: time.Hour})
			s.now = v.clock.Now
			v.decide("/", 1)
			v.clock.Advance(time.Hour)
			if _, ok := s.Get(context.Background(), v.o.srv.URL); ok != tt.wantKept {
				t.Errorf("HTTP %d entry kept past its freshness: %v, want %v", tt.code, ok, tt.wantKept)
			}
		})
	}
}

func TestEnforcerWithBoundedStore(t *testing.T) {
	// Three origins through a store of two: the evicted one is fetched
	// again, the verdicts stay right.
	s := NewMemoryStoreSize(2, 0)
	e := newTestEnforcer(t, Config{Fetcher: &HTTPFetcher{}, Store: s}, enforcetest.NewClock(t0))
	var origins []*testOrigin
	for i := 0; i < 3; i++ {
		origins = append(origins, newOrigin(t, serve(200, fmt.Sprintf("User-agent: *\nDisallow: /p%d\n", i))))
	}
	for round := 0; round < 2; round++ {
		for i, o := range origins {
			if d := e.Decide(context.Background(), o.url(fmt.Sprintf("/p%d", i)), ""); d.Allowed {
				t.Fatalf("round %d origin %d: %+v", round, i, d)
			}
		}
	}
	if s.Len() != 2 {
		t.Errorf("len %d, bound 2", s.Len())
	}
	for i, o := range origins {
		if got := o.robots.Load(); got != 2 {
			t.Errorf("origin %d fetched %d times, want 2 (evicted between rounds)", i, got)
		}
	}
}

func TestMemoryStoreByteBound(t *testing.T) {
	// A few origins with huge robots.txt files are bounded like many
	// small ones.
	ctx := context.Background()
	big := make([]byte, 500<<10)
	entry := func() *Entry { return &Entry{Result: FetchResult{Status: StatusOK, Body: big}} }
	const budget = 20 << 20
	s := NewMemoryStoreSize(1000, budget)
	for i := 0; i < 100; i++ {
		s.Set(ctx, "http://h"+strconv.Itoa(i)+".evil.example", entry(), time.Hour)
		if s.Bytes() > budget {
			t.Fatalf("%d bytes charged after %d origins, bound %d", s.Bytes(), i+1, budget)
		}
	}
	if want := int(budget / EntryCost(entry())); s.Len() != want {
		t.Errorf("%d entries kept, want %d", s.Len(), want)
	}
	// Replacing and deleting keep the account right.
	s.Set(ctx, "http://h99.evil.example", &Entry{}, 0)
	for i := 0; i < 100; i++ {
		s.Delete(ctx, "http://h"+strconv.Itoa(i)+".evil.example")
	}
	if s.Bytes() != 0 || s.Len() != 0 {
		t.Errorf("empty store: %d bytes, %d entries", s.Bytes(), s.Len())
	}
	// An entry larger than the whole bound is still kept (the newest).
	s = NewMemoryStoreSize(10, 1)
	s.Set(ctx, "a", entry(), 0)
	s.Set(ctx, "b", entry(), 0)
	if _, ok := s.Get(ctx, "b"); !ok || s.Len() != 1 {
		t.Errorf("newest entry not kept alone: len %d", s.Len())
	}
	// The cost of a failure entry counts its good copy.
	if c := EntryCost(&Entry{Result: FetchResult{Status: StatusUnreachable}, Good: &FetchResult{Body: big}}); c != 1<<10+12*int64(len(big)) {
		t.Errorf("EntryCost of a stale copy = %d", c)
	}
}

// EntryCost must not under-charge: measure what entries of a few sizes
// really hold (the body and its parsed rules) on the heap.
func TestEntryCostCoversMemory(t *testing.T) {
	for _, rules := range []int{1, 20, 200} {
		var b strings.Builder
		b.WriteString("User-agent: *\n")
		for i := 0; i < rules; i++ {
			fmt.Fprintf(&b, "Disallow: /section-%d/private/*.pdf$\n", i)
		}
		body := b.String()
		const n = 200
		s := NewMemoryStoreSize(n, 1<<40)
		e := &Enforcer{maxBytes: DefaultMaxBytes, ttl: time.Hour, window: time.Hour}
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for i := 0; i < n; i++ {
			o := "http://h" + strconv.Itoa(i) + ".example"
			r := FetchResult{Status: StatusOK, HTTPStatus: 200, Body: []byte(body), FinalURL: o + "/robots.txt"}
			s.Set(context.Background(), o, e.next(o, nil, r, t0), time.Hour)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		per := (int64(m1.HeapAlloc) - int64(m0.HeapAlloc)) / n
		cost := s.Bytes() / n
		t.Logf("%d rules, %d-byte body: %d B per entry on the heap, charged %d", rules, len(body), per, cost)
		if per > cost {
			t.Errorf("%d-byte body: entries hold %d B each, EntryCost charges %d", len(body), per, cost)
		}
		runtime.KeepAlive(s)
	}
}
