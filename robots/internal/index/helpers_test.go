package index

import (
	"encoding/json"
	"os"
	"testing"
)

// escapeCases reads the escape_pattern section of package robots'
// testdata/google_robotstxt_helpers.json.
func escapeCases(t *testing.T) []struct{ Name, Input, Expected string } {
	t.Helper()
	b, err := os.ReadFile("../../testdata/google_robotstxt_helpers.json")
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		EscapePattern struct {
			Cases []struct{ Name, Input, Expected string }
		} `json:"escape_pattern"`
	}
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	if len(h.EscapePattern.Cases) == 0 {
		t.Fatal("the escape_pattern section is missing")
	}
	return h.EscapePattern.Cases
}

// TestHelpersEscapePattern checks the canonical form of rule values against
// Google's MaybeEscapePattern expectations: they coincide on every case
// (our form additionally decodes escapes of unreserved characters and
// percent-encodes octets a URI may not hold raw).
func TestHelpersEscapePattern(t *testing.T) {
	for _, c := range escapeCases(t) {
		if got := string(appendCanon(nil, c.Input)); got != c.Expected {
			t.Errorf("%s: canonical(%q) = %q, want %q", c.Name, c.Input, got, c.Expected)
		}
		m := compile(c.Input, false, 0)
		if got := string(m.lit); len(m.ends) != 1 || got != c.Expected {
			t.Errorf("%s: compiled %q = %q (%d segments), want %q", c.Name, c.Input, got, len(m.ends), c.Expected)
		}
	}
}
