package tdmrep

import (
	"strconv"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// BenchmarkHostileFile decides a 16 KiB path (max_url_bytes) against a
// file of MaxRules wildcard rules that all pass the prefix check and
// none of which matches: the worst a tdmrep.json within robots.max_bytes
// makes a request cost.
func BenchmarkHostileFile(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := range MaxRules {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`{"location":"/*a*` + strconv.Itoa(i) + `z","tdm-reservation":1}`)
	}
	sb.WriteString("]")
	f, err := Parse([]byte(sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	path := "/" + strings.Repeat("a", 16<<10)
	b.ReportAllocs()
	for b.Loop() {
		if f.Match(path) != nil {
			b.Fatal("matched")
		}
	}
}

// BenchmarkTypicalFile decides an ordinary path against the report's
// three-rule example.
func BenchmarkTypicalFile(b *testing.B) {
	f, err := Parse([]byte(`[{"location": "/directory-a/", "tdm-reservation": 1},
		{"location": "/directory-b/html/", "tdm-reservation": 1, "tdm-policy": "https://provider.com/policies/policy.json"},
		{"location": "/directory-b/images/*.jpg", "tdm-reservation": 0}]`))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		f.Match("/directory-b/images/2024/photo.jpg?size=large")
	}
}

// BenchmarkHostileCases matches the 16 KiB paths of hostileCases against
// their files of MaxRules rules built to make one match as costly as
// possible; "work" is the matcher's count of what it examined, and
// "cpu-ns/op" the CPU time of one match (on Linux), which other load on
// the machine does not inflate as it does ns/op.
func BenchmarkHostileCases(b *testing.B) {
	for _, hc := range hostileCases() {
		b.Run(hc.Name, func(b *testing.B) {
			f, err := Parse(hc.Body)
			if err != nil {
				b.Fatal(err)
			}
			_, work := f.matchWork(hc.Path)
			b.ReportAllocs()
			testsupport.CPUPerOp(b, func() { f.Match(hc.Path) })
			b.ReportMetric(float64(work), "work")
		})
	}
}
