package index

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// segmentsOf reads a pattern as FirstMatch's tests write it: '*' between
// segments, a final '$' anchors.
func segmentsOf(pat string) Segments {
	anchored := strings.HasSuffix(pat, "$")
	if anchored {
		pat = pat[:len(pat)-1]
	}
	return Segments{Segs: strings.Split(pat, "*"), Anchored: anchored}
}

// latin1 spells each octet of s as the rune of the same value, so that
// regular expressions compare octets whatever s holds.
func latin1(s string) string {
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return string(r)
}

// refAll is FirstMatch.AllWork done with one regular expression per
// pattern.
func refAll(pats []Segments, path string) []int {
	var all []int
	for i, s := range pats {
		parts := make([]string, len(s.Segs))
		for k, seg := range s.Segs {
			parts[k] = regexp.QuoteMeta(latin1(seg))
		}
		re := "(?s)^" + strings.Join(parts, ".*")
		if s.Anchored {
			re += "$"
		}
		if regexp.MustCompile(re).MatchString(latin1(path)) {
			all = append(all, i)
		}
	}
	return all
}

// firstMatchCheck compares FirstMatch with the reference on pats and
// path, searching the path directly and through its index.
func firstMatchCheck(t *testing.T, pats []Segments, path string) {
	t.Helper()
	all := refAll(pats, path)
	want := -1
	if len(all) > 0 {
		want = all[0]
	}
	check := func(how string, f *FirstMatch) {
		t.Helper()
		if got := f.Index(path); got != want {
			t.Fatalf("%s: patterns %+v path %q: %d, reference %d", how, pats, path, got, want)
		}
		if got, _ := f.AllWork(path, nil); !slices.Equal(got, all) {
			t.Fatalf("%s: patterns %+v path %q: all %v, reference %v", how, pats, path, got, all)
		}
	}
	f := NewFirstMatch(pats)
	check("direct", f)
	f.idx.budget = 0 // index the path at once
	check("indexed", f)
	f = NewFirstMatch(pats)
	f.idx.eager = 1 // index the path in the filter's scan
	check("indexed eagerly", f)
}

func TestFirstMatch(t *testing.T) {
	pats := []Segments{segmentsOf("/a/*.jpg$"), segmentsOf("/a/"), segmentsOf("*.pdf"), segmentsOf("/a/")}
	for path, want := range map[string]int{"/a/b.jpg": 0, "/a/b.jpg?x": 1, "/x.pdf": 2, "/b": -1, "": -1} {
		if got := NewFirstMatch(pats).Index(path); got != want {
			t.Errorf("%q: %d, want %d", path, got, want)
		}
	}
	// Enough patterns for the index by second octet and the filter of
	// segments, the first match decided by order, not length.
	var many []Segments
	for i := range 40 {
		many = append(many, segmentsOf("/x"+strconv.Itoa(i)+"*ab*cd"+strconv.Itoa(i%7)))
	}
	many = append(many, segmentsOf("*ab*cd3$"), segmentsOf("/x1*ab"), segmentsOf("$"), segmentsOf("*$"), segmentsOf("a*"),
		segmentsOf("/x1*ab"), segmentsOf("*ab*cd3$"), segmentsOf("/x10*ab*cd3"))
	for _, path := range []string{"/x10abcd3", "/x1ab", "/x1abcd3", "/yabcd3", "", "abc", "/x3" + strings.Repeat("ab", 300) + "cd3"} {
		firstMatchCheck(t, many, path)
	}
}

// FuzzFirstMatch compares FirstMatch, on the path as given and indexed,
// with one regular expression per pattern; the patterns are the lines of
// pats, then filler patterns enough for the filter of segments.
func FuzzFirstMatch(f *testing.F) {
	f.Add("/a*b$\n*ab\n", "/aab")
	f.Add("*q*qAb*qBa\n*qAb*q\n", "/qBaqAbq")
	f.Add("$\n*$\na*", "")
	f.Fuzz(func(t *testing.T, pats, path string) {
		lines := strings.Split(pats, "\n")
		if len(lines) > 40 || len(path) > 512 || len(pats) > 1024 {
			return
		}
		var ss []Segments
		for _, l := range lines {
			ss = append(ss, segmentsOf(l))
		}
		for i := range 20 {
			ss = append(ss, segmentsOf("*zq"+strconv.Itoa(i)+"*qz"))
		}
		firstMatchCheck(t, ss, path)
	})
}
