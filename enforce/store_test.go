package enforce

import (
	"context"
	"fmt"
	"hash/maphash"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/testsupport"
)

func TestMemoryStoreEvictsLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore(3, testCacheBytes)
	s.Set(ctx, robotsKey("b"), &Entry{Key: robotsKey("b")}, time.Minute)
	s.Set(ctx, robotsKey("a"), &Entry{Key: robotsKey("a")}, time.Hour)
	s.Set(ctx, robotsKey("c"), &Entry{Key: robotsKey("c")}, 0)
	s.Get(ctx, robotsKey("b")) // read: b is now used more recently than a
	s.Set(ctx, robotsKey("d"), &Entry{Key: robotsKey("d")}, 2*time.Hour)
	if _, ok := s.Get(ctx, robotsKey("a")); ok {
		t.Error("a kept: the entry least recently used was not evicted")
	}
	if s.Evictions() != 1 {
		t.Errorf("%d evictions counted, want 1", s.Evictions())
	}
	for _, o := range []string{"b", "c", "d"} {
		if e, ok := s.Get(ctx, robotsKey(o)); !ok || e.Key != robotsKey(o) {
			t.Errorf("%s evicted", o)
		}
	}
	// Replacing an entry does not evict.
	s.Set(ctx, robotsKey("a"), &Entry{Key: robotsKey("a2")}, time.Hour)
	if e, ok := s.Get(ctx, robotsKey("a")); !ok || e.Key != robotsKey("a2") || s.Len() != 3 {
		t.Errorf("replace: %+v %v len %d", e, ok, s.Len())
	}
	s.Delete(ctx, robotsKey("a"))
	if _, ok := s.Get(ctx, robotsKey("a")); ok || s.Len() != 2 {
		t.Errorf("after Delete: len %d", s.Len())
	}
	// The newest entry is kept even when it is the soonest to expire.
	s.Set(ctx, robotsKey("e"), &Entry{Key: robotsKey("e")}, time.Minute)
	s.Set(ctx, robotsKey("f"), &Entry{Key: robotsKey("f")}, time.Second)
	if _, ok := s.Get(ctx, robotsKey("f")); !ok || s.Len() != 3 {
		t.Errorf("newest entry evicted by its own Set (len %d)", s.Len())
	}
}

func TestMemoryStoreEvictsInBatches(t *testing.T) {
	// Over a bound, the store goes down to 7/8 of it: 16 → 14, the
	// three least recently stored leave at once.
	ctx := context.Background()
	s := NewMemoryStore(16, testCacheBytes)
	for i := 16; i >= 1; i-- { // stored in an order unrelated to the keep
		s.Set(ctx, robotsKey(strconv.Itoa(i)), &Entry{}, time.Duration(i)*time.Hour)
	}
	s.Set(ctx, robotsKey("new"), &Entry{}, time.Minute)
	if s.Len() != 14 {
		t.Fatalf("len %d after an overflow of a store of 16, want 14", s.Len())
	}
	for i := 1; i <= 16; i++ {
		if _, ok := s.Get(ctx, robotsKey(strconv.Itoa(i))); ok != (i < 14) {
			t.Errorf("entry stored %d-th from last: present %v", i, ok)
		}
	}
	if _, ok := s.Get(ctx, robotsKey("new")); !ok {
		t.Error("newest entry evicted")
	}
	if s.Bytes() != 14*entryCost(&Entry{}) {
		t.Errorf("%d bytes charged for 14 entries", s.Bytes())
	}
}

