package robots

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/robots/aipref"
)

// usageCaseFile mirrors testdata/usage_cases.json and
// testdata/usage_signals_cases.json (the latter adds the use= fields).
type usageCaseFile struct {
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
			Usage map[string]usageWant
			Use   struct {
				Level string
				Line  int
			}
		}
	}
}

// usageWant is one purpose's expected statement in a case file.
type usageWant struct {
	Pref, Source string
	Line         int
}

func loadUsageFile(t *testing.T, name string) usageCaseFile {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var uc usageCaseFile
	if err := json.Unmarshal(b, &uc); err != nil {
		t.Fatal(err)
	}
	if len(uc.Prefs) == 0 || len(uc.Robots) == 0 {
		t.Fatalf("%s: no cases", name)
	}
	return uc
}

// parsePrefCase parses a prefs case's input with the parser its format names.
func parsePrefCase(t *testing.T, format, input string, header []string) aipref.Prefs {
	t.Helper()
	switch {
	case format == "content-signal-header":
		return aipref.ParseContentSignalHeader(header)
	case format == "content-signal":
		return aipref.ParseContentSignal(input)
	case format == "vocab" && header != nil:
		return aipref.ParseHeader(header)
	case format == "vocab":
		return aipref.Parse(input)
	}
	t.Fatalf("unknown format %q", format)
	return aipref.Prefs{}
}

// checkPrefLetters compares every purpose of got with want (y/n/"").
func checkPrefLetters(t *testing.T, got aipref.Prefs, want map[string]string, format, input, source string) {
	t.Helper()
	for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
		if g, w := prefLetter(got.Get(p)), want[p.String()]; g != w {
			t.Errorf("%s %q: %s = %q, want %q (source: %s)", format, input, p, g, w, source)
		}
	}
}

// checkMatchUsage decides path for agent with r.MatchUsage, checks that
// its decision is MatchPath's and allows crawling as crawl says and that
// each purpose's statement is usage's, and returns the usage.
func checkMatchUsage(t *testing.T, r *Robots, agent, path string, crawl bool, usage map[string]usageWant, source string) Usage {
	t.Helper()
	d, u := r.MatchUsage(agent, path)
	if want := r.MatchPath(agent, path); d != want {
		t.Errorf("%s: MatchUsage decision %+v, MatchPath %+v", path, d, want)
	}
	if d.Allowed != crawl {
		t.Errorf("%s: crawl = %v, want %v (source: %s)", path, d.Allowed, crawl, source)
	}
	for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
		got, want := u.For(p), usage[p.String()]
		if prefLetter(got.Pref) != want.Pref || got.Source.String() != want.Source || got.Line != want.Line {
			t.Errorf("%s %s: got %s from %q line %d (%q), want %q from %q line %d (source: %s)",
				path, p, prefLetter(got.Pref), got.Source, got.Line, got.Rule, want.Pref, want.Source, want.Line, source)
		}
	}
	return u
}

// prefLetter is the notation of the JSON file: "y", "n", or "" for unknown.
func prefLetter(p aipref.Pref) string {
	switch p {
	case aipref.Allowed:
		return "y"
	case aipref.Disallowed:
		return "n"
	}
	return ""
}

func checkPurposes(t *testing.T, want map[string]string) {
	t.Helper()
	for k := range want {
		if _, err := aipref.ParsePurposes([]string{k}); err != nil {
			t.Fatalf("case names an unknown purpose: %v", err)
		}
	}
}

func TestUsagePrefCases(t *testing.T) {
	for _, c := range loadUsageFile(t, "usage_cases.json").Prefs {
		t.Run(c.Name, func(t *testing.T) {
			checkPurposes(t, c.Want)
			got := parsePrefCase(t, c.Format, c.Input, c.Header)
			checkPrefLetters(t, got, c.Want, c.Format, c.Input, c.Source)
		})
	}
}

func TestUsageRobotsCases(t *testing.T) {
	for _, c := range loadUsageFile(t, "usage_cases.json").Robots {
		t.Run(c.Name, func(t *testing.T) {
			r := Parse([]byte(c.Robots))
			for _, ck := range c.Checks {
				u := checkMatchUsage(t, r, c.Agent, ck.Path, ck.Crawl, ck.Usage, c.Source)
				for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
					got := u.For(p)
					if (got.Rule == "") != (got.Source == UsageNone) ||
						got.Source != UsageNone && !strings.HasPrefix(strings.ToLower(got.Rule), got.Source.String()+":") {
						t.Errorf("%s %s: rule %q does not fit source %q", ck.Path, p, got.Rule, got.Source)
					}
				}
				if got, want := u.Prefs(), prefsOf(ck.Usage); got != want {
					t.Errorf("%s: Prefs() = %v, want %v", ck.Path, got, want)
				}
			}
		})
	}
}

