package rsl

import (
	"encoding/xml"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/robots"
)

// hostileBytes bounds the size of the crafted documents: robots.max_bytes'
// default, the most a license fetch reads unless raised.
const hostileBytes = 500 << 10

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

// hostileCases are the crafted pattern shapes as documents of up to
// maxContents contents within hostileBytes, and the long patterns of
// hostileDoc.
func hostileCases() []testsupport.HostileCase {
	longPath := "/" + strings.Repeat("ab", 8000) + "c"
	return append(testsupport.HostileCases(hostileContents),
		testsupport.HostileCase{
			Name: "long-star-a",
			Body: hostileContents(func(i int) string { return "/" + strings.Repeat("*a", 950) + strconv.Itoa(i) + "$" }),
			Path: longPath,
		},
		testsupport.HostileCase{
			Name: "long-a-star-b",
			Body: hostileContents(func(i int) string { return "/" + strings.Repeat("a*b*", 475) + strconv.Itoa(i) + "$" }),
			Path: longPath,
		},
	)
}

// TestHostileDocBoundedWork decides the crafted paths against the
// crafted documents and checks, with the matcher's count of the octets
// it examined (not a clock), that no pattern makes it search the whole
// path.
func TestHostileDocBoundedWork(t *testing.T) {
	for _, hc := range hostileCases() {
		d, err := Parse(hc.Body)
		if err != nil {
			t.Fatalf("%s: %v", hc.Name, err)
		}
		if len(d.Contents) < 200 {
			t.Fatalf("%s: only %d contents", hc.Name, len(d.Contents))
		}
		v, work := d.decideWork(siteOrigin, hc.Path, UseAITrain|UseSearch)
		if v.State != None {
			t.Fatalf("%s: %v by %s", hc.Name, v.State, v.Content)
		}
		if limit := testsupport.HostileWork(hc.Body, hc.Path); work > limit {
			t.Errorf("%s (%d contents): %d octets examined, more than %d", hc.Name, len(d.Contents), work, limit)
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
		b.Run(hc.Name, func(b *testing.B) {
			d, err := Parse(hc.Body)
			if err != nil {
				b.Fatal(err)
			}
			_, work := d.decideWork(siteOrigin, hc.Path, UseAITrain|UseSearch)
			b.ReportAllocs()
			testsupport.CPUPerOp(b, func() { d.Decide(siteOrigin, hc.Path, UseAITrain|UseSearch) })
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
