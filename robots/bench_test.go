package robots

import (
	"strconv"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// realisticRobots is a ~50-rule robots.txt in the style of a large site.
const realisticRobots = `# robots.txt for www.example.com
Sitemap: https://www.example.com/sitemap.xml
Sitemap: https://www.example.com/news-sitemap.xml

User-agent: *
Disallow: /search
Allow: /search/about
Allow: /search/static
Disallow: /sdch
Disallow: /groups
Disallow: /index.html?
Disallow: /?
Allow: /?hl=
Disallow: /?hl=*&
Allow: /?hl=*&gws_rd=ssl$
Disallow: /imgres
Disallow: /u/
Disallow: /preferences
Disallow: /setprefs
Disallow: /default
Disallow: /m?
Disallow: /m/
Allow: /m/finance
Disallow: /wml?
Disallow: /wml/?
Disallow: /wml/search?
Disallow: /xhtml?
Disallow: /xhtml/?
Disallow: /xhtml/search?
Disallow: /xml?
Disallow: /imode?
Disallow: /imode/?
Disallow: /jsky?
Disallow: /jsky/?
Disallow: /pda?
Disallow: /pda/?
Disallow: /sprint_xhtml
Disallow: /sprint_wml
Disallow: /pqa
Disallow: /palm
Disallow: /gwt/
Disallow: /purchases
Disallow: /local?
Disallow: /local_url
Disallow: /shihui?
Disallow: /shihui/
Disallow: /products?
Disallow: /product_
Disallow: /products_
Disallow: /products;
Disallow: /print
Disallow: /books/
Allow: /books?*q=related:
Allow: /books?*q=editions:
Allow: /books?*q=subject:
Disallow: /*.pdf$
Disallow: /*?sessionid=
Crawl-delay: 1

User-agent: Googlebot
User-agent: Bingbot
Disallow: /private/
Disallow: /tmp/
Allow: /tmp/public/
Disallow: /*/draft-*
Disallow: /checkout
Disallow: /cart
Allow: /cart/help
Disallow: /account/*/settings$
Disallow: /api/
Allow: /api/docs
Disallow: /*.json$

User-agent: BadBot
Disallow: /
`

func BenchmarkParse(b *testing.B) {
	body := []byte(realisticRobots)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(body)
	}
}

// BenchmarkDecide matches typical URLs against the realistic robots.txt,
// reporting the thread's CPU per decision too.
func BenchmarkDecide(b *testing.B) {
	r := Parse([]byte(realisticRobots))
	for _, bc := range []struct{ name, agent, url string }{
		{"star-group/miss", "FooBot", "https://www.example.com/products/shoes/12345.html"},
		{"star-group/hit", "FooBot", "https://www.example.com/books?id=1&q=subject:fiction"},
		{"named-group", "Googlebot", "https://www.example.com/account/42/settings"},
		{"escaped", "Googlebot", "https://www.example.com/caf%C3%A9/menu%2Fdrinks?x=%7e"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			testsupport.CPUPerOp(b, func() { r.Match(bc.agent, bc.url) })
		})
	}
}

// pathologicalRobots returns a robots.txt of about size bytes made of
// copies of one long, '*'-heavy Disallow pattern, and a 2 KiB path that
// every copy almost matches.
//
// With lastMissing, the pattern's last segment is absent from the path (a
// cheap early exit finds that). Without, it is present, and the pattern
// fails only after matching its ~1900 one-byte segments, on a long segment
// that is nearly found at every position: the worst case for the matcher.
func pathologicalRobots(size int, lastMissing bool) (body []byte, path string) {
	path = "/" + strings.Repeat("a", 2047)
	var sb strings.Builder
	sb.WriteString("User-agent: *\n")
	// The rules differ a little so that none is dropped as a duplicate.
	rule := func(i int) string { return "Disallow: /" + strings.Repeat("*a", 2000-i) + "*b\n" }
	if !lastMissing {
		// The path holds a 'b' (before the a's) so that the octet
		// pre-filter does not skip the rules.
		path = "/b" + strings.Repeat("a", 2046)
		rule = func(i int) string {
			return "Disallow: /" + strings.Repeat("*a", 1900-i) + "*" + strings.Repeat("a", 100) + "b*a\n"
		}
	}
	for i := 0; sb.Len()+len(rule(i)) <= size; i++ {
		sb.WriteString(rule(i))
	}
	return []byte(sb.String()), path
}

