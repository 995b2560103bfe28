package tdmrep

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// fuzzFile returns a tdmrep.json of the lines of locs as locations (at
// most 40, of at most 64 octets each), followed by filler rules enough
// for the matcher's filter of segments to be built, and whether locs fit.
func fuzzFile(locs string) ([]byte, bool) {
	lines := strings.Split(locs, "\n")
	if len(lines) > 40 {
		return nil, false
	}
	for i := 0; i < 20; i++ {
		lines = append(lines, "*zq"+strconv.Itoa(i)+"*qz")
	}
	rules := make([]map[string]any, 0, len(lines))
	for _, l := range lines {
		if len(l) > 64 {
			return nil, false
		}
		rules = append(rules, map[string]any{"location": l, "tdm-reservation": 1})
	}
	b, err := json.Marshal(rules)
	return b, err == nil
}

// FuzzFirstRule compares File.Match, the bounded matcher, with refFirst,
// which tries the rules one by one, on files of several rules.
func FuzzFirstRule(f *testing.F) {
	f.Add("/a/*.jpg$\n*.pdf\n/", "/a/b.jpg")
	f.Add("*aaaa00042\n*aaaa*00041\n/b", "/aaaaaaaaa00041")
	f.Add("/%7E*$\n*%24\n/*a*a*a$", "/~x/$")
	f.Add("$\n*$\n*\n", "")
	f.Add("a*\nb\n", "abc")
	f.Fuzz(func(t *testing.T, locs, path string) {
		if len(path) > 512 {
			return
		}
		body, ok := fuzzFile(locs)
		if !ok {
			return
		}
		file, err := Parse(body)
		if err != nil {
			t.Fatal(err)
		}
		got, want := file.Match(path), refFirst(file, path)
		if got != want {
			t.Fatalf("locations %q path %q: %v, reference %v", locs, path, got, want)
		}
	})
}
