package enforce

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/robotsmix"
	"github.com/robotsgate/robotsgate/robots"
)

// mixFill stores n entries of the realistic mix (robotsmix) in s, each
// built as the Enforcer builds one from a fetch: the body read as readBody
// reads it, parsed, and kept for a day. It returns the sum of the bodies'
// lengths.
func mixFill(t testing.TB, s *MemoryStore, n int) (bodies int64) {
	return fillWith(t, s, n, func(i int, host string) []byte { return robotsmix.File(i, host) })
}

// realFill stores each file of the real-world corpus (robotsmix.RealWorld)
// in s, as mixFill does.
func realFill(t testing.TB, s *MemoryStore) (bodies int64) {
	files := robotsmix.RealWorldForTest(t)
	return fillWith(t, s, len(files), func(i int, _ string) []byte { return files[i].Body })
}

// fillWith stores n entries in s, the body of entry i file(i, its host).
func fillWith(t testing.TB, s *MemoryStore, n int, file func(i int, host string) []byte) (bodies int64) {
	e := &Enforcer{maxBytes: robots.DefaultMaxBytes, ttl: 24 * time.Hour, window: time.Hour}
	now := time.Now()
	for i := 0; i < n; i++ {
		o := "http://h" + strconv.Itoa(i) + ".mix.example"
		body, err := io.ReadAll(bytes.NewReader(file(i, o[7:])))
		if err != nil {
			t.Fatal(err)
		}
		bodies += int64(len(body))
		r := FetchResult{Status: StatusOK, HTTPStatus: 200, Body: body, FinalURL: o + "/robots.txt"}
		s.Set(context.Background(), robotsKey(o), e.next(robotsKey(o), nil, r, now), 24*time.Hour)
	}
	return bodies
}

// liveHeap returns the live heap after a collection.
func liveHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// BenchmarkStoreMixHeap reports the live heap a MemoryStore holds per
// cached origin of the realistic mix, against the mean body and the
// bytes the store charges.
func BenchmarkStoreMixHeap(b *testing.B) {
	const n = 20000
	for range b.N {
		h0 := liveHeap()
		s := NewMemoryStore(n, 1<<40)
		bodies := mixFill(b, s, n)
		live := liveHeap() - h0
		b.ReportMetric(float64(live)/n, "heapB/origin")
		b.ReportMetric(float64(bodies)/n, "bodyB/origin")
		b.ReportMetric(float64(s.Bytes())/n, "chargedB/origin")
		b.ReportMetric(float64(live-2*bodies)/n, "overB/origin")
		runtime.KeepAlive(s)
	}
}

// TestStoreChargeMatchesHeap checks that what a MemoryStore charges for
// the entries it keeps is what they hold on the heap, within 10 %, for
// thousands of entries of the realistic mix and for the real-world corpus:
// robots.max_cache_mb then bounds the memory the cache really holds.
func TestStoreChargeMatchesHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a store with thousands of entries")
	}
	fills := map[string]func(t testing.TB, s *MemoryStore) int64{
		"mix":        func(t testing.TB, s *MemoryStore) int64 { return mixFill(t, s, 4000) },
		"real-world": realFill,
	}
	for name, fill := range fills {
		t.Run(name, func(t *testing.T) {
			h0 := liveHeap()
			s := NewMemoryStore(1<<20, 1<<40)
			bodies := fill(t, s)
			live := liveHeap() - h0
			charged := s.Bytes()
			n := int64(s.Len())
			t.Logf("%d entries: %d B charged, %d B live heap, %d B of bodies (per entry: %d, %d, %d)",
				n, charged, live, bodies, charged/n, live/n, bodies/n)
			if d := float64(charged-live) / float64(live); d > 0.10 || d < -0.10 {
				t.Errorf("charged %d B for %d B of live heap (%+.1f %%)", charged, live, 100*d)
			}
			runtime.KeepAlive(s)
		})
	}
}

// BenchmarkStoreRealHeap is BenchmarkStoreMixHeap for the real-world
// corpus: live heap, body and charge per cached origin.
func BenchmarkStoreRealHeap(b *testing.B) {
	for range b.N {
		h0 := liveHeap()
		s := NewMemoryStore(1<<20, 1<<40)
		bodies := realFill(b, s)
		live := liveHeap() - h0
		n := float64(s.Len())
		b.ReportMetric(float64(live)/n, "heapB/origin")
		b.ReportMetric(float64(bodies)/n, "bodyB/origin")
		b.ReportMetric(float64(s.Bytes())/n, "chargedB/origin")
		b.ReportMetric((float64(live)-2*float64(bodies))/n-512, "overGoalB/origin")
		runtime.KeepAlive(s)
	}
}
