package rsl

import (
	"errors"
	"testing"
)

// FuzzParse checks that no body makes Parse panic, or return both a
// document and an error, and that a parsed document decides every use
// without panicking; a prohibition stays one when more uses are asked.
// Corpus: testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte(doc(`<content url="/"><license><permits type="usage">search</permits></license></content>`)), "/a")
	f.Add([]byte(doc(`<content url="/*.pdf$" server="https://ls.example"><license><prohibits type="usage">ai-all</prohibits><payment type="crawl"/></license></content>`)), "/x.pdf")
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		d, err := Parse(body)
		if (d == nil) == (err == nil) {
			t.Fatalf("Parse returned %v and %v", d, err)
		}
		if err != nil {
			if !errors.Is(err, ErrNotRSL) && !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrTooComplex) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		for u := Uses(1); u <= UseSearch; u <<= 1 {
			v := d.Decide(siteOrigin, path, u)
			if v.State == Prohibited {
				if w := d.Decide(siteOrigin, path, u|UseSearch|UseAITrain); w.State != Prohibited {
					t.Fatalf("%v prohibited alone, %v with more uses", u, w.State)
				}
			}
		}
	})
}
