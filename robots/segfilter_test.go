package robots

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// ruleWords returns a maker of random words over the pattern alphabet
// "ab/%*$" without its two special characters.
func ruleWords(rng *rand.Rand) func(n int) string {
	const alphabet = "ab/%*$"
	return func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet)-2)]
		}
		return string(b)
	}
}

// randomRule returns a rule whose pattern starts with first and has up to
// maxParts words of up to maxWord bytes joined by '*', maybe anchored.
func randomRule(rng *rand.Rand, first string, maxParts, maxWord int, word func(int) string) Rule {
	var pat strings.Builder
	pat.WriteString(first)
	for k := 0; k < 1+rng.IntN(maxParts); k++ {
		if k > 0 {
			pat.WriteByte('*')
		}
		pat.WriteString(word(1 + rng.IntN(maxWord)))
	}
	if rng.IntN(4) == 0 {
		pat.WriteByte('$')
	}
	return Rule{Allow: rng.IntN(2) == 0, Pattern: pat.String()}
}

// checkRefDecision compares robots' decision on path for "bot" with the
// reference matcher's over rules; body is the robots.txt, for the message.
func checkRefDecision(t *testing.T, robots *Robots, rules []Rule, path, body string) {
	t.Helper()
	d := robots.MatchPath("bot", path)
	wantAllowed, wantLine := refDecide(rules, path)
	if d.Allowed != wantAllowed || d.Rule.Line != wantLine {
		t.Fatalf("path %q: got allowed=%v line %d (%s), reference allowed=%v line %d\n%s",
			path, d.Allowed, d.Rule.Line, d.Rule, wantAllowed, wantLine, body)
	}
}

// TestManyWildcardRules compares decisions on groups of hundreds of
// wildcard rules (enough for a segFilter, which the fuzz test's 20 rules
// reach only when padded) with the reference matcher.
func TestManyWildcardRules(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	word := ruleWords(rng)
	for round := 0; round < 40; round++ {
		var sb strings.Builder
		sb.WriteString("User-agent: bot\n")
		var rules []Rule
		for i := 0; i < 50+rng.IntN(300); i++ {
			first := "/"
			if rng.IntN(3) > 0 {
				first = "*"
			}
			r := randomRule(rng, first, 3, 4, word)
			sb.WriteString(r.String() + "\n")
			r.Line = i + 2
			rules = append(rules, r)
		}
		robots := parseCompiled([]byte(sb.String()))
		if !robots.ix.Form().Filter {
			t.Fatalf("round %d: no segFilter for %d rules", round, len(rules))
		}
		for j := 0; j < 200; j++ {
			path := "/" + word(rng.IntN(24))
			checkRefDecision(t, robots, rules, path, sb.String())
		}
	}
}

// TestSegFilterDecideDoesNotAllocate checks that a decision in a group
// with a segFilter keeps its scratch on the stack.
func TestSegFilterDecideDoesNotAllocate(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("User-agent: *\n")
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&sb, "Disallow: *x%d*%s\n", i, strings.Repeat("y", 70))
	}
	r := parseCompiled([]byte(sb.String()))
	if !r.ix.Form().Filter {
		t.Fatal("no segFilter")
	}
	path := "/x1" + strings.Repeat("y", 70)
	if r.MatchPath("bot", path).Allowed {
		t.Fatalf("%s allowed", path)
	}
	for _, p := range []string{path, "/x1y/0123456789" + strings.Repeat("y", 900)} {
		if n := testing.AllocsPerRun(100, func() { r.MatchPath("bot", p) }); n != 0 {
			t.Errorf("MatchPath(%.30q) allocates %v times", p, n)
		}
	}
}
