package rsl

import (
	"encoding/xml"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/robots"
)

// hostileBytes bounds the size of the crafted documents: robots.max_bytes'
// default, the most a license fetch reads unless raised.
const hostileBytes = 500 << 10

// hostilePathLen is the length of the crafted paths: max_url_bytes'
// default.
const hostilePathLen = 16 << 10

// hostileCase is a document of up to maxContents contents within
// hostileBytes, and a path none of its patterns matches, built so that
// each pattern costs as much as it can.
type hostileCase struct {
	name string
	body []byte
	path string
}

// hostileContents returns a document of contents url(0), url(1), ... as
// long as it fits in hostileBytes and maxContents.
func hostileContents(url func(i int) string) []byte {
	var sb strings.Builder
	sb.WriteString(`<rsl xmlns="https://rslstandard.org/rsl">`)
	for i := 0; i < maxContents; i++ {
		c := `<content url="` + url(i) + `"><license><prohibits type="usage">all</prohibits></license></content>`
		if sb.Len()+len(c)+len(`</rsl>`) > hostileBytes {
			break
		}
		sb.WriteString(c)
	}
	sb.WriteString(`</rsl>`)
	return []byte(sb.String())
}

// pad pads p with fill to hostilePathLen octets.
func pad(p, fill string) string {
	if len(p) < hostilePathLen {
		p += strings.Repeat(fill, (hostilePathLen-len(p))/len(fill)+1)
	}
	return p[:hostilePathLen]
}

// pad5 is i in 5 digits.
func pad5(i int) string {
	s := strconv.Itoa(i)
	return strings.Repeat("0", 5-len(s)) + s
}

// tokens returns n distinct 2-octet tokens of letters.
func tokens(n int) []string {
	var toks []string
	for a := byte('A'); a <= 'Z' && len(toks) < n; a++ {
		for c := byte('a'); c <= 'z' && len(toks) < n; c++ {
			toks = append(toks, string([]byte{a, c}))
		}
	}
	return toks
}

// hostileCases are the shapes of robots/tdmrep's hostile files as url
// patterns, and the long patterns of hostileDoc.
func hostileCases() []hostileCase {
	toks := tokens(400)
	var order strings.Builder
	order.WriteString("/")
	for _, t := range toks {
		order.WriteString("q" + t)
	}
	orderPath := pad(order.String(), "q")
	digits := pad("/", "a")[:hostilePathLen-10] + "9876543210"
	run := func(i int) string { return "*" + strings.Repeat("a", 16) + pad5(i) }
	return []hostileCase{
		{"run-digits", hostileContents(run), pad("/", "a")},
		{"run-digits-present", hostileContents(run), digits},
		{"run-escaped", hostileContents(func(i int) string { return "*" + strings.Repeat("%61", 16) + pad5(i) }), digits},
		{"wrong-order", hostileContents(func(i int) string {
			j := 1 + i%200
			k := (i / 200) % j
			return "*q*q" + toks[j] + "*q" + toks[k] + "*q" + strconv.Itoa(i/200/j)
		}), orderPath},
		{"anchored", hostileContents(func(i int) string {
			j := 1 + i%200
			return "*q" + toks[j] + "*q" + toks[i%j] + "*qq" + strconv.Itoa(i/200) + "$"
		}), orderPath[:hostilePathLen-3] + "qq0"},
		{"star-a-many", hostileContents(func(i int) string {
			return "/" + strings.Repeat("*a", 20+i%20) + "*b" + strconv.Itoa(i/20)
		}), pad("/b0123456789", "a")},
		{"long-near-miss", hostileContents(func(i int) string {
			return "*b*" + strings.Repeat("a", 20+i%10) + "b" + strconv.Itoa(i/10)
		}), pad("/b0123456789", "a")},
		{"long-star-a", hostileContents(func(i int) string {
			return "/" + strings.Repeat("*a", 950) + strconv.Itoa(i) + "$"
		}), "/" + strings.Repeat("ab", 8000) + "c"},
		{"long-a-star-b", hostileContents(func(i int) string {
			return "/" + strings.Repeat("a*b*", 475) + strconv.Itoa(i) + "$"
		}), "/" + strings.Repeat("ab", 8000) + "c"},
	}
}

// hostileWork bounds the work of one decision on a document of body: a
// few passes over the path and the octets of the document, and the
// direct searches a decision makes before it indexes the path.
func hostileWork(body []byte, path string) int {
	return 4*len(path) + 2*len(body) + 512<<10
}