// TestMemoryStoreKeepsWhatIsUsed crawls one origin all day among many
// visited once: however soon its entry expires, it is never evicted, and
// the origins visited once are; storing one of those again counts as a
// refetch caused by eviction.
func TestMemoryStoreKeepsWhatIsUsed(t *testing.T) {
	ctx := context.Background()
	const max = 16
	s := NewMemoryStore(max, testCacheBytes)
	s.Set(ctx, robotsKey("hot"), &Entry{Key: robotsKey("hot")}, time.Minute) // the soonest to expire
	for i := 0; i < 20*max; i++ {
		s.Set(ctx, robotsKey("once"+strconv.Itoa(i)), &Entry{}, time.Hour)
		if _, ok := s.Get(ctx, robotsKey("hot")); !ok {
			t.Fatalf("the origin in use was evicted after %d others", i+1)
		}
	}
	if s.Evictions() < 20*max-max {
		t.Errorf("%d evictions counted for %d origins in a store of %d", s.Evictions(), 20*max+1, max)
	}
	if s.Refetches() != 0 {
		t.Errorf("%d refetches counted before any", s.Refetches())
	}
	// An origin evicted long ago, fetched again. The table of evicted
	// origins is hashed with a random seed: pick one whose slot no other
	// evicted origin shares, so that the count cannot depend on the seed.
	s.Set(ctx, robotsKey(evictedAlone(t, s, 20*max)), &Entry{}, time.Hour)
	s.Set(ctx, robotsKey("never-seen"), &Entry{}, time.Hour)
	if s.Refetches() != 1 {
		t.Errorf("%d refetches counted, want 1", s.Refetches())
	}
}

// evictedAlone returns an origin "onceI" (I < n) that s evicted and whose
// slot in the table of evicted origins holds no other evicted origin.
func evictedAlone(t *testing.T, s *MemoryStore, n int) string {
	t.Helper()
	slots := map[uint64][]string{}
	for i := 0; i < n; i++ {
		k := "once" + strconv.Itoa(i)
		if _, kept := s.c.Get(k); kept {
			continue
		}
		h := maphash.String(s.ghostsSeed, k) | 1
		slots[h%ghostSlots] = append(slots[h%ghostSlots], k)
	}
	for i := 0; i < n; i++ {
		k := "once" + strconv.Itoa(i)
		h := maphash.String(s.ghostsSeed, k) | 1
		if ks := slots[h%ghostSlots]; len(ks) == 1 && ks[0] == k {
			return k
		}
	}
	t.Fatal("every evicted origin shares its slot")
	return ""
}

func TestMemoryStoreBoundedUnderManyOrigins(t *testing.T) {
	ctx := context.Background()
	const max = 100
	s := NewMemoryStore(max, testCacheBytes)
	for i := 0; i < 50*max; i++ { // a broad crawl, or wildcard subdomains
		s.Set(ctx, robotsKey("http://h"+strconv.Itoa(i)+".example"), &Entry{}, time.Hour)
		if s.Len() > max {
			t.Fatalf("%d entries after %d origins, bound %d", s.Len(), i+1, max)
		}
	}
	if s := NewMemoryStore(0, -1); s.max != 1 || s.maxBytes != 1 {
		t.Errorf("bounds %d entries, %d bytes; want 1 and 1: the store is always bounded", s.max, s.maxBytes)
	}
}

// The keep is on the real clock (go-cache's): these tests wait for a
// millisecond keep to pass, with waitFor's deadline, and assert no
// duration.
func TestMemoryStoreKeep(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore(2, testCacheBytes)
	s.Set(ctx, robotsKey("short"), &Entry{}, time.Millisecond)
	s.Set(ctx, robotsKey("long"), &Entry{}, time.Hour)
	testsupport.WaitFor(t, "_, ok := s.Get(ctx, \"short\"); return !ok", func() bool { _, ok := s.Get(ctx, robotsKey("short")); return !ok })
	if _, ok := s.Get(ctx, robotsKey("long")); !ok {
		t.Error("entry dropped before its keep")
	}
	if s.Len() != 2 {
		t.Errorf("len %d: the expired entry is swept by a Set, not by Get", s.Len())
	}
	// An expired entry goes before a live one is evicted.
	s.Set(ctx, robotsKey("y"), &Entry{}, 0)
	if _, ok := s.Get(ctx, robotsKey("long")); !ok || s.Len() != 2 || s.Bytes() != 2*entryCost(&Entry{}) {
		t.Errorf("live entry evicted although an expired one was there (len %d, %d bytes)", s.Len(), s.Bytes())
	}
}

