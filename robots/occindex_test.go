package robots

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestIndexedDecisions decides with the path indexed from the first
// pattern on, and compares with the reference matcher: long paths over a
// small alphabet, rules with nested keys, anchors and several groups.
func TestIndexedDecisions(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	word := ruleWords(rng)
	for round := 0; round < 30; round++ {
		var sb strings.Builder
		var rules []Rule
		line := 0
		for i := 0; i < 20+rng.IntN(200); i++ {
			if i%50 == 0 {
				sb.WriteString("User-agent: bot\n")
				line++
			}
			r := randomRule(rng, "/*"[rng.IntN(2):][:1], 4, 5, word)
			sb.WriteString(r.String() + "\n")
			line++
			r.Line = line
			rules = append(rules, r)
		}
		robots := parseCompiled([]byte(sb.String()))
		robots.ix.SetBudget(0)
		for j := 0; j < 30; j++ {
			path := "/"
			for len(path) < rng.IntN(300) {
				path += word(rng.IntN(6)) + strings.Repeat("b", rng.IntN(60))
			}
			checkRefDecision(t, robots, rules, path, sb.String())
		}
	}
}

// TestHostileDecisionsAgree decides the hostile benchmark paths with and
// without the index: the same rule decides.
func TestHostileDecisionsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	for _, hc := range hostileCases() {
		r := parseCompiled(hc.body)
		for _, path := range []string{hc.path, hc.path[:len(hc.path)/3], hc.path[:100]} {
			r.ix.SetBudget(1 << 62)
			direct := r.MatchPath("bot", path)
			r.ix.SetBudget(0)
			if indexed := r.MatchPath("bot", path); indexed != direct {
				t.Errorf("%s: path of %d octets: indexed %+v, direct %+v", hc.name, len(path), indexed, direct)
			}
		}
	}
}
