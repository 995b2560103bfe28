package robots

import (
	"testing"
)

func TestPercentEncodingEquivalence(t *testing.T) {
	tests := []struct {
		rule, path string
		match      bool
	}{
		// Escaped reserved characters are not the characters (RFC
		// 9309 §2.2.2); hex case does not matter.
		{"/a%2Fb", "/a/b", false},
		{"/a/b", "/a%2fb", false},
		{"/a%2Fb", "/a%2fb", true},
		{"/a%2fb", "/a%2Fb", true},
		{"/*%2F*", "/a/b//c", false},
		{"/*%2F*", "/a%2fb", true},
		{"/http%3A%2F%2Fexample.org", "/http://example.org", false},
		{"/http://example.org", "/http%3A%2F%2Fexample.org", false},
		{"/q?a%3Db", "/q?a=b", false},
		{"/q?a=b", "/q?a%3db", false},
		{"/a%3Bb", "/a;b", false},
		{"/a%3bb", "/a%3Bb", true},
		// Octets a URI may not hold raw are compared percent-encoded.
		{"/a%5Cb", "/a\\b", true},
		{"/a\\b", "/a%5cb", true},
		{"/a|b", "/a%7Cb", true},
		{"/a%7c", "/a|", true},
		{"/a<b>", "/a%3C%3E", false},
		{"/a<b>", "/a%3Cb%3E", true},
		{"/a\"b^`{}", "/a%22b%5E%60%7B%7D", true},
		{"/a%00", "/a\x00", true},
		{"/a%7F", "/a\x7f", true},
		{"/%7Euser", "/~user", true},
		{"/~user", "/%7euser", true},
		{"/caf%c3%a9", "/café", true},
		{"/café", "/caf%C3%A9", true},
		{"/a%20b", "/a b", true},
		{"/a%aa", "/a%aa", true},
		{"/a%AA", "/a%aa", true},
		{"/a%25", "/a%", true},
		{"/a%25", "/a%2", true}, // "%2" is a literal '%' then '2'
		{"/a%2541", "/aA", false},
		{"/a%2A", "/a*", true},
		{"/a%2A", "/ab", false},
		{"/a*", "/ab", true},
		{"/a%24", "/a$", true},
		{"/a%24", "/a", false},
		{"/a$", "/a", true},
		{"/a$", "/a$", false},
		{"/a$b", "/a$b", true},
		{"/earn$*", "/earn$x", true},
		{"/earn$*", "/earn", false},
	}
	for _, tt := range tests {
		r := Parse([]byte("User-agent: *\nDisallow: " + tt.rule + "\n"))
		if got := !r.MatchPath("bot", tt.path).Allowed; got != tt.match {
			t.Errorf("rule %q path %q: match = %v, want %v", tt.rule, tt.path, got, tt.match)
		}
	}
}