// shortRulesRobots returns a robots.txt of about size bytes made of the
// Disallow lines rule(0), rule(1), ... under "User-agent: *".
func shortRulesRobots(size int, rule func(i int) string) []byte {
	var sb strings.Builder
	sb.WriteString("User-agent: *\n")
	for i := 0; ; i++ {
		l := "Disallow: " + rule(i) + "\n"
		if sb.Len()+len(l) > size {
			break
		}
		sb.WriteString(l)
	}
	return []byte(sb.String())
}

// pathologicalCases are ~500 KiB files and a 2 KiB path that no rule
// matches, so that every rule that can beat "no match" is tried.
func pathologicalCases() []struct {
	name string
	body []byte
	path string
} {
	aPath := "/" + strings.Repeat("a", 2047)
	// Holds every octet of the "distinct" rules, so that the octet
	// pre-filter skips none of them, but never an a-run followed by 'b'.
	allPath := "/0123456789b" + strings.Repeat("a", 2036)
	late, latePath := pathologicalRobots(DefaultMaxBytes, false)
	missing, missingPath := pathologicalRobots(DefaultMaxBytes, true)
	long := "*" + strings.Repeat("a", 70) + "b" // a 71-byte segment: bytes.Index's slow path
	return []struct {
		name string
		body []byte
		path string
	}{
		{"late-failure", late, latePath},
		{"last-segment-missing", missing, missingPath},
		// Copies of one short wildcard rule: deduplicated at compile time.
		{"long-segment-copies", shortRulesRobots(DefaultMaxBytes, func(int) string { return long }), aPath},
		{"star-a-star-b-copies", shortRulesRobots(DefaultMaxBytes, func(int) string { return "*a*b" }), aPath},
		// Distinct short wildcard rules defeat deduplication. On a path
		// lacking one of their octets ('b') the pre-filter skips them; on a
		// path holding all, each is searched for in the whole path.
		{"long-segment-distinct", shortRulesRobots(DefaultMaxBytes, func(i int) string { return long + strconv.Itoa(i) }), aPath},
		{"long-segment-distinct-all-octets", shortRulesRobots(DefaultMaxBytes, func(i int) string { return long + strconv.Itoa(i) }), allPath},
		{"star-a-star-b-distinct-all-octets", shortRulesRobots(DefaultMaxBytes, func(i int) string { return "*a*b" + strconv.Itoa(i) }), allPath},
		// The long segment ends the path, but each rule's distinct short
		// segment before it is absent: the segFilter skips every rule
		// (each would otherwise search the path for the long one).
		{"long-segment-present-distinct-prefix", shortRulesRobots(DefaultMaxBytes, func(i int) string { return "*9" + strconv.Itoa(i) + long }), allPath[:len(allPath)-1] + "b"},
	}
}

// BenchmarkPathological decides a 2 KiB path against ~500 KiB of
// '*'-heavy patterns, none of which matches (so every distinct rule is
// tried).
func BenchmarkPathological(b *testing.B) {
	for _, bc := range pathologicalCases() {
		b.Run(bc.name, func(b *testing.B) {
			r := Parse(bc.body)
			if n := len(r.Group("bot").Rules); n < 100 {
				b.Fatalf("only %d rules", n)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if !r.MatchPath("bot", bc.path).Allowed {
					b.Fatal("matched")
				}
			}
		})
	}
}

func BenchmarkParsePathological(b *testing.B) {
	body, _ := pathologicalRobots(DefaultMaxBytes, false)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(body)
	}
}

// BenchmarkParseMergeBomb parses a file in which 2000 agents each merge a
// 5000-rule group with a group of their own.
func BenchmarkParseMergeBomb(b *testing.B) {
	body := mergeBomb(2000, 5000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(body)
	}
}

// BenchmarkParseManyWildcards parses ~500 KiB files of thousands of
// distinct short wildcard rules, whose groups get a segFilter: the
// pathological "distinct" cases, and rules whose keys (16 pseudo-random
// hex digits) share few prefixes, the largest automaton per byte of file.
func BenchmarkParseManyWildcards(b *testing.B) {
	cases := map[string][]byte{
		"random-keys": shortRulesRobots(DefaultMaxBytes, func(i int) string {
			h := uint64(i+1) * 0x9E3779B97F4A7C15
			return "*" + strconv.FormatUint(h|1<<63, 16) + "*z"
		}),
	}
	for _, bc := range pathologicalCases() {
		if strings.HasSuffix(bc.name, "distinct-all-octets") {
			cases[bc.name] = bc.body
		}
	}
	for _, name := range []string{"long-segment-distinct-all-octets", "star-a-star-b-distinct-all-octets", "random-keys"} {
		body := cases[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				Parse(body)
			}
		})
	}
}
