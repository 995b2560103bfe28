package enforce

import (
	"strconv"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
	"github.com/robotsgate/robotsgate/robots/tdmrep"
)

// hostileSpellingFile is a ~500 KiB robots.txt of wildcard rules whose
// segments all occur in the crafted path, but never in an order that
// matches (the costliest shape of robots' BenchmarkDecideHostile), and
// the same patterns as Content-Usage paths.
func hostileSpellingFile() (body []byte, path string) {
	var toks []string
	for a := byte('A'); a <= 'Z'; a++ {
		for c := byte('a'); c <= 'z'; c++ {
			toks = append(toks, string([]byte{a, c}))
		}
	}
	toks = toks[:400]
	var sb strings.Builder
	sb.WriteString("User-agent: *\n")
	for i := 0; sb.Len() < robots.DefaultMaxBytes-200; i++ {
		j := 1 + i%200
		k := (i / 200) % j
		pat := "*q*q" + toks[j] + "*q" + toks[k] + "*q" + strconv.Itoa(i/200/j)
		if i%2 == 0 {
			sb.WriteString("Disallow: /" + pat + "\n")
		} else {
			sb.WriteString("Content-Usage: /" + pat + " train-ai=n\n")
		}
	}
	var p strings.Builder
	// Spellings that make the enforcer decide every variant it knows:
	// path parameters, a backslash escape and a dot segment.
	p.WriteString("/;x/a/./%5C")
	for _, t := range toks {
		p.WriteString("q" + t)
	}
	for p.Len() < 16<<10 {
		p.WriteByte('q')
	}
	return []byte(sb.String()), p.String()[:16<<10]
}

// BenchmarkDecideRulesHostileSpellings is the worst case of one request's
// decision: every spelling the enforcer considers, with usage preferences
// for a declared purpose, on a hostile file and a 16 KiB path.
func BenchmarkDecideRulesHostileSpellings(b *testing.B) {
	body, path := hostileSpellingFile()
	r := robots.Parse(body)
	pol := UsagePolicy{Purposes: aipref.SetOf(aipref.TrainAI)}
	if v := RulesVerdict(r, "mybot", path, pol); !v.Allowed {
		b.Fatalf("the crafted path is refused: %+v", v)
	}
	b.ReportAllocs()
	for b.Loop() {
		RulesVerdict(r, "mybot", path, pol)
	}
}

// BenchmarkTDMRepHostileSpellings decides, as a request does, a 16 KiB
// path that has every spelling the enforcer tries against a tdmrep.json
// of tdmrep.MaxRules rules like those of a report ("*" and a long run of
// one octet, then digits), none of which matches.
func BenchmarkTDMRepHostileSpellings(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := range tdmrep.MaxRules {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`{"location":"*` + strings.Repeat("a", 16) + strconv.Itoa(100000 + i)[1:] + `","tdm-reservation":1}`)
	}
	sb.WriteString("]")
	f, err := tdmrep.Parse([]byte(sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	path := "/;x/a/./%5C" + strings.Repeat("a", 16<<10-20) + "987654321"
	if v, _ := DecideTDMRep(f, path); v.Reserved() {
		b.Fatalf("the crafted path is reserved: %+v", v)
	}
	b.ReportAllocs()
	for b.Loop() {
		DecideTDMRep(f, path)
	}
}
