package robots

import (
	"slices"
	"testing"
)

// TestNewPatternMatch checks that robots.txt patterns as written match
// [CanonicalPath] of a path as a rule of [Parse] matches the path.
func TestNewPatternMatch(t *testing.T) {
	pats := []string{"/a", "/a$", "*%2A*", "/%61*b$", "/\u00e9", "*", "$", "/a*$", "/x%2Fy", "/a b", "", "/%24", "/q?x=*"}
	paths := []string{"", "/", "a", "/a", "/ab", "/*x", "/%2A", "/%61xb", "/axb", "/\u00e9", "/%C3%A9", "/x/y", "/x%2fy",
		"/a%20b", "/a b", "/$", "/%24", "/q?x=1", "/robots.txt"}
	f := NewPatternMatch(pats)
	for _, p := range paths {
		got, _ := f.AllWork(CanonicalPath(p), nil)
		var want []int
		for i, pat := range pats {
			if pat != "" && !Parse([]byte("User-agent: *\nDisallow: "+pat+"\n")).MatchPath("*", p).Allowed {
				want = append(want, i)
			}
		}
		if p == "/robots.txt" {
			want = []int{5} // "*", which Robots.MatchPath never applies to /robots.txt
		}
		if !slices.Equal(got, want) {
			t.Errorf("path %q: %v, robots.txt rules %v", p, got, want)
		}
	}
}
