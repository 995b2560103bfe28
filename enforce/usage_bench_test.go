package enforce

import (
	"context"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// benchRobots is the file of BenchmarkDecideCacheHit; withUsage adds
// usage lines to it: a file-level Content-Signal, and Content-Usage and
// Content-Signal lines in both groups. The file-level line allows
// ai-train: a crawler declaring train-ai is held to it as well as to
// Content-Usage, and the benchmarked URL must stay allowed.
const benchRobots = "User-agent: *\nDisallow: /private\nDisallow: /*.pdf$\nAllow: /private/open\n\nUser-agent: otherbot\nDisallow: /\n"

func withUsage(s string) string {
	s = "Content-Signal: search=yes, ai-train=yes\n" + s
	s = strings.Replace(s, "User-agent: *\n", "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /public/ train-ai=y\n"+
		"Content-Usage: /*.jpg$ train-ai=n, search=y\nContent-Signal: ai-input=no\n", 1)
	return strings.Replace(s, "User-agent: otherbot\n", "User-agent: otherbot\nContent-Usage: /docs/ train-ai=y\n", 1)
}

// BenchmarkDecideUsage compares cache-hit decisions of an allowed URL
// through the Enforcer on a file without usage lines (plain) and on the
// same file with them, without and with declared purposes; "spelled" is
// a path with other spellings.
func BenchmarkDecideUsage(b *testing.B) {
	for _, bc := range []struct {
		name, body, path string
		purposes         aipref.Set
	}{
		{"plain", benchRobots, "/public/page?id=42", 0},
		{"usage-lines", withUsage(benchRobots), "/public/page?id=42", 0},
		{"usage-lines/purposes", withUsage(benchRobots), "/public/page?id=42", aipref.SetOf(aipref.TrainAI, aipref.Search)},
		{"plain/spelled", benchRobots, "/public/./page?id=42", 0},
		{"usage-lines/spelled", withUsage(benchRobots), "/public/./page?id=42", aipref.SetOf(aipref.TrainAI)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			o := newOrigin(b, serve(200, bc.body))
			e, err := New(filled(Config{Fetcher: &HTTPFetcher{}}))
			if err != nil {
				b.Fatal(err)
			}
			u := o.url(bc.path)
			ctx := context.Background()
			opt := DecideOptions{Purposes: bc.purposes}
			if d := e.Decide(ctx, u, "mybot", opt); !d.Allowed {
				b.Fatal(d)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				e.Decide(ctx, u, "mybot", opt)
			}
		})
	}
}

// BenchmarkDecideRules is the robots.txt part of those decisions alone
// (no cache, no URL handling): RulesVerdict on the plain file, on the
// file with usage lines, and with declared purposes.
func BenchmarkDecideRules(b *testing.B) {
	plain, usage := robots.Parse([]byte(benchRobots)), robots.Parse([]byte(withUsage(benchRobots)))
	pol := UsagePolicy{Purposes: aipref.SetOf(aipref.TrainAI, aipref.Search)}
	for _, bc := range []struct {
		name string
		r    *robots.Robots
		p    UsagePolicy
	}{{"plain", plain, UsagePolicy{}}, {"usage-lines", usage, UsagePolicy{}}, {"usage-lines/purposes", usage, pol}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				RulesVerdict(bc.r, "mybot", "/public/page?id=42", bc.p)
			}
		})
	}
}