// TestHostileDocBoundedWork decides the crafted paths against the
// crafted documents and checks, with the matcher's count of the octets
// it examined (not a clock), that no pattern makes it search the whole
// path.
func TestHostileDocBoundedWork(t *testing.T) {
	for _, hc := range hostileCases() {
		d, err := Parse(hc.body)
		if err != nil {
			t.Fatalf("%s: %v", hc.name, err)
		}
		if len(d.Contents) < 200 {
			t.Fatalf("%s: only %d contents", hc.name, len(d.Contents))
		}
		v, work := d.decideWork(siteOrigin, hc.path, UseAITrain|UseSearch)
		if v.State != None {
			t.Fatalf("%s: %v by %s", hc.name, v.State, v.Content)
		}
		if limit := hostileWork(hc.body, hc.path); work > limit {
			t.Errorf("%s (%d contents): %d octets examined, more than %d", hc.name, len(d.Contents), work, limit)
		}
	}
}

// BenchmarkDecideHostileCases decides the 16 KiB paths of hostileCases
// against their documents of up to [maxContents] contents; "work" is the
// matcher's count of what it examined, and "cpu-ns/op" the CPU time of
// one decision (on Linux), which other load on the machine does not
// inflate as it does ns/op.
func BenchmarkDecideHostileCases(b *testing.B) {
	for _, hc := range hostileCases() {
		b.Run(hc.name, func(b *testing.B) {
			d, err := Parse(hc.body)
			if err != nil {
				b.Fatal(err)
			}
			_, work := d.decideWork(siteOrigin, hc.path, UseAITrain|UseSearch)
			b.ReportAllocs()
			cpuPerOp(b, func() { d.Decide(siteOrigin, hc.path, UseAITrain|UseSearch) })
			b.ReportMetric(float64(work), "work")
			b.ReportMetric(float64(len(d.Contents)), "contents")
		})
	}
}

// refMatcher is what matched a pattern before the patterns shared one
// matcher: a robots.txt of its own, whose one rule is the pattern.
func refMatcher(pattern string) *robots.Robots {
	return robots.Parse([]byte("User-agent: *\nDisallow: " + pattern + "\n"))
}

// TestCoveringMatchesPerPattern checks that the shared matcher covers a
// path with exactly the contents a robots.txt per pattern covers it
// with, for random patterns and paths of the octets that matter to the
// matcher (wildcards, anchors, escapes, raw octets it encodes), and for
// patterns long enough to be cut as a robots.txt line.
func TestCoveringMatchesPerPattern(t *testing.T) {
	atoms := []string{"/", "a", "b", "ab", "*", "$", "%61", "%2A", "%2a", "%24", "%2F", "/", "?", "=", " ", "\u00e9", "%C3%A9", "#", "%", ".", "robots.txt"}
	rng := rand.New(rand.NewPCG(25, 3))
	word := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(atoms[rng.IntN(len(atoms))])
		}
		return sb.String()
	}
	long := []string{"/" + strings.Repeat("#", 6000) + "x$", "/a" + strings.Repeat("%", 4000) + "*b$", "https://example.com/" + strings.Repeat("\u00e9", 2000)}
	paths := []string{"", "/", "/robots.txt", "robots.txt", "/%72obots.txt", "/a", "a", "/" + strings.Repeat("#", 6000) + "x", "/a" + strings.Repeat("%", 4000) + "b"}
	for range 300 {
		paths = append(paths, "/"+word(rng.IntN(8)), word(1+rng.IntN(6)))
	}
	covered := 0
	for round := range 40 {
		var sb strings.Builder
		var urls []string
		for i := range 1 + rng.IntN(40) {
			u := word(1 + rng.IntN(6))
			switch {
			case i%7 == 3:
				u = "https://example.com" + u
			case i%11 == 5:
				u = long[rng.IntN(len(long))]
			}
			urls = append(urls, u)
			sb.WriteString(`<content url="` + xmlEscape(u) + `"><license/></content>`)
		}
		d := mustParse(t, doc(sb.String()))
		refs := make([]*robots.Robots, len(d.Contents))
		for i := range d.Contents {
			refs[i] = refMatcher(d.Contents[i].Pattern)
		}
		for _, p := range paths {
			got, _ := d.covering(p, nil)
			var want []int
			for i, r := range refs {
				if !r.MatchPath("*", p).Allowed {
					want = append(want, i)
				}
			}
			covered += len(want)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, urls %q, path %q: covering %v, per pattern %v", round, urls, p, got, want)
			}
		}
	}
	if covered < 1000 {
		t.Fatalf("only %d coverings: the cases hardly match", covered)
	}
	t.Logf("%d coverings", covered)
}

// xmlEscape escapes s for an XML attribute.
func xmlEscape(s string) string {
	var sb strings.Builder
	if err := xml.EscapeText(&sb, []byte(s)); err != nil {
		panic(err)
	}
	return sb.String()
}
