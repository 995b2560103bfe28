package rsl

import "testing"

// TestDecideAll: only contents whose url pattern matches every path, on
// the origin or on none, decide for every URL alike.
func TestDecideAll(t *testing.T) {
	prohibit := func(url string) string {
		return `<rsl xmlns="https://rslstandard.org/rsl"><content url="` + url + `"><license><prohibits type="usage">ai-train</prohibits></license></content></rsl>`
	}
	for _, tc := range []struct {
		name, doc string
		want      State
	}{
		{"slash", prohibit("/"), Prohibited},
		{"slash star", prohibit("/*"), Prohibited},
		{"star", prohibit("*"), Prohibited},
		{"empty url", prohibit(""), Prohibited},
		{"this origin", prohibit("https://example.com/"), Prohibited},
		{"other origin", prohibit("https://other.example/"), None},
		{"some paths", prohibit("/articles/"), None},
		{"anchored root", prohibit("/$"), None},
		{"server", `<rsl xmlns="https://rslstandard.org/rsl"><content url="/" server="https://ls.example/"><license><permits type="usage">all</permits></license></content></rsl>`, Required},
		{"permitted", `<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license><permits type="usage">all</permits></license></content></rsl>`, Permitted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustParse(t, tc.doc)
			if got := d.DecideAll("https://example.com", UseAITrain).State; got != tc.want {
				t.Fatalf("DecideAll = %v, want %v", got, tc.want)
			}
		})
	}
}