func prefsOf(m map[string]usageWant) aipref.Prefs {
	var ps aipref.Prefs
	for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
		switch m[p.String()].Pref {
		case "y":
			ps = ps.With(p, aipref.Allowed)
		case "n":
			ps = ps.With(p, aipref.Disallowed)
		}
	}
	return ps
}

// usageNoise are usage lines that, inserted anywhere in a robots.txt,
// must leave every Allow/Disallow verdict as it was.
var usageNoise = []string{
	"Content-Usage: train-ai=n",
	"Content-Usage: / train-ai=y, search=n",
	"Content-Signal: search=yes, ai-train=no",
	"content-usage: /*",
	"Content-Signal:",
}

// TestUsageLinesKeepCrawlVerdicts inserts usage lines after every line of
// every conformance case and checks that each decision stays the same.
func TestUsageLinesKeepCrawlVerdicts(t *testing.T) {
	n := 0
	for _, file := range []string{"google_robotstxt_cases.json", "seed_and_rfc_cases.json"} {
		for _, c := range loadCases(t, file) {
			body := c.body(t)
			if len(body) > DefaultMaxBytes/2 {
				continue
			}
			want := Parse(body).Match(c.UserAgent, c.URL)
			for i, noise := range usageNoise {
				// After every LF and, unless the body starts with (part of)
				// a byte order mark, which must stay first, at the start.
				noisy := strings.ReplaceAll(string(body), "\n", "\n"+noise+"\n")
				if i%2 == 0 && (len(body) == 0 || body[0] != 0xEF) {
					noisy = noise + "\n" + noisy
				}
				nr := Parse([]byte(noisy))
				got := nr.Match(c.UserAgent, c.URL)
				if got.Allowed != want.Allowed || got.Group != want.Group || got.Rule.Allow != want.Rule.Allow ||
					got.Rule.Pattern != want.Rule.Pattern {
					t.Errorf("%s with %q inserted: %+v, without %+v", c.Name, noise, got, want)
				}
				if du, _ := nr.MatchUsage(c.UserAgent, PathParamsQuery(c.URL)); du != got {
					t.Errorf("%s with %q inserted: MatchUsage decision %+v, Match %+v", c.Name, noise, du, got)
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no conformance cases")
	}
}

func TestDecideUsageAllocs(t *testing.T) {
	r := Parse([]byte(usageRobots()))
	for _, path := range []string{"/ai-ok/page", "/img/a.jpg", "/caf\u00e9", "x"} {
		if a := testing.AllocsPerRun(100, func() { r.MatchUsage("Googlebot", path) }); a != 0 {
			t.Errorf("MatchUsage(%q): %v allocs", path, a)
		}
		if a := testing.AllocsPerRun(100, func() { r.MatchUsage("SomeBot", path) }); a != 0 {
			t.Errorf("MatchUsage(%q): %v allocs", path, a)
		}
	}
}

func TestDecideUsageNil(t *testing.T) {
	var r *Robots
	d, u := r.MatchUsage("bot", "/x")
	if !d.Allowed || u != (Usage{}) {
		t.Errorf("nil Robots: %+v %+v", d, u)
	}
	if v := u.For(aipref.Purpose(7)); v != (UsageStatement{}) {
		t.Errorf("For(out of range) = %+v", v)
	}
}

// FuzzDecideUsage checks that MatchUsage's decision is MatchPath's and
// that a disallowed path has no usage, on any robots.txt and path.
func FuzzDecideUsage(f *testing.F) {
	f.Add(usageRobots(), "FooBot", "/books/x.jpg")
	f.Add("User-agent: *\nDisallow: /a\nContent-Usage: /a* train-ai=n\nContent-Signal: search=no", "x", "/a%41")
	f.Add("Content-Signal: ai-train=no\nUser-agent: a\nContent-Usage: /\nUser-agent: b\nAllow: /$", "b", "robots.txt")
	f.Fuzz(func(t *testing.T, body, agent, path string) {
		r := Parse([]byte(body))
		d, u := r.MatchUsage(agent, path)
		if want := r.MatchPath(agent, path); d != want {
			t.Fatalf("MatchUsage decision %+v, MatchPath %+v", d, want)
		}
		if !d.Allowed && u != (Usage{}) {
			t.Fatalf("disallowed path with usage %+v", u)
		}
		for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
			if v := u.For(p); (v.Pref == aipref.Unknown) != (v.Source == UsageNone) || (v.Line == 0) != (v.Source == UsageNone) {
				t.Fatalf("%s: inconsistent verdict %+v", p, v)
			}
		}
	})
}

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
