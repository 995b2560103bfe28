package robots

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// keyedBody returns a file of groups naming "bot", of rules from rule,
// with ngroups groups of n rules each.
func keyedBody(ngroups, n int, rule func(g, i int) string) []byte {
	var sb strings.Builder
	for g := 0; g < ngroups; g++ {
		sb.WriteString("User-agent: bot\n")
		for i := 0; i < n; i++ {
			sb.WriteString(rule(g, i) + "\n")
		}
	}
	return []byte(sb.String())
}

// TestKeyedCompactMatchesCompiled checks that compact parts keyed into
// the file's segment filter (more wildcard records than a compact part
// tries one by one) decide as the compiled form, searching the path
// directly or indexing it at once: one group or several merged, with
// plain and wildcard rules, '$', directory Allows and patterns not
// canonical as written.
func TestKeyedCompactMatchesCompiled(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	atoms := []string{"a", "b", "ab", "ba", "/", "?", "=", "aab", " ", "%61", "é", "/index.html"}
	word := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(atoms[rng.Intn(len(atoms))])
		}
		return sb.String()
	}
	rule := func(g, i int) string {
		p := "/" + word(rng.Intn(3))
		for k := rng.Intn(4); k > 0; k-- {
			p += "*" + word(1+rng.Intn(3))
		}
		if rng.Intn(6) == 0 {
			p += "$"
		}
		return []string{"Allow: ", "Disallow: "}[rng.Intn(2)] + p
	}
	for round := 0; round < 12; round++ {
		ngroups := 1 + round%3
		body := keyedBody(ngroups, (compactWild+60)/ngroups*(1+round%2), rule)
		r, c := Parse(body), parseCompiled(body)
		if !r.ix.Form().Lazy {
			t.Fatalf("round %d: the file keeps a filter", round)
		}
		for i, pt := range r.ix.Form().Parts {
			if !pt.Keyed {
				t.Fatalf("round %d: part %d is not keyed (compact %v)", round, i, pt.Compact)
			}
		}
		for i := 0; i < 2000; i++ {
			path := "/" + word(rng.Intn(12))
			dc := c.MatchPath("bot", path)
			r.ix.SetBudget(directBudget)
			if d := r.MatchPath("bot", path); d != dc {
				t.Fatalf("round %d, %q: keyed %+v, compiled %+v", round, path, d, dc)
			}
			if i%8 != 0 {
				continue // below: each decision builds a filter
			}
			r.ix.SetBudget(0)
			if d := r.MatchPath("bot", path); d != dc {
				t.Fatalf("round %d, %q, indexed: keyed %+v, compiled %+v", round, path, d, dc)
			}
		}
	}
}

// keyedHostile returns a file of one keyed compact part of as many
// wildcard records as it may have, each of whose keys the path holds, in
// the wrong order, and that path; with twice set, the same group for
// another agent follows, so that the file's keys are too many for it to
// be without a filter.
func keyedHostile(twice bool) ([]byte, string) {
	toks := hostileTokens(2000)
	path := testsupport.OrderPath(toks)
	body := keyedBody(1, ptableMin, func(_, i int) string {
		j := 1 + i%200
		return "Disallow: /*q" + toks[j] + "*q" + toks[i%j] + "*q" + strconv.Itoa(i/200)
	})
	if twice {
		body = append(body, strings.Replace(string(body), "User-agent: bot", "User-agent: other", 1)...)
	}
	return body, path
}

// TestKeyedCompactBoundedWork checks, by the count of work of a decision
// (not a clock), that a keyed compact part whose records all pass the
// filter costs what the compiled form costs: a direct search of the path
// per record only until the file's budget is spent, then lookups in the
// path's index.
//
// A file of one such part keeps no filter, and the decision builds one
// once past the budget; a file of two keeps one.
func TestKeyedCompactBoundedWork(t *testing.T) {
	for _, twice := range []bool{false, true} {
		body, path := keyedHostile(twice)
		r, c := Parse(body), parseCompiled(body)
		if !r.ix.Form().Parts[0].Keyed || r.ix.Form().Lazy == twice {
			t.Fatalf("twice %v: keyed %v, lazy %v", twice, r.ix.Form().Parts[0].Keyed, r.ix.Form().Lazy)
		}
		rule, ok, work := decideWork(r, "bot", path)
		crule, cok, cwork := decideWork(c, "bot", path)
		if rule != crule || ok != cok {
			t.Fatalf("twice %v: keyed %+v %v, compiled %+v %v", twice, rule, ok, crule, cok)
		}
		if limit := directBudget + 4*len(path) + 16*ptableMin + lazyKeyBytes; work > limit || work > 2*cwork {
			t.Fatalf("twice %v: work %d, compiled %d, limit %d", twice, work, cwork, limit)
		}
	}
}

// TestKeyedLazyConcurrent decides, from several goroutines at once, paths
// that spend the budget of a file without a filter, so that decisions
// build filters and share them through the file's pool (run with -race):
// each decides as the compiled form.
func TestKeyedLazyConcurrent(t *testing.T) {
	body, path := keyedHostile(false)
	r, c := Parse(body), parseCompiled(body)
	if !r.ix.Form().Lazy {
		t.Fatal("the file keeps a filter")
	}
	paths := []string{path, path[:len(path)/2] + "q" + hostileTokens(2)[1] + "qq0", "/short"}
	want := make([]Match, len(paths))
	for i, p := range paths {
		want[i] = c.MatchPath("bot", p)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 6; k++ {
				i := (g + k) % len(paths)
				if d := r.MatchPath("bot", paths[i]); d != want[i] {
					errs <- fmt.Sprintf("path %d: %+v, compiled %+v", i, d, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestKeyedBesideCompiled checks a file with a keyed part and a compiled
// one (a pattern whose canonical segment holds a '*'): the file keeps
// one filter for both, and both agents decide as in the compiled form.
func TestKeyedBesideCompiled(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	word := func() string { return []string{"ab", "ba", "a", "b/", "?a="}[rng.Intn(5)] }
	rule := func(_, _ int) string {
		return []string{"Allow: /", "Disallow: /"}[rng.Intn(2)] + word() + "*" + word() + "*" + word()
	}
	body := keyedBody(1, compactWild+40, rule)
	body = append(body, "User-agent: other\nDisallow: /z%2A*q\n"...)
	for i := 0; i < 40; i++ {
		body = append(body, rule(0, i)+"\n"...)
	}
	r, c := Parse(body), parseCompiled(body)
	if !r.ix.Form().Parts[0].Keyed || r.ix.Form().Parts[1].Compact || !r.ix.Form().Filter || r.ix.Form().Lazy {
		t.Fatalf("keyed %v, compiled %v, filter %v", r.ix.Form().Parts[0].Keyed, !r.ix.Form().Parts[1].Compact, r.ix.Form().Filter)
	}
	for i := 0; i < 3000; i++ {
		path := "/"
		for k := rng.Intn(8); k > 0; k-- {
			path += word()
		}
		agent := []string{"bot", "other"}[i%2]
		budget := []int{directBudget, 0}[i/2%2]
		r.ix.SetBudget(budget)
		if d, dc := r.MatchPath(agent, path), c.MatchPath(agent, path); d != dc {
			t.Fatalf("%s %q (budget %d): %+v, compiled %+v", agent, path, budget, d, dc)
		}
	}
}
