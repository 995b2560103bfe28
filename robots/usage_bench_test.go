package robots

import (
	"regexp"
	"strings"
	"testing"
)

// usageRobots returns realisticRobots with usage lines: a file-level
// Content-Signal, and Content-Usage and Content-Signal lines in the "*"
// group and in the Googlebot/Bingbot group.
func usageRobots() string {
	s := "Content-Signal: search=yes, ai-train=no\n" + realisticRobots
	s = strings.Replace(s, "User-agent: *\n", "User-agent: *\n"+
		"Content-Usage: train-ai=n\nContent-Usage: /books/ train-ai=y\nContent-Usage: /*.jpg$ train-ai=n, search=y\n"+
		"Content-Usage: /ai-ok/ train-ai=y\nContent-Signal: ai-input=no\n", 1)
	return strings.Replace(s, "User-agent: Bingbot\n", "User-agent: Bingbot\n"+
		"Content-Usage: train-ai=n, search=y\nContent-Usage: /api/docs train-ai=y\nContent-Signal: ai-input=yes\n", 1)
}

var benchDecideCases = []struct{ name, agent, path string }{
	{"star-group/miss", "FooBot", "/products/shoes/12345.html"},
	{"star-group/hit", "FooBot", "/books?id=1&q=subject:fiction"},
	{"named-group", "Googlebot", "/account/42/settings"},
	{"escaped", "Googlebot", "/caf%C3%A9/menu%2Fdrinks?x=%7e"},
}

// BenchmarkDecideUsage compares, on the same URLs, MatchPath on
// realisticRobots (plain), MatchPath on the same file with usage lines
// (with-usage-lines) and MatchUsage on that file (decide-usage), which
// is what a purpose-aware decision costs.
func BenchmarkDecideUsage(b *testing.B) {
	plain := Parse([]byte(realisticRobots))
	usage := Parse([]byte(usageRobots()))
	for _, bc := range benchDecideCases {
		b.Run(bc.name+"/plain", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				plain.MatchPath(bc.agent, bc.path)
			}
		})
		b.Run(bc.name+"/with-usage-lines", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				usage.MatchPath(bc.agent, bc.path)
			}
		})
		b.Run(bc.name+"/decide-usage", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				usage.MatchUsage(bc.agent, bc.path)
			}
		})
	}
}

// asUsage turns the Disallow lines of a pathological body into
// Content-Usage lines with the same paths.
func asUsage(body []byte) []byte {
	re := regexp.MustCompile(`(?m)^Disallow: /?(.*)$`)
	return re.ReplaceAll(body, []byte("Content-Usage: /$1 train-ai=n"))
}

// BenchmarkUsagePathological decides a 2 KiB path against ~500 KiB of
// '*'-heavy Content-Usage paths, none of which matches.
func BenchmarkUsagePathological(b *testing.B) {
	for _, bc := range pathologicalCases() {
		b.Run(bc.name, func(b *testing.B) {
			r := Parse(asUsage(bc.body))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				r.MatchUsage("bot", bc.path)
			}
		})
	}
}
