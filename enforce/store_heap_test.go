package enforce

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/robots"
)

// hostileBodies returns robots.txt files of about 500 KiB whose parsed
// form holds the most memory per byte: thousands of short, distinct
// wildcard rules (each with its compiled pattern and keys in the segment
// automaton), and thousands of tiny groups.
func hostileBodies() map[string][]byte {
	rules := func(rule func(i int) string) []byte {
		var sb strings.Builder
		sb.WriteString("User-agent: *\n")
		for i := 0; sb.Len() < robots.DefaultMaxBytes-100; i++ {
			sb.WriteString(rule(i) + "\n")
		}
		return []byte(sb.String())
	}
	b36 := func(i int) string { return strconv.FormatInt(int64(i), 36) }
	var groups, tiny strings.Builder
	for i := 0; groups.Len() < robots.DefaultMaxBytes-100; i++ {
		groups.WriteString("User-agent: b" + b36(i) + "\nallow:*" + b36(i) + "*z\n")
	}
	for i := 0; tiny.Len() < robots.DefaultMaxBytes-100; i++ {
		tiny.WriteString("user-agent:" + b36(i) + "\nallow:/\n")
	}
	return map[string][]byte{
		"zyx":         rules(func(i int) string { return "Disallow: *z" + b36(i) + "*y*x" }),
		"short-lines": rules(func(i int) string { return "allow:*" + b36(i) + "*z" }),
		"many-groups": []byte(groups.String()),
		"tiny-groups": []byte(tiny.String()),
	}
}

// TestStoreHeapWithinBudget fills MemoryStores with entries of hostile
// files, each parsed on its own as the Enforcer does per origin, and
// checks that the live heap stays within 1.25 times the store's bound.
func TestStoreHeapWithinBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("parses tens of megabytes")
	}
	const budget = 64 << 20
	e := &Enforcer{maxBytes: robots.DefaultMaxBytes, ttl: time.Hour, window: time.Hour}
	for name, body := range hostileBodies() {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		s := NewMemoryStore(1000, budget)
		for i := 0; i < 20; i++ {
			o := "http://h" + strconv.Itoa(i) + ".evil.example"
			r := FetchResult{Status: StatusOK, HTTPStatus: 200, Body: append([]byte(nil), body...), FinalURL: o + "/robots.txt"}
			s.Set(context.Background(), robotsKey(o), e.next(robotsKey(o), nil, r, t0), time.Hour)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		live := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
		t.Logf("%s: %d entries kept, %d B charged, %d B live heap", name, s.Len(), s.Bytes(), live)
		if live > budget+budget/4 {
			t.Errorf("%s: %d B live heap for a bound of %d B (%d entries)", name, live, budget, s.Len())
		}
		runtime.KeepAlive(s)
	}
}
