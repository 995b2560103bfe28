package robots

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/robotsgate/robotsgate/robots/aipref"
)

// signalCases mirrors testdata/usage_signals_cases.json: the examples of
// draft-ietf-aipref-vocab-08 and of Content Signals (with use=).
type signalCases struct {
	Prefs []struct {
		Name, Source, Format, Input, Use string
		Header                           []string
		Want                             map[string]string
	}
	Robots []struct {
		Name, Source, Robots, Agent string
		Checks                      []struct {
			Path  string
			Crawl bool
			Usage map[string]struct {
				Pref, Source string
				Line         int
			}
			Use struct {
				Level string
				Line  int
			}
		}
	}
}

func loadSignalCases(t *testing.T) signalCases {
	t.Helper()
	b, err := os.ReadFile("testdata/usage_signals_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var sc signalCases
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	if len(sc.Prefs) == 0 || len(sc.Robots) == 0 {
		t.Fatal("usage_signals_cases.json: no cases")
	}
	return sc
}

func TestUsageSignalsPrefCases(t *testing.T) {
	for _, c := range loadSignalCases(t).Prefs {
		t.Run(c.Name, func(t *testing.T) {
			checkPurposes(t, c.Want)
			var got aipref.Prefs
			switch {
			case c.Format == "content-signal-header":
				got = aipref.ParseContentSignalHeader(c.Header)
			case c.Format == "content-signal":
				got = aipref.ParseContentSignal(c.Input)
			case c.Format == "vocab" && c.Header != nil:
				got = aipref.ParseHeader(c.Header)
			case c.Format == "vocab":
				got = aipref.Parse(c.Input)
			default:
				t.Fatalf("unknown format %q", c.Format)
			}
			for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
				if g, w := prefLetter(got.Get(p)), c.Want[p.String()]; g != w {
					t.Errorf("%s %q: %s = %q, want %q (source: %s)", c.Format, c.Input, p, g, w, c.Source)
				}
			}
			if got.Use().String() != c.Use {
				t.Errorf("%s %q: use = %q, want %q (source: %s)", c.Format, c.Input, got.Use(), c.Use, c.Source)
			}
		})
	}
}

func TestUsageSignalsRobotsCases(t *testing.T) {
	for _, c := range loadSignalCases(t).Robots {
		t.Run(c.Name, func(t *testing.T) {
			r := Parse([]byte(c.Robots))
			for _, ck := range c.Checks {
				d, u := r.MatchUsage(c.Agent, ck.Path)
				if d != r.MatchPath(c.Agent, ck.Path) || d.Allowed != ck.Crawl {
					t.Errorf("%s: decision %+v, want crawl %v (source: %s)", ck.Path, d, ck.Crawl, c.Source)
				}
				for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
					got, want := u.For(p), ck.Usage[p.String()]
					if prefLetter(got.Pref) != want.Pref || got.Source.String() != want.Source || got.Line != want.Line {
						t.Errorf("%s %s: got %s from %q line %d, want %q from %q line %d (source: %s)",
							ck.Path, p, prefLetter(got.Pref), got.Source, got.Line, want.Pref, want.Source, want.Line, c.Source)
					}
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
