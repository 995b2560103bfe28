package robots

import (
	"math/rand"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/robotsmix"
)

// TestRealWorldCompactMatchesCompiled decides paths of each file of the
// real-world corpus with the file parsed as usual and with every group
// compiled: the two forms agree, and so they do for a file with keyed
// parts when its decisions index the path at once.
func TestRealWorldCompactMatchesCompiled(t *testing.T) {
	files := robotsmix.RealWorldForTest(t)
	agents := []string{"Googlebot", "bingbot", "GPTBot", "AdsBot-Google", "anybot"}
	for _, f := range files {
		r, c := Parse(f.Body), parseCompiled(f.Body)
		for _, path := range corpusPaths(r) {
			for _, a := range agents {
				if d, dc := r.MatchPath(a, path), c.MatchPath(a, path); d != dc {
					t.Fatalf("%s: %s %q: compact %+v, compiled %+v", f.Host, a, path, d, dc)
				}
			}
		}
		if !r.ix.Form().Indexed {
			continue
		}
		// Keyed parts, with the path indexed at once (a file without a
		// filter builds one).
		r.ix.SetBudget(0)
		for i, path := range corpusPaths(r) {
			if a := agents[i%len(agents)]; r.MatchPath(a, path) != c.MatchPath(a, path) {
				t.Fatalf("%s: %s %q indexed: compact %+v, compiled %+v", f.Host, a, path, r.MatchPath(a, path), c.MatchPath(a, path))
			}
		}
	}
}

// corpusPaths returns paths to decide for r: each rule's pattern as a
// path, extended and cut.
func corpusPaths(r *Robots) []string {
	paths := []string{"/", "/index.html", "/a/b?c=d"}
	for _, g := range r.Groups() {
		for _, rl := range g.Rules {
			p := strings.ReplaceAll(strings.TrimSuffix(rl.Pattern, "$"), "*", "x")
			paths = append(paths, p, p+"/index.htm", p[:len(p)/2])
		}
	}
	return paths
}

// TestLargeCompactMatchesCompiled checks that a compact part too large
// to try its records one by one (a ptable finds them) decides as the
// compiled form: thousands of rules over a small alphabet, so that
// patterns are prefixes of each other, with Allow and Disallow of the
// same pattern, '$', directory Allows and a few wildcards.
func TestLargeCompactMatchesCompiled(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "ab/c"[rng.Intn(4)]
		}
		return string(b)
	}
	for round := 0; round < 4; round++ {
		var sb strings.Builder
		sb.WriteString("User-agent: bot\n")
		for i := 0; i < 3000+rng.Intn(2000); i++ {
			p := "/" + word(1+rng.Intn(9))
			switch rng.Intn(20) {
			case 0:
				p += "$"
			case 1:
				p += "/index.html"
			case 2:
				if i%40 == 0 {
					p += "*" + word(1+rng.Intn(2))
				}
			}
			kind := []string{"Allow: ", "Disallow: "}[rng.Intn(2)]
			sb.WriteString(kind + p + "\n")
		}
		body := []byte(sb.String())
		r, c := Parse(body), parseCompiled(body)
		if pt := r.ix.Form().Parts[0]; !pt.Compact || !pt.Table {
			t.Fatal("the group is not a compact part with a ptable")
		}
		for i := 0; i < 20000; i++ {
			path := "/" + word(rng.Intn(14))
			if d, dc := r.MatchPath("bot", path), c.MatchPath("bot", path); d != dc {
				t.Fatalf("%q: compact %+v, compiled %+v", path, d, dc)
			}
		}
	}
}

// BenchmarkParseRealWorld parses every file of the real-world corpus
// and reports the live heap, the charge (MemSize) and the body per file.
func BenchmarkParseRealWorld(b *testing.B) {
	files := robotsmix.RealWorldForTest(b)
	var body int64
	for _, f := range files {
		body += int64(len(f.Body))
	}
	n := float64(len(files))
	b.ReportAllocs()
	for range b.N {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		keep := make([]*Robots, len(files))
		var size int64
		for i, f := range files {
			keep[i] = Parse(f.Body)
			size += keep[i].MemSize()
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		heap := float64(m1.HeapAlloc) - float64(m0.HeapAlloc)
		b.ReportMetric(heap/n, "heapB/file")
		b.ReportMetric(float64(size)/n, "chargedB/file")
		b.ReportMetric(float64(body)/n, "bodyB/file")
		runtime.KeepAlive(keep)
	}
}

// BenchmarkDecideLargePlain decides a 16 KiB path against a ~500 KiB
// file of one group of plain rules of a thousand distinct lengths, each
// a prefix of the path but for its last octet: the costliest lookup of a
// large compact part (one hash per length).
func BenchmarkDecideLargePlain(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("User-agent: *\n")
	for n := 1; sb.Len() < DefaultMaxBytes-2000; n++ {
		sb.WriteString("Disallow: /" + strings.Repeat("a", n%1000) + "b\n")
	}
	r := Parse([]byte(sb.String()))
	path := "/" + strings.Repeat("a", 16<<10)
	if d := r.MatchPath("bot", path); !d.Allowed {
		b.Fatalf("matched line %d", d.Rule.Line)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r.MatchPath("bot", path)
	}
}

// TestCanonCompactMatchesCompiled checks that compact parts whose
// patterns are not canonical as written (matched from their canonical
// text, see canonRec) decide as the compiled form and list the same
// rules: patterns with spaces, escapes of either case, non-ASCII octets,
// '|', escaped '*' and '$', wildcards, '$' and directory Allows.
func TestCanonCompactMatchesCompiled(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	atoms := []string{"a", "b", "/", " ", "%20", "%2f", "%2F", "%41", "é", "%C3%A9", "%c3%a9", "|", "{", "\\",
		"%2A", "%24", "*", "%", "%zz", "?", "=", "~", "%7e", "/index.html"}
	word := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(atoms[rng.Intn(len(atoms))])
		}
		return sb.String()
	}
	canon := 0
	for round := 0; round < 300; round++ {
		var sb strings.Builder
		sb.WriteString("User-agent: bot\n")
		for i := 0; i < 1+rng.Intn(60); i++ {
			p := "/" + word(rng.Intn(6))
			if rng.Intn(8) == 0 {
				p += "$"
			}
			sb.WriteString([]string{"Allow: ", "Disallow: "}[rng.Intn(2)] + p + "\n")
		}
		body := []byte(sb.String())
		r, c := Parse(body), parseCompiled(body)
		if r.ix.Form().Parts[0].Compact {
			canon += r.ix.Form().Canon
		}
		if g, gc := r.Groups(), c.Groups(); !reflect.DeepEqual(g, gc) {
			t.Fatalf("%q: groups differ: compact %+v, compiled %+v", body, g, gc)
		}
		for i := 0; i < 300; i++ {
			path := "/" + word(rng.Intn(7))
			if d, dc := r.MatchPath("bot", path), c.MatchPath("bot", path); d != dc {
				t.Fatalf("%q %q: compact %+v, compiled %+v", body, path, d, dc)
			}
		}
	}
	if canon == 0 {
		t.Fatal("no compact part matched from a canonical text")
	}
}
