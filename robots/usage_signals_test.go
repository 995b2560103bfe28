package robots

import (
	"testing"

	"github.com/robotsgate/robotsgate/robots/aipref"
)

func TestUsageSignalsPrefCases(t *testing.T) {
	for _, c := range loadUsageFile(t, "usage_signals_cases.json").Prefs {
		t.Run(c.Name, func(t *testing.T) {
			checkPurposes(t, c.Want)
			got := parsePrefCase(t, c.Format, c.Input, c.Header)
			checkPrefLetters(t, got, c.Want, c.Format, c.Input, c.Source)
			if got.Use().String() != c.Use {
				t.Errorf("%s %q: use = %q, want %q (source: %s)", c.Format, c.Input, got.Use(), c.Use, c.Source)
			}
		})
	}
}

func TestUsageSignalsRobotsCases(t *testing.T) {
	for _, c := range loadUsageFile(t, "usage_signals_cases.json").Robots {
		t.Run(c.Name, func(t *testing.T) {
			r := Parse([]byte(c.Robots))
			for _, ck := range c.Checks {
				d, u := r.MatchUsage(c.Agent, ck.Path)
				if d != r.MatchPath(c.Agent, ck.Path) || d.Allowed != ck.Crawl {
					t.Errorf("%s: decision %+v, want crawl %v (source: %s)", ck.Path, d, ck.Crawl, c.Source)
				}
				for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
					checkUsageFor(t, ck.Path, p, u, ck.Usage[p.String()], c.Source)
				}
				uv := u.Use()
				if uv.Level.String() != ck.Use.Level || uv.Line != ck.Use.Line || (uv.Line != 0) != (uv.Source == ContentSignal) {
					t.Errorf("%s: use %q line %d (%q), want %q line %d (source: %s)", ck.Path, uv.Level, uv.Line, uv.Rule, ck.Use.Level, ck.Use.Line, c.Source)
				}
				if u.Prefs().Use() != uv.Level {
					t.Errorf("%s: Prefs().Use() = %q, want %q", ck.Path, u.Prefs().Use(), uv.Level)
				}
			}
		})
	}
}
