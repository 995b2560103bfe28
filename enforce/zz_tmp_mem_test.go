package enforce

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestTmpMemPerEntry(t *testing.T) {
	for _, rules := range []int{1, 20, 200} {
		var b strings.Builder
		b.WriteString("User-agent: *\n")
		for i := 0; i < rules; i++ {
			fmt.Fprintf(&b, "Disallow: /section-%d/private/*.pdf$\n", i)
		}
		body := b.String()
		const n = 300
		s := NewMemoryStoreSize(n)
		e := &Enforcer{maxBytes: DefaultMaxBytes, ttl: time.Hour, window: time.Hour}
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for i := 0; i < n; i++ {
			o := fmt.Sprintf("http://h%d.example", i)
			r := FetchResult{Status: StatusOK, HTTPStatus: 200, Body: []byte(body), FinalURL: o + "/robots.txt"}
			s.Set(context.Background(), o, e.next(o, nil, r, time.Now()), time.Hour)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		t.Logf("rules %d body %d B: %d B/entry in a MemoryStore", rules, len(body), (m1.HeapAlloc-m0.HeapAlloc)/n)
		runtime.KeepAlive(s)
	}
}
