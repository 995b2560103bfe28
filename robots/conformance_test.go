package robots

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"
)

// confCase is one case of the conformance JSON files (testdata/README.md).
type confCase struct {
	Name         string  `json:"name"`
	Robots       *string `json:"robots"`
	RobotsBase64 string  `json:"robots_base64"`
	UserAgent    string  `json:"user_agent"`
	URL          string  `json:"url"`
	Allowed      bool    `json:"allowed"`
	Category     string  `json:"category"`
	Notes        string  `json:"notes"`
	SeedExpects  *bool   `json:"seed_expects"`
	RFCExpects   *bool   `json:"rfc_expects"`
}

func (c confCase) body(t *testing.T) []byte {
	t.Helper()
	if c.Robots != nil {
		return []byte(*c.Robots)
	}
	b, err := base64.StdEncoding.DecodeString(c.RobotsBase64)
	if err != nil {
		t.Fatalf("%s: robots_base64: %v", c.Name, err)
	}
	return b
}

func loadCases(t *testing.T, file string) []confCase {
	t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var cs []confCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return cs
}

// deviations lists the Google cases where robotsgate deliberately returns
// the opposite of Google's verdict, with the reason. Each is also in the
// README table "Where robotsgate differs from Google's parser, and why".
var deviations = map[string]string{
	"ID_Encoding/3": "non-ASCII octets of the URL are percent-encoded before matching (RFC 9309 §2.2.2), so a raw UTF-8 URL matches the rule written in UTF-8",
	"ID_Encoding/5": "non-ASCII octets of the URL are percent-encoded before matching (RFC 9309 §2.2.2), so a raw UTF-8 URL matches the percent-encoded rule",
	"ID_Encoding/6": "percent-encoded unreserved characters are decoded before matching (RFC 9309 §2.2.2, Figure 4), so the rule /foo/bar/%62%61%7A matches /foo/bar/baz",
}

// want returns the verdict a case must get and why.
func (c confCase) want() (bool, string) {
	switch {
	case c.RFCExpects != nil:
		return *c.RFCExpects, "rfc_expects"
	case c.SeedExpects != nil:
		return *c.SeedExpects, "seed_expects"
	}
	if why, ok := deviations[c.Name]; ok {
		return !c.Allowed, "deviation: " + why
	}
	return c.Allowed, "allowed"
}

func TestConformance(t *testing.T) {
	pass, total := 0, 0
	unused := map[string]bool{}
	for name := range deviations {
		unused[name] = true
	}
	for _, file := range []string{"google_robotstxt_cases.json", "seed_and_rfc_cases.json"} {
		for _, c := range loadCases(t, file) {
			total++
			if _, ok := deviations[c.Name]; ok {
				delete(unused, c.Name)
				if c.Category != "google-specific" || c.RFCExpects != nil || c.SeedExpects != nil {
					t.Errorf("%s: a deviation must be a google-specific case without rfc_expects or seed_expects", c.Name)
				}
			}
			t.Run(c.Name, func(t *testing.T) {
				want, why := c.want()
				r := Parse(c.body(t))
				got := r.Decide(c.UserAgent, c.URL)
				if got.Allowed != want {
					t.Errorf("agent %q url %q: allowed = %v, want %v (%s; category %s)\nrule %q line %d\nbody:\n%s\nnotes: %s",
						c.UserAgent, c.URL, got.Allowed, want, why, c.Category, got.Rule.String(), got.Rule.Line, c.body(t), c.Notes)
					return
				}
				pass++
			})
		}
	}
	for name := range unused {
		t.Errorf("deviation %q names no conformance case", name)
	}
	t.Logf("%d of %d conformance cases pass (%d by deliberate deviation from Google's verdict)", pass, total, len(deviations))
}
