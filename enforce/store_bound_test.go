package enforce

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/heapsize"
)

func TestMemoryStoreByteBound(t *testing.T) {
	// A few origins with huge robots.txt files are bounded like many
	// small ones.
	ctx := context.Background()
	big := make([]byte, 500<<10)
	entry := func() *Entry { return &Entry{Result: FetchResult{Status: StatusOK, Body: big}} }
	const budget = 20 << 20
	s := NewMemoryStore(1000, budget)
	for i := 0; i < 100; i++ {
		s.Set(ctx, robotsKey("http://h"+strconv.Itoa(i)+".evil.example"), entry(), time.Hour)
		if s.Bytes() > budget {
			t.Fatalf("%d bytes charged after %d origins, bound %d", s.Bytes(), i+1, budget)
		}
	}
	// Evicted in a batch down to 7/8 of the bound: 2 or 3 entries kept.
	cost := entryCost(entry())
	if max := int(budget / cost); s.Len() < 1 || s.Len() > max || s.Bytes() != int64(s.Len())*cost {
		t.Errorf("%d entries kept, %d bytes charged, want at most %d of %d", s.Len(), s.Bytes(), max, cost)
	}
	if _, ok := s.Get(ctx, robotsKey("http://h99.evil.example")); !ok {
		t.Error("newest entry evicted")
	}
	// Replacing and deleting keep the account right.
	n := int64(s.Len())
	s.Set(ctx, robotsKey("http://h99.evil.example"), &Entry{}, 0)
	if want := (n-1)*cost + entryCost(&Entry{}); s.Bytes() != want {
		t.Errorf("after replacing: %d bytes, want %d", s.Bytes(), want)
	}
	for i := 0; i < 100; i++ {
		s.Delete(ctx, robotsKey("http://h"+strconv.Itoa(i)+".evil.example"))
	}
	if s.Bytes() != 0 || s.Len() != 0 {
		t.Errorf("empty store: %d bytes, %d entries", s.Bytes(), s.Len())
	}
	// An entry larger than the whole bound is still kept (the newest).
	s = NewMemoryStore(10, 1)
	s.Set(ctx, robotsKey("a"), entry(), 0)
	s.Set(ctx, robotsKey("b"), entry(), 0)
	if _, ok := s.Get(ctx, robotsKey("b")); !ok || s.Len() != 1 {
		t.Errorf("newest entry not kept alone: len %d", s.Len())
	}
	// The cost of a failure entry counts its good copy.
	bare := entryCost(&Entry{Result: FetchResult{Status: StatusUnreachable}, Good: &FetchResult{}})
	if c := entryCost(&Entry{Result: FetchResult{Status: StatusUnreachable}, Good: &FetchResult{Body: big}}); c != bare+heapsize.Alloc(uintptr(len(big))) {
		t.Errorf("entryCost of a stale copy = %d", c)
	}
}

// entryCost must not under-charge: measure what entries of a few sizes
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
		s := NewMemoryStore(n, 1<<40)
		e := &Enforcer{maxBytes: robots.DefaultMaxBytes, ttl: time.Hour, window: time.Hour}
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for i := 0; i < n; i++ {
			o := "http://h" + strconv.Itoa(i) + ".example"
			r := FetchResult{Status: StatusOK, HTTPStatus: 200, Body: []byte(body), FinalURL: o + "/robots.txt"}
			s.Set(context.Background(), robotsKey(o), e.next(robotsKey(o), nil, r, t0), time.Hour)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		per := (int64(m1.HeapAlloc) - int64(m0.HeapAlloc)) / n
		cost := s.Bytes() / n
		t.Logf("%d rules, %d-byte body: %d B per entry on the heap, charged %d", rules, len(body), per, cost)
		if per > cost {
			t.Errorf("%d-byte body: entries hold %d B each, entryCost charges %d", len(body), per, cost)
		}
		runtime.KeepAlive(s)
	}
}

