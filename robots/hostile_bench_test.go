package robots

import (
	"strconv"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// hostileTokens returns n distinct 2-octet tokens of the printable
// characters other than 'q', '*', '$', '#' and '%'.
func hostileTokens(n int) []string {
	var alpha []byte
	for c := byte('!'); c <= '~'; c++ {
		if !strings.ContainsRune("q*$#%", rune(c)) {
			alpha = append(alpha, c)
		}
	}
	toks := make([]string, 0, n)
	for i := 0; len(toks) < n; i++ {
		toks = append(toks, string([]byte{alpha[i/len(alpha)%len(alpha)], alpha[i%len(alpha)]}))
	}
	return toks
}

// hostileCase is a ~500 KiB robots.txt and a 16 KiB path that no rule
// matches, built so that as many rules as possible get past every filter.
type hostileCase struct {
	name string
	body []byte
	path string
}

func hostileCases() []hostileCase {
	var cs []hostileCase
	// Tokens "q"+t in the path in one order; each rule asks for two of
	// them in the other order, after a 'q' that is everywhere. The search
	// for the second fails only at the end of the path, which is full of
	// 'q's that start a near match.
	toks := hostileTokens(2000)
	orderPath := testsupport.OrderPath(toks)
	cs = append(cs, hostileCase{"wrong-order", shortRulesRobots(DefaultMaxBytes, func(i int) string {
		j := 1 + i%200
		k := (i / 200) % j
		return "*q*q" + toks[j] + "*q" + toks[k] + "*q" + strconv.Itoa(i/200/j)
	}), orderPath})
	// The same rules spread over thousands of small groups, none big
	// enough for a per-group filter.
	cs = append(cs, hostileCase{"wrong-order-many-groups", manyGroups(DefaultMaxBytes, func(i int) string {
		j := 1 + i%200
		k := (i / 200) % j
		return "*q*q" + toks[j] + "*q" + toks[k]
	}), orderPath})
	// *z*y*x rules: every octet and segment present, in reverse order.
	zyxPath := testsupport.PadPath("/"+strings.Repeat("x", 5000)+strings.Repeat("y", 5000), "z")
	cs = append(cs, hostileCase{"zyx", shortRulesRobots(DefaultMaxBytes, func(i int) string {
		return "*z" + strings.Repeat("z", i%7) + "*y" + strings.Repeat("y", i/7%7) + "*x" + strings.Repeat("x", i/49)
	}), zyxPath})
	// Keys nested as suffixes of one another (a^2, a^3, ...) in a
	// periodic path: every key occurs at almost every position.
	nestPath := testsupport.PadPath("/b", "a")
	cs = append(cs, hostileCase{"nested-periodic", shortRulesRobots(DefaultMaxBytes, func(i int) string {
		return "*b*" + strings.Repeat("a", 2+i%300) + "*" + strings.Repeat("a", 1+i/300) + "b"
	}), nestPath})
	// Long needles that nearly match everywhere.
	cs = append(cs, hostileCase{"long-near-miss", shortRulesRobots(DefaultMaxBytes, func(i int) string {
		return "*b*" + strings.Repeat("a", 60+i%50) + "b" + strconv.Itoa(i/50)
	}), testsupport.PadPath("/b0123456789", "a")})
	// Many one-octet segments, all found, the last absent after them.
	cs = append(cs, hostileCase{"star-a-many", shortRulesRobots(DefaultMaxBytes, func(i int) string {
		return "/" + strings.Repeat("*a", 200+i%100) + "*b" + strconv.Itoa(i/100)
	}), testsupport.PadPath("/b0123456789", "a")})
	// Anchored: the suffix is present, the middle is not in order.
	cs = append(cs, hostileCase{"anchored", shortRulesRobots(DefaultMaxBytes, func(i int) string {
		return "*q" + toks[1+i%1000] + "*q" + toks[i%(1+i%1000)] + "*qq" + strconv.Itoa(i/1000) + "$"
	}), testsupport.PadPath(orderPath[:testsupport.HostilePathLen/2], "q") + "qq0"})
	// Lines as long as the parser reads, of one-octet segments, that
	// fail on their last.
	cs = append(cs, hostileCase{"huge-rules", shortRulesRobots(DefaultMaxBytes, func(i int) string {
		return "/" + strings.Repeat("*a", 8000-i) + "*c"
	}), testsupport.PadPath("/c", "a")})
	return append(cs, moreHostileCases(toks)...)
}

// moreHostileCases are hostileCases aimed at the path index and the
// automaton.
func moreHostileCases(toks []string) []hostileCase {
	var cs []hostileCase
	var sb strings.Builder
	// Keys that are suffixes of other keys ("ab" of "xab"): their
	// occurrences are found through the wavelet matrix.
	sb.WriteString("/")
	for _, t := range toks[:300] {
		sb.WriteString(t + "ab")
	}
	cs = append(cs, hostileCase{"suffix-keys", shortRulesRobots(DefaultMaxBytes, func(i int) string {
		return "/" + strings.Repeat("*ab", 300+i%200) + "*" + toks[i/200%300] + "ab"
	}), testsupport.PadPath(sb.String(), "ab")})
	// One-octet segments far enough apart that each is looked up.
	cs = append(cs, hostileCase{"far-apart", shortRulesRobots(DefaultMaxBytes, func(i int) string {
		return "/z" + strings.Repeat("*a*b", 100+i%100) + "*z" + strconv.Itoa(i/100)
	}), testsupport.PadPath("/z0123456789", "a"+strings.Repeat("c", 40)+"b"+strings.Repeat("c", 40))})
	// Keys with many continuations along a long chain of failure links,
	// none of which the path takes: each octet of the path visits them.
	var fan []string
	for j := 1; j < 40; j++ {
		for c := byte('!'); c < '~'; c++ {
			if c != '*' && c != '$' && c != '#' && c != '%' {
				fan = append(fan, strings.Repeat("a", j)+string(c))
			}
		}
	}
	// As many wildcard rules as a compact part keeps, each nearly
	// found at every position of the path.
	var near strings.Builder
	near.WriteString("User-agent: *\n")
	for i := 0; i < compactWild; i++ {
		near.WriteString("Disallow: /*" + strings.Repeat("a", 20+i%40) + "b" + strconv.Itoa(i) + "\n")
	}
	cs = append(cs, hostileCase{"compact-near-miss", []byte(near.String()), testsupport.PadPath("/", "a")})
	// As many wildcard records as a keyed compact part keeps, each of
	// whose keys the path holds in the wrong order.
	// The file keeps no filter: the decision builds one past the budget.
	lazyBody, lazyPath := keyedHostile(false)
	cs = append(cs, hostileCase{"keyed-lazy-wrong-order", lazyBody, lazyPath})
	// The same group twice, for two agents: the file keeps a filter.
	keyedBody, keyedPath := keyedHostile(true)
	cs = append(cs, hostileCase{"keyed-wrong-order", keyedBody, keyedPath})
	cs = append(cs, hostileCase{"fan-out", shortRulesRobots(DefaultMaxBytes, func(i int) string {
		return "*" + fan[i%len(fan)] + "*z"
	}), testsupport.PadPath("/z", strings.Repeat("a", 40)+"~")})
	return cs
}

// manyGroups returns a robots.txt of about size bytes of groups naming
// "*" with 3 rules each.
func manyGroups(size int, rule func(i int) string) []byte {
	var sb strings.Builder
	for i := 0; ; i++ {
		l := "Disallow: " + rule(i) + "\n"
		if i%3 == 0 {
			l = "User-agent: *\n" + l
		}
		if sb.Len()+len(l) > size {
			break
		}
		sb.WriteString(l)
	}
	return []byte(sb.String())
}

// BenchmarkDecideHostile decides 16 KiB paths against ~500 KiB files
// built to make one decision as costly as possible.
func BenchmarkDecideHostile(b *testing.B) {
	for _, bc := range hostileCases() {
		b.Run(bc.name, func(b *testing.B) {
			r := Parse(bc.body)
			if d := r.MatchPath("bot", bc.path); !d.Allowed {
				b.Fatalf("matched line %d", d.Rule.Line)
			}
			b.ReportAllocs()
			b.ResetTimer()
			testsupport.CPUPerOp(b, func() { r.MatchPath("bot", bc.path) })
		})
	}
}

// BenchmarkParseHostile parses the files of BenchmarkDecideHostile.
func BenchmarkParseHostile(b *testing.B) {
	for _, bc := range hostileCases() {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.body)))
			b.ReportAllocs()
			for b.Loop() {
				Parse(bc.body)
			}
		})
	}
}
