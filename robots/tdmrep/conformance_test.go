package tdmrep_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/robots/robottag"
	"github.com/robotsgate/robotsgate/robots/tdmrep"
)

// confCase is one case of testdata/conformance.json: an example of the
// TDMRep report (or a sentence of its text), with the section it comes
// from.
type confCase struct {
	Name        string              `json:"name"`
	Source      string              `json:"source"`
	Kind        string              `json:"kind"` // file, header, meta, policy
	File        string              `json:"file"`
	URL         string              `json:"url"`
	Header      map[string][]string `json:"header"`
	HTML        string              `json:"html"`
	Reservation string              `json:"reservation"` // 1, 0 or unset
	Policy      string              `json:"policy"`
	Rule        int                 `json:"rule"` // the matching rule, 0 when none
	Notes       string              `json:"notes"`
}

func loadConformance(t *testing.T) []confCase {
	t.Helper()
	b, err := os.ReadFile("testdata/conformance.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []confCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestConformance checks every example of the TDMRep report.
func TestConformance(t *testing.T) {
	cs := loadConformance(t)
	if len(cs) < 40 {
		t.Fatalf("only %d cases", len(cs))
	}
	for _, c := range cs {
		t.Run(c.Name, func(t *testing.T) {
			if !strings.Contains(c.Source, "tdmrep.md") {
				t.Fatalf("case without its source: %q", c.Source)
			}
			var v tdmrep.Verdict
			switch c.Kind {
			case "file":
				v = fileCase(t, c)
			case "header":
				v, _ = tdmrep.ParseHeader(c.Header["tdm-reservation"], c.Header["tdm-policy"])
			case "meta":
				h, err := robottag.ParseHead(strings.NewReader(c.HTML), "tdm-reservation", "tdm-policy")
				if err != nil {
					t.Fatal(err)
				}
				res, ok := h.Named["tdm-reservation"]
				v, _ = tdmrep.ParseMeta(res, ok, h.Named["tdm-policy"])
			case "policy":
				if _, err := tdmrep.Parse([]byte(c.File)); !errors.Is(err, tdmrep.ErrInvalid) {
					t.Fatalf("a TDM Policy parsed as tdmrep.json: %v", err)
				}
			default:
				t.Fatalf("unknown kind %q", c.Kind)
			}
			if got := v.Reservation.String(); got != c.Reservation {
				t.Errorf("reservation %s, want %s (%+v)", got, c.Reservation, v)
			}
			if v.Policy != c.Policy {
				t.Errorf("policy %q, want %q", v.Policy, c.Policy)
			}
		})
	}
}

// fileCase parses c's tdmrep.json and decides c's URL, checking the rule
// that matched.
func fileCase(t *testing.T, c confCase) tdmrep.Verdict {
	t.Helper()
	f, err := tdmrep.Parse([]byte(c.File))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	r := f.Match(u.RequestURI())
	n := 0
	if r != nil {
		n = r.N
	}
	if n != c.Rule {
		t.Errorf("rule %d matched, want %d", n, c.Rule)
	}
	return f.Decide(u.RequestURI())
}
