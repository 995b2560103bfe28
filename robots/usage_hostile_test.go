package robots

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// disallowLine is a Disallow line of a hostile body.
var disallowLine = regexp.MustCompile(`(?m)^Disallow: /?(.*)$`)

// usageEvery turns every k-th Disallow line of body into a line of key
// with the same path (k = 1: all of them) and a train-ai preference.
func usageEvery(body []byte, key string, k int) []byte {
	pref := " train-ai=n"
	if key == "Content-Signal" {
		pref = " ai-train=no"
	}
	i := 0
	return disallowLine.ReplaceAllFunc(body, func(l []byte) []byte {
		i++
		if (i-1)%k != 0 {
			return l
		}
		return disallowLine.ReplaceAll(l, []byte(key+": /$1"+pref))
	})
}

// hostileUsageCases are hostileCases whose rules are Content-Usage paths
// ("usage"), half of them ("mixed", the decision and the usage sharing
// one path's work) or Content-Signal paths ("signal").
func hostileUsageCases() []hostileCase {
	var cs []hostileCase
	for _, hc := range hostileCases() {
		cs = append(cs, hostileCase{"usage/" + hc.name, usageEvery(hc.body, "Content-Usage", 1), hc.path})
		switch hc.name {
		case "wrong-order", "zyx", "nested-periodic", "fan-out":
			cs = append(cs,
				hostileCase{"mixed/" + hc.name, usageEvery(hc.body, "Content-Usage", 2), hc.path},
				hostileCase{"signal/" + hc.name, usageEvery(hc.body, "Content-Signal", 1), hc.path})
		}
	}
	return cs
}

// checkNoUsage fails when the hostile path is disallowed or has a
// train-ai preference: no rule nor usage path matches it.
func checkNoUsage(tb testing.TB, name string, r *Robots, path string) {
	tb.Helper()
	d, u := r.MatchUsage("bot", path)
	if !d.Allowed {
		tb.Fatalf("%s: matched line %d", name, d.Rule.Line)
	}
	if v := u.For(aipref.TrainAI); v.Source != UsageNone {
		tb.Fatalf("%s: usage from line %d", name, v.Line)
	}
}

// BenchmarkDecideUsageHostile is BenchmarkDecideHostile for MatchUsage,
// the hostile patterns being usage paths.
func BenchmarkDecideUsageHostile(b *testing.B) {
	for _, bc := range hostileUsageCases() {
		b.Run(bc.name, func(b *testing.B) {
			r := parseCompiled(bc.body)
			checkNoUsage(b, bc.name, r, bc.path)
			b.ReportAllocs()
			b.ResetTimer()
			testsupport.CPUPerOp(b, func() { r.MatchUsage("bot", bc.path) })
		})
	}
}

// TestUsagePathsInFileFilter checks that the wildcard paths of usage
// lines get keys in the file's segFilter, as rules do, so that a file of
// usage paths is filtered and indexed like one of rules.
func TestUsagePathsInFileFilter(t *testing.T) {
	for key, pref := range map[string]string{"Content-Usage": "train-ai=n", "Content-Signal": "ai-train=no"} {
		var sb strings.Builder
		sb.WriteString("User-agent: *\n")
		for i := 0; i < 2*segFilterMin; i++ {
			fmt.Fprintf(&sb, "%s: /*x%d*yy %s\n", key, i, pref)
		}
		r := parseCompiled([]byte(sb.String()))
		if !r.ix.Form().Filter {
			t.Fatalf("%s: no segFilter", key)
		}
		g, _ := r.lookup("bot")
		sets := g.usage.usage
		if key == "Content-Signal" {
			sets = g.usage.signals
		}
		for _, s := range sets {
			if !s.paths.Keyed() {
				t.Errorf("%s: a path has no key", key)
			}
		}
		_, u := r.MatchUsage("bot", "/ax7byy")
		if v := u.For(aipref.TrainAI); v.Line != 9 {
			t.Errorf("%s: /ax7byy decided by %+v", key, v)
		}
	}
}

// TestUsageHostileDecisionsAgree decides the hostile usage paths with and
// without the path index: the same decision and usage.
func TestUsageHostileDecisionsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	for _, hc := range hostileUsageCases() {
		r := parseCompiled(hc.body)
		checkNoUsage(t, hc.name, r, hc.path)
		for _, path := range []string{hc.path[:len(hc.path)/3], hc.path[:100]} {
			r.ix.SetBudget(1 << 62)
			dd, du := r.MatchUsage("bot", path)
			r.ix.SetBudget(0)
			if id, iu := r.MatchUsage("bot", path); id != dd || iu != du {
				t.Errorf("%s: path of %d octets: indexed %+v %+v, direct %+v %+v", hc.name, len(path), id, iu, dd, du)
			}
			if want := r.MatchPath("bot", path); dd != want {
				t.Errorf("%s: MatchUsage decision %+v, MatchPath %+v", hc.name, dd, want)
			}
		}
	}
}

// TestDecideUsageFilteredDoesNotAllocate checks that MatchUsage and
// Match keep their scratch on the stack in a file with a segFilter. (An
// indexed path takes its index from a sync.Pool, which the garbage
// collector and the race detector empty at will.)
func TestDecideUsageFilteredDoesNotAllocate(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("Content-Signal: /*x1*zz search=no\nUser-agent: *\n")
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&sb, "Disallow: *x%d*%s\nContent-Usage: /*x%d*%s train-ai=n\n",
			i, strings.Repeat("y", 70), i, strings.Repeat("z", 70))
	}
	r := parseCompiled([]byte(sb.String()))
	if !r.ix.Form().Filter {
		t.Fatal("no segFilter")
	}
	long := "/x1/" + strings.Repeat("z", 1500)
	if _, u := r.MatchUsage("bot", long); u.For(aipref.TrainAI).Pref != aipref.Disallowed {
		t.Fatalf("%.20s: no train-ai preference", long)
	}
	for _, p := range []string{long, "/x1/caf\u00e9" + strings.Repeat("z", 80), "x1zz"} {
		if n := testing.AllocsPerRun(100, func() { r.MatchUsage("bot", p) }); n != 0 {
			t.Errorf("MatchUsage(%.30q) allocates %v times", p, n)
		}
		if n := testing.AllocsPerRun(100, func() { r.MatchPath("bot", p) }); n != 0 {
			t.Errorf("MatchPath(%.30q) allocates %v times", p, n)
		}
	}
}
