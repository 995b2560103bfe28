package enforce

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// TestUsageSignalsHeldCases asserts, on the robots.txt cases of
// robots/testdata/usage_signals_cases.json (the examples of
// draft-ietf-aipref-vocab-08 and Content Signals), what a crawler is
// held to: for each purpose the preference RulesVerdict reports (the most
// restrictive of every line that binds it, aipref.Binds), that a crawler
// declaring only that purpose is refused exactly when it is "n" (so a
// search crawler only by its search preference), and which declared
// content uses the site's level lets through.
func TestUsageSignalsHeldCases(t *testing.T) {
	b, err := os.ReadFile("../robots/testdata/usage_signals_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var sc struct {
		Robots []struct {
			Name, Source, Robots, Agent string
			Checks                      []struct {
				Path    string
				Held    map[string]string
				Permits map[string]bool
			}
		}
	}
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	held, permits := 0, 0
	for _, c := range sc.Robots {
		t.Run(c.Name, func(t *testing.T) {
			r := robots.Parse([]byte(c.Robots))
			for _, ck := range c.Checks {
				if ck.Held != nil {
					held++
					checkHeld(t, r, c.Agent, ck.Path, ck.Held, c.Source)
				}
				for name, want := range ck.Permits {
					permits++
					use, err := aipref.ParseUse(name)
					if err != nil {
						t.Fatal(err)
					}
					v := RulesVerdict(r, c.Agent, ck.Path, UsagePolicy{ContentUse: use})
					if v.ContentUseBlocked == want || v.ContentUseBlocked && (v.Reason != ReasonUsageDisallowed || v.Line == 0) {
						t.Errorf("%s content use %s: %+v, want permitted %v (source: %s)", ck.Path, name, v, want, c.Source)
					}
				}
			}
		})
	}
	if held == 0 || permits == 0 {
		t.Fatalf("cases with held: %d, with permits: %d", held, permits)
	}
}

// checkHeld asserts the held preferences of path.
func checkHeld(t *testing.T, r *robots.Robots, agent, path string, want map[string]string, source string) {
	t.Helper()
	v := RulesVerdict(r, agent, path, UsagePolicy{})
	for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
		got := ""
		switch v.Usage[p].Pref {
		case aipref.Allowed:
			got = "y"
		case aipref.Disallowed:
			got = "n"
		}
		if got != want[p.String()] {
			t.Errorf("%s %s: held %q (%q), want %q (source: %s)", path, p, got, v.Usage[p].Rule, want[p.String()], source)
		}
		d := RulesVerdict(r, agent, path, UsagePolicy{Purposes: aipref.SetOf(p)})
		if refused := d.Reason == ReasonUsageDisallowed; refused != (got == "n") {
			t.Errorf("%s: a crawler declaring only %s: %s (%s), held %q (source: %s)", path, p, d.Reason, d.Detail, got, source)
		}
	}
}

// TestContentUseDecide: DecideOptions.ContentUse refuses a URL whose
// level is below it, quiet or not, reports the level otherwise, and a
// spelling of the path cannot pick up a higher level.
func TestContentUseDecide(t *testing.T) {
	const file = "User-agent: *\nContent-Signal: search=yes, use=reference\nContent-Signal: /full/ use=full\n"
	v := newEnv(t, serve(200, file), Config{})
	d := v.e.Decide(context.Background(), v.o.url("/a"), "", DecideOptions{ContentUse: aipref.UseFull})
	if got := v.o.robots.Load(); got != 1 {
		t.Fatalf("%d robots.txt fetches, want 1", got)
	}
	if d.Reason != ReasonUsageDisallowed || !d.ContentUseBlocked || d.ContentUse != aipref.UseFull || d.Line != 2 ||
		d.Rule != "Content-Signal: search=yes, use=reference" || d.Detail != "content use full is above the site's level reference" ||
		d.SiteUse.Level != aipref.UseReference || d.UsageBlocked != 0 {
		t.Fatalf("Decide /a: %+v", d)
	}
	if d := v.e.Decide(context.Background(), v.o.url("/full/x"), "", DecideOptions{ContentUse: aipref.UseFull, Quiet: true}); !d.Allowed || d.SiteUse.Level != aipref.UseFull || d.SiteUse.Line != 3 {
		t.Fatalf("DecideQuiet /full/x: %+v", d)
	}
	d = v.e.Decide(context.Background(), v.o.url("/full/..%2fa"), "", DecideOptions{ContentUse: aipref.UseFull})
	if d.Reason != ReasonUsageDisallowed || d.SiteUse.Level != aipref.UseReference || !strings.Contains(d.Detail, "decided on the normalised path /a") {
		t.Fatalf("spelling /full/..%%2fa: %+v", d)
	}
	for _, use := range []aipref.Use{aipref.UseUnknown, aipref.UseImmediate, aipref.UseReference} {
		d := v.e.Decide(context.Background(), v.o.url("/a"), "", DecideOptions{ContentUse: use, Purposes: aipref.SetOf(aipref.Search)})
		if !d.Allowed || d.ContentUseBlocked || d.SiteUse.Level != aipref.UseReference {
			t.Errorf("content use %q: %+v", use, d)
		}
	}
	// Refused for a purpose and the content use at once: both are said.
	w := newEnv(t, serve(200, "User-agent: *\nContent-Signal: ai-train=no, use=immediate\n"), Config{})
	d = w.decideFor("/a", "", aipref.SetOf(aipref.TrainAI))
	if d.Reason != ReasonUsageDisallowed || d.ContentUseBlocked {
		t.Fatalf("train-ai only: %+v", d)
	}
	d = w.e.Decide(context.Background(), w.o.url("/a"), "", DecideOptions{Purposes: aipref.SetOf(aipref.TrainAI), ContentUse: aipref.UseReference})
	if !d.ContentUseBlocked || d.UsageBlocked != aipref.SetOf(aipref.TrainAI) ||
		d.Detail != "purpose train-ai disallowed; content use reference is above the site's level immediate" {
		t.Fatalf("both: %+v", d)
	}
}
