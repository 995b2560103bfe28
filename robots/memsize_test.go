package robots

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// memSizeCases are files of the shapes that hold the most memory per byte.
func memSizeCases() map[string][]byte {
	cs := map[string][]byte{
		"realistic": []byte(realisticRobots),
		"zyx": shortRulesRobots(DefaultMaxBytes, func(i int) string {
			return "*z" + strconv.Itoa(i) + "*y*x"
		}),
		"random-keys": shortRulesRobots(DefaultMaxBytes, func(i int) string {
			h := uint64(i+1) * 0x9E3779B97F4A7C15
			return "*" + strconv.FormatUint(h|1<<63, 16) + "*z"
		}),
		"short-keys": shortRulesRobots(DefaultMaxBytes, func(i int) string {
			return "*" + strconv.Itoa(i) + "*" + strconv.Itoa(i+1)
		}),
		"prefixes":    shortRulesRobots(DefaultMaxBytes, func(i int) string { return "/" + strconv.Itoa(i) }),
		"many-groups": manyGroups(DefaultMaxBytes, func(i int) string { return "*a" + strconv.Itoa(i) + "*b" }),
	}
	var sb strings.Builder
	for i := 0; sb.Len() < DefaultMaxBytes-100; i++ {
		sb.WriteString("User-agent: bot" + strconv.Itoa(i) + "\nDisallow: /x\n")
	}
	cs["many-agents"] = []byte(sb.String())
	cs["usage-zyx"] = usageEvery(cs["zyx"], "Content-Usage", 1)
	sb.Reset()
	for i := 0; sb.Len() < DefaultMaxBytes-100; i++ {
		fmt.Fprintf(&sb, "User-agent: b%d\nContent-Usage: /%d* train-ai=n\nContent-Signal: /a%d search=yes\n", i, i, i)
	}
	cs["usage-groups"] = []byte(sb.String())
	sb.Reset()
	for i := 0; sb.Len() < DefaultMaxBytes-100; i++ {
		sb.WriteString("user-agent:" + strconv.FormatInt(int64(i), 36) + "\nallow:/\n")
	}
	cs["tiny-groups"] = []byte(sb.String())
	return cs
}

// TestMemSizeMatchesHeap parses files many times over and compares the
// live heap each parse keeps with MemSize: MemSize may not fall short,
// nor overstate by much.
func TestMemSizeMatchesHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("parses megabytes")
	}
	for name, body := range memSizeCases() {
		n := 8
		if len(body) < 10000 {
			n = 500
		}
		keep := make([]*Robots, n)
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for i := range keep {
			keep[i] = Parse(body)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		per := (int64(m1.HeapAlloc) - int64(m0.HeapAlloc)) / int64(n)
		est := keep[0].MemSize()
		t.Logf("%s (%d bytes): %d B on the heap per parse, MemSize %d", name, len(body), per, est)
		if est < per || est > 2*per {
			t.Errorf("%s: MemSize %d for %d B on the heap", name, est, per)
		}
		runtime.KeepAlive(keep)
	}
}
