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

// deviations lists every case whose asserted verdict differs from its
// "allowed" field (Google's verdict), with the reason. The Google cases are
// deliberate deviations, also in the README table "Where robotsgate
// differs from Google's parser, and why"; the RFC cases carry an
// rfc_expects that RFC 9309 requires and Google's parser does not give.
// TestConformance fails on any divergence not named here.
var deviations = map[string]string{
	"ID_Encoding/3": "non-ASCII octets of the URL are percent-encoded before matching (RFC 9309 §2.2.2), so a raw UTF-8 URL matches the rule written in UTF-8",
	"ID_Encoding/5": "non-ASCII octets of the URL are percent-encoded before matching (RFC 9309 §2.2.2), so a raw UTF-8 URL matches the percent-encoded rule",
	"ID_Encoding/6": "percent-encoded unreserved characters are decoded before matching (RFC 9309 §2.2.2, Figure 4), so the rule /foo/bar/%62%61%7A matches /foo/bar/baz",

	"rfc9309/2.2.2/1":          "RFC 9309 §2.2.2: /robots.txt is implicitly allowed even under Disallow: /; Google's matcher has no such exception",
	"rfc9309/2.2.2-figure-4/6": "RFC 9309 Figure 4: percent-encoded unreserved characters of the rule (/foo/bar/%62%61%7A) are decoded before comparison; Google does not decode",
	"rfc9309/2.2.2/6":          "RFC 9309 §2.2.2: percent-encoded unreserved characters of the URL (/foo/bar/%62%61%7A) MUST be decoded before comparison; Google does not decode",
	"rfc9309/2.2.3-figure-6/1": "RFC 9309 Figure 6: %2A in a pattern matches a literal '*' in the URL (the escapes of '*' and '$' are decoded, as a pattern can write them only escaped); Google compares bytes literally",
	"rfc9309/2.2.3-figure-6/4": "RFC 9309 Figure 6: %24 in a pattern matches a literal '$' in the URL; Google compares bytes literally",

	"rfc9309-escapes/reserved-escape/3": "RFC 3986 §2.1: hex digits of an escape compare case-insensitively, so the URL's %2f matches the rule's %2F; Google keeps the URL's hex case",
	"rfc9309-escapes/unsafe-octet/1":    "RFC 9309 §2.2.2: a raw space in the URL is percent-encoded before matching, so it matches the rule's %20; Google compares the raw byte",
	"rfc9309-escapes/unsafe-octet/2":    "RFC 9309 §2.2.2: a '|' in the rule, which a URI may not hold raw, is percent-encoded before matching, so it matches the URL's %7C; Google compares bytes literally",
}

// readings lists every RFC case whose rfc_expects the robots package does
// not assert, with the reason: there it gives Google's verdict, because
// the case's reading of RFC 9309 contradicts the RFC's own rules, and the
// enforce package still refuses the URL by deciding its decoded spelling
// too (TestReservedEscapeSpellings there). TestConformance fails on any
// entry that names no such case.
var readings = map[string]string{
	"rfc9309/2.2.2-figure-4/2": "RFC 9309 §2.2.2 decodes escapes of unreserved characters only: the URL's %3A%2F%2F (escaped reserved characters) stays distinct from the rule's literal ://, as in Google's matcher; Figure 4 row 2 shows a percent-encoded query, not an equivalence of / and %2F. enforce refuses the URL all the same, on its decoded spelling",
}

// want returns the verdict a case must get and why.
func (c confCase) want() (bool, string) {
	if why, ok := readings[c.Name]; ok {
		return c.Allowed, "reading: " + why
	}
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
	for name := range readings {
		unused[name] = true
	}
	for _, file := range []string{"google_robotstxt_cases.json", "seed_and_rfc_cases.json", "rfc9309_escapes_cases.json"} {
		for _, c := range loadCases(t, file) {
			total++
			want, _ := c.want()
			_, named := deviations[c.Name]
			switch {
			case want != c.Allowed && !named:
				t.Errorf("%s: asserted verdict %v differs from allowed %v, but the case is not named in deviations", c.Name, want, c.Allowed)
			case want == c.Allowed && named:
				t.Errorf("%s: named in deviations, but the asserted verdict is the allowed one", c.Name)
			}
			if _, ok := readings[c.Name]; ok && (c.RFCExpects == nil || *c.RFCExpects == c.Allowed) {
				t.Errorf("%s: named in readings, but has no rfc_expects other than allowed", c.Name)
			}
			delete(unused, c.Name)
			t.Run(c.Name, func(t *testing.T) {
				want, why := c.want()
				r := Parse(c.body(t))
				got := r.Match(c.UserAgent, c.URL)
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
		t.Errorf("deviation or reading %q names no conformance case", name)
	}
	t.Logf("%d of %d conformance cases pass (%d with a verdict other than Google's, all named)", pass, total, len(deviations))
}
