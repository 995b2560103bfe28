package robots

import "testing"

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
				u := checkMatchUsage(t, r, c.Agent, ck.Path, ck.Crawl, ck.Usage, c.Source)
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
