package rsl

import (
	"os"
	"testing"
)

// TestExampleLicense: examples/rsl/license.xml, the complete document of
// docs/usage-preferences.md, parses without a note and decides what its
// comment says.
func TestExampleLicense(t *testing.T) {
	body, err := os.ReadFile("../../examples/rsl/license.xml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(body)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(d.Notes) != 0 || len(d.Contents) != 3 {
		t.Fatalf("%d contents, notes %q; want 3 and none", len(d.Contents), d.Notes)
	}
	for _, tc := range []struct {
		name, path string
		uses       Uses
		want       State
		use        string
		server     string
	}{
		{"articles: search", "/articles/2026/rsl", UseSearch, Permitted, "", ""},
		{"articles: ai-input", "/articles/2026/rsl", UseAIInput, Permitted, "", ""},
		{"articles: ai-train", "/articles/2026/rsl", UseAITrain, Prohibited, "ai-train", ""},
		{"articles: search and ai-train", "/articles/x", UseSearch | UseAITrain, Prohibited, "ai-train", ""},
		{"premium: ai-train", "/premium/report-1", UseAITrain, Required, "ai-train", "https://ls.example.com"},
		{"premium: search", "/premium/report-1", UseSearch, Required, "search", "https://ls.example.com"},
		{"press pdf: ai-train", "/press/kit.pdf", UseAITrain, Permitted, "", ""},
		{"press, not a pdf", "/press/kit.pdf.html", UseAITrain, None, "", ""},
		{"elsewhere", "/about", UseAITrain, None, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := d.Decide("https://example.com", tc.path, tc.uses)
			if v.State != tc.want || v.Use != tc.use || v.Server != tc.server {
				t.Errorf("Decide(%s, %v) = %v %q server %q, want %v %q server %q",
					tc.path, tc.uses, v.State, v.Use, v.Server, tc.want, tc.use, tc.server)
			}
		})
	}
}