func TestMemoryStoreSweepsExpired(t *testing.T) {
	// Under its bounds, the store drops expired entries on a Set once
	// sweepEvery has passed since the last sweep.
	ctx := context.Background()
	s := NewMemoryStore(10, testCacheBytes)
	s.Set(ctx, robotsKey("a"), &Entry{}, time.Millisecond)
	testsupport.WaitFor(t, "_, ok := s.Get(ctx, \"a\"); return !ok", func() bool { _, ok := s.Get(ctx, robotsKey("a")); return !ok })
	s.Set(ctx, robotsKey("b"), &Entry{}, time.Hour) // within sweepEvery: no sweep
	if s.Len() != 2 {
		t.Fatalf("len %d, want 2 (swept too early)", s.Len())
	}
	s.lastSweep = time.Now().Add(-sweepEvery)
	s.Set(ctx, robotsKey("c"), &Entry{}, time.Hour)
	if s.Len() != 2 || s.Bytes() != 2*entryCost(&Entry{}) {
		t.Errorf("after a sweep: len %d, %d bytes", s.Len(), s.Bytes())
	}
}

// keepRecorder is a MemoryStore that records the keep of each Set.
type keepRecorder struct {
	*MemoryStore
	mu   sync.Mutex
	keep map[string]time.Duration
}

func (r *keepRecorder) Set(ctx context.Context, key Key, e *Entry, keep time.Duration) {
	r.mu.Lock()
	r.keep[key.String()] = keep
	r.mu.Unlock()
	r.MemoryStore.Set(ctx, key, e, keep)
}

func TestEnforcerStoreKeep(t *testing.T) {
	// The store's keep is on the real clock: check the keep the Enforcer
	// asks for against its (fake) clock instead.
	for _, tt := range []struct {
		code     int
		wantKept bool
	}{
		{200, true},  // a good copy serves while its origin is unreachable
		{503, true},  // the unreachable streak counts towards the window
		{404, false}, // nothing to serve once expired
	} {
		t.Run(strconv.Itoa(tt.code), func(t *testing.T) {
			s := &keepRecorder{MemoryStore: newTestStore(), keep: map[string]time.Duration{}}
			v := newEnv(t, serve(tt.code, testRobots), Config{Store: s, TTL: time.Hour, RetryMin: time.Hour, RetryMax: time.Hour})
			v.decide("/", 1)
			s.mu.Lock()
			keep, ok := s.keep[v.o.srv.URL]
			s.mu.Unlock()
			if !ok {
				t.Fatal("entry not stored")
			}
			// Kept past its freshness (an hour) or not.
			if kept := keep > time.Hour; kept != tt.wantKept {
				t.Errorf("HTTP %d entry kept %v: past its freshness %v, want %v", tt.code, keep, kept, tt.wantKept)
			}
		})
	}
}

func TestEnforcerWithBoundedStore(t *testing.T) {
	// Three origins through a store of two: the evicted one (the soonest
	// to expire, here the least recently fetched) is fetched again, the
	// verdicts stay right.
	s := NewMemoryStore(2, testCacheBytes)
	e := newTestEnforcer(t, Config{Fetcher: &HTTPFetcher{MaxRedirects: testRedirects}, Store: s}, enforcetest.NewClock(t0))
	var origins []*testOrigin
	for i := 0; i < 3; i++ {
		origins = append(origins, newOrigin(t, serve(200, fmt.Sprintf("User-agent: *\nDisallow: /p%d\n", i))))
	}
	for round := 0; round < 2; round++ {
		for i, o := range origins {
			if d := e.Decide(context.Background(), o.url(fmt.Sprintf("/p%d", i)), "", DecideOptions{}); d.Allowed {
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
