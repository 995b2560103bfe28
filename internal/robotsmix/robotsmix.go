// Package robotsmix generates robots.txt files whose sizes and contents
// follow those of the public web: a median of about 320 bytes, a 90th
// percentile of about 4 KiB, a 99th of about 28 KiB, about one file in six
// with a Crawl-delay (mostly 10 s). Benchmarks of the robots.txt cache and
// the broad-crawl load test draw their files from it, so that both measure
// the same mix.
//
// Every file has a "User-agent: *" group with "Disallow: /private/": a
// load generator that sends some of its URLs under [Blocked] gets them
// refused, whatever else the file says.
package robotsmix

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Blocked is a path prefix every generated file disallows for all agents.
const Blocked = "/private/"

// quantiles are points (fraction, size in bytes) of the distribution of
// body sizes; sizes between two points are interpolated geometrically.
var quantiles = [...]struct{ q, size float64 }{
	{0, 40}, {0.25, 120}, {0.5, 320}, {0.75, 1400}, {0.9, 4096}, {0.99, 28 << 10}, {1, 96 << 10},
}

// Size returns the body size at fraction q of the distribution (0 <= q <= 1).
func Size(q float64) int {
	for i := 1; i < len(quantiles); i++ {
		a, b := quantiles[i-1], quantiles[i]
		if q <= b.q {
			t := (q - a.q) / (b.q - a.q)
			return int(math.Exp(math.Log(a.size) + t*(math.Log(b.size)-math.Log(a.size))))
		}
	}
	return int(quantiles[len(quantiles)-1].size)
}

// Words are path segments and agents that real files use.
var (
	dirs = []string{"wp-admin", "cart", "checkout", "search", "account", "login", "cgi-bin", "tmp", "admin",
		"includes", "api", "tag", "feed", "comments", "trackback", "print", "user", "node/add", "media",
		"assets/private", "index.php", "catalog/product_compare", "sendfriend", "review", "wishlist"}
	params = []string{"sort", "filter", "page", "sid", "ref", "utm_source", "q", "order", "limit", "dir"}
	agents = []string{"Googlebot", "bingbot", "GPTBot", "CCBot", "AhrefsBot", "SemrushBot", "MJ12bot",
		"Baiduspider", "YandexBot", "DotBot", "PetalBot", "Bytespider", "ClaudeBot", "Amazonbot",
		"facebookexternalhit", "Applebot", "DuckDuckBot", "ia_archiver", "Slurp", "Mediapartners-Google"}
)

// File returns the i-th file of the mix for host: the same i and host
// always give the same file.
func File(i int, host string) []byte {
	rng := rand.New(rand.NewPCG(uint64(i), 0x9e3779b97f4a7c15))
	target := Size(rng.Float64())
	var b strings.Builder
	b.Grow(target + 128)
	if rng.IntN(4) == 0 {
		b.WriteString("# robots.txt for " + host + "\n")
	}
	b.WriteString("User-agent: *\nDisallow: " + Blocked + "\n")
	if rng.IntN(6) == 0 {
		d := "10"
		if rng.IntN(4) == 0 {
			d = strconv.Itoa(1 + rng.IntN(30))
		}
		b.WriteString("Crawl-delay: " + d + "\n")
	}
	for g := 0; b.Len() < target; g++ {
		// A new group now and then: a few agents, often shut out.
		if g > 0 && rng.IntN(10) == 0 {
			b.WriteString("\n")
			for range 1 + rng.IntN(3) {
				b.WriteString("User-agent: " + agents[rng.IntN(len(agents))] + "\n")
			}
			if rng.IntN(2) == 0 {
				b.WriteString("Disallow: /\n")
				continue
			}
		}
		b.WriteString(rule(rng))
	}
	if rng.IntN(2) == 0 {
		b.WriteString("\nSitemap: https://" + host + "/sitemap.xml\n")
	}
	return []byte(b.String())
}

// rule returns one Allow or Disallow line.
func rule(rng *rand.Rand) string {
	d := dirs[rng.IntN(len(dirs))]
	// One rule in eight has a wildcard.
	switch rng.IntN(16) {
	case 0:
		return "Allow: /" + d + "/public/\n"
	case 1:
		return "Disallow: /*?" + params[rng.IntN(len(params))] + "=\n"
	case 2:
		return "Disallow: /" + d + "/*.pdf$\n"
	case 3, 4:
		return "Disallow: /" + d + "/" + strconv.Itoa(rng.IntN(1000)) + "/\n"
	default:
		return "Disallow: /" + d + "/\n"
	}
}