// The byte account follows every way an entry leaves: Delete, replace
// (live or expired but not yet swept) and the sweep of expired entries.
func TestMemoryStoreAccountingExact(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore(100, 1<<40)
	want := map[string]int64{}
	check := func(step string) {
		t.Helper()
		var sum int64
		for _, c := range want {
			sum += c
		}
		if s.Bytes() != sum || s.Len() != len(want) {
			t.Fatalf("%s: %d bytes, %d entries; want %d, %d", step, s.Bytes(), s.Len(), sum, len(want))
		}
	}
	set := func(o string, bodyLen int, keep time.Duration) {
		e := &Entry{Key: robotsKey(o), Result: FetchResult{Status: StatusOK, Body: make([]byte, bodyLen)}}
		s.Set(ctx, robotsKey(o), e, keep)
		want[o] = entryCost(e)
	}
	for i, o := range []string{"a", "b", "c", "d"} {
		set(o, 100*i, time.Hour)
	}
	check("new entries")
	set("a", 5000, time.Hour)
	set("d", 0, 0)
	check("replaced")
	s.Set(ctx, robotsKey("nil"), nil, time.Hour)
	want["nil"] = 0
	if _, ok := s.Get(ctx, robotsKey("nil")); ok {
		t.Error("nil entry served")
	}
	check("nil entry")
	s.Delete(ctx, robotsKey("c"))
	s.Delete(ctx, robotsKey("missing"))
	delete(want, "c")
	check("deleted")

	// Replacing an expired entry that go-cache still holds (hidden from
	// Get) uncharges it.
	set("x", 300, time.Millisecond)
	testsupport.WaitFor(t, "_, ok := s.Get(ctx, \"x\"); return !ok", func() bool { _, ok := s.Get(ctx, robotsKey("x")); return !ok })
	check("expired, not swept")
	set("x", 7, time.Hour)
	check("expired entry replaced")

	// The sweep of expired entries uncharges them.
	set("y", 900, time.Millisecond)
	testsupport.WaitFor(t, "_, ok := s.Get(ctx, \"y\"); return !ok", func() bool { _, ok := s.Get(ctx, robotsKey("y")); return !ok })
	s.lastSweep = time.Now().Add(-sweepEvery)
	set("z", 1, time.Hour)
	delete(want, "y")
	check("swept")

	for o := range want {
		s.Delete(ctx, robotsKey(o))
	}
	if s.Bytes() != 0 || s.Len() != 0 {
		t.Errorf("all deleted: %d bytes, %d entries", s.Bytes(), s.Len())
	}
}

// Run with -race: concurrent Get, Set (replacing, evicting, expiring)
// and Delete keep entries intact, the bounds and the byte account exact.
func TestMemoryStoreConcurrent(t *testing.T) {
	ctx := context.Background()
	const max, maxBytes = 16, 40 << 10
	s := NewMemoryStore(max, maxBytes)
	var keys []string
	for i := 0; i < 3*max; i++ {
		keys = append(keys, "http://h"+strconv.Itoa(i)+".example")
	}
	deadline := time.Now().Add(5 * time.Second)
	var wg sync.WaitGroup
	bad := make(chan string, 1)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000 && time.Now().Before(deadline); i++ {
				o := keys[(g*7+i*13)%len(keys)]
				if i%2 == 0 {
					o = keys[i/2%2] // two hot origins: Set and Delete meet
				}
				switch i % 5 {
				case 0, 1:
					keep := time.Hour
					switch {
					case i%3 == 0:
						keep = time.Microsecond
					case i%7 == 0:
						keep = 0
					}
					s.Set(ctx, robotsKey(o), &Entry{Key: robotsKey(o), Result: FetchResult{Body: make([]byte, i%8*100)}}, keep)
				case 2:
					s.Delete(ctx, robotsKey(o))
				default:
					if e, ok := s.Get(ctx, robotsKey(o)); ok && e.Key != robotsKey(o) {
						select {
						case bad <- fmt.Sprintf("Get(%s) returned %s's entry", o, e.Key):
						default:
						}
					}
					if s.Bytes() < 0 {
						select {
						case bad <- fmt.Sprintf("negative byte account %d", s.Bytes()):
						default:
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	close(bad)
	for msg := range bad {
		t.Error(msg)
	}
	if s.Len() > max || s.Bytes() > maxBytes {
		t.Errorf("%d entries, %d bytes; bounds %d, %d", s.Len(), s.Bytes(), max, maxBytes)
	}
	for _, o := range keys {
		s.Delete(ctx, robotsKey(o))
	}
	if s.Bytes() != 0 || s.Len() != 0 {
		t.Errorf("all deleted: %d bytes, %d entries", s.Bytes(), s.Len())
	}
}

// A store starts no goroutine (go-cache's janitor is off), so tests and
// callers may create stores freely.
func TestMemoryStoreStartsNoGoroutine(t *testing.T) {
	n0 := runtime.NumGoroutine()
	stores := make([]*MemoryStore, 100)
	for i := range stores {
		stores[i] = newTestStore()
		stores[i].Set(context.Background(), robotsKey("a"), &Entry{}, time.Hour)
	}
	if n := runtime.NumGoroutine(); n >= n0+len(stores)/2 {
		t.Errorf("%d goroutines after creating %d stores, %d before", n, len(stores), n0)
	}
	runtime.KeepAlive(stores)
}

// Get writes nothing: parallel readers share go-cache's read lock.
func BenchmarkMemoryStoreGetParallel(b *testing.B) {
	ctx := context.Background()
	s := newTestStore()
	for i := 0; i < 1000; i++ {
		o := "http://h" + strconv.Itoa(i) + ".example"
		s.Set(ctx, robotsKey(o), &Entry{Key: robotsKey(o)}, time.Hour)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := s.Get(ctx, robotsKey("http://h42.example")); !ok {
				b.Error("miss")
				return
			}
		}
	})
}
