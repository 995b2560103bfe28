//go:build linux

package robots

import (
	"runtime"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// BenchmarkUsageOverhead reports, as the metric "ratio", the CPU time of
// MatchUsage on realisticRobots with usage lines over that of MatchPath
// on realisticRobots, both over benchDecideCases. It counts the CPU time
// of its own thread, in alternating batches, so that other load on a
// shared machine does not count.
//
// "paths" has Content-Usage paths in both groups (usageRobots);
// "signals" only a Content-Signal line before the first group, as
// Cloudflare's managed robots.txt writes.
func BenchmarkUsageOverhead(b *testing.B) {
	plain := Parse([]byte(realisticRobots))
	b.Run("paths", func(b *testing.B) { usageOverhead(b, plain, Parse([]byte(usageRobots()))) })
	b.Run("signals", func(b *testing.B) {
		usageOverhead(b, plain, Parse([]byte("Content-Signal: search=yes, ai-train=no\n"+realisticRobots)))
	})
}

func usageOverhead(b *testing.B, plain, usage *Robots) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const batch = 2000
	var tPlain, tUsage int64
	b.ReportAllocs()
	for b.Loop() {
		t0 := testsupport.ThreadCPU(b)
		for range batch {
			for _, c := range benchDecideCases {
				plain.MatchPath(c.agent, c.path)
			}
		}
		t1 := testsupport.ThreadCPU(b)
		for range batch {
			for _, c := range benchDecideCases {
				usage.MatchUsage(c.agent, c.path)
			}
		}
		tPlain += t1 - t0
		tUsage += testsupport.ThreadCPU(b) - t1
	}
	n := float64(b.N * batch * len(benchDecideCases))
	b.ReportMetric(float64(tUsage)/float64(tPlain), "ratio")
	b.ReportMetric(float64(tPlain)/n, "cpu-ns/plain")
	b.ReportMetric(float64(tUsage)/n, "cpu-ns/usage")
}
