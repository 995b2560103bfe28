package robots

import (
	"strings"
	"testing"
)

// TestParseLimitNoLineBreak checks that a limit inside the first line
// keeps nothing of it.
func TestParseLimitNoLineBreak(t *testing.T) {
	body := "Sitemap: https://example.com/sitemap.xml\nUser-agent: *\nDisallow: /\n"
	for n := 1; n < len("Sitemap: https://example.com/sitemap.xml"); n++ {
		if r := ParseLimit([]byte(body), n); r.Sitemaps() != nil || r.Extensions() != nil || r.Groups() != nil {
			t.Fatalf("limit %d: kept part of the first line: %q", n, r.Sitemaps())
		}
	}
	if s := ParseLimit([]byte(body), len("Sitemap: https://example.com/sitemap.xml")).Sitemaps(); len(s) != 1 {
		t.Errorf("a line ending at the limit was dropped: %q", s)
	}
}

func TestLimits(t *testing.T) {
	body := "User-agent: *\nDisallow: /private\n"
	// The limit inside the second line: that line is dropped, not cut.
	for n := len("User-agent: *\n"); n < len(body)-1; n++ {
		if d := ParseLimit([]byte(body), n).MatchPath("bot", "/p"); !d.Allowed {
			t.Errorf("limit %d: a partial rule applied: %+v", n, d)
		}
	}
	for _, n := range []int{len(body) - 1, len(body), 0, -1} {
		if d := ParseLimit([]byte(body), n).MatchPath("bot", "/private"); d.Allowed {
			t.Errorf("limit %d: rule lost", n)
		}
	}
	// Past DefaultMaxBytes nothing is read.
	big := body + "# " + strings.Repeat("x", DefaultMaxBytes) + "\nDisallow: /late\n"
	if d := Parse([]byte(big)).MatchPath("bot", "/late"); !d.Allowed {
		t.Errorf("a rule past DefaultMaxBytes applied: %+v", d)
	}
	// Lines are cut after 16663 bytes, and the cut rule still applies.
	long := "/" + strings.Repeat("a", 20000)
	r := Parse([]byte("User-agent: *\nDisallow: " + long + "\n"))
	rule := r.Group("bot").Rules[0]
	if want := maxLineLen - len("Disallow: "); len(rule.Pattern) != want {
		t.Errorf("cut pattern has %d bytes, want %d", len(rule.Pattern), want)
	}
	if r.MatchPath("bot", long[:len(rule.Pattern)]).Allowed {
		t.Error("cut rule does not apply")
	}
}

func TestLineParsing(t *testing.T) {
	tests := []struct {
		body, path string
		allowed    bool
	}{
		{"\xEF\xBB\xBFUser-agent: *\nDisallow: /a\n", "/a", false},
		{"User-agent: *\rDisallow: /a\r", "/a", false},
		{"user-AGENT: *\r\nDISALLOW: /a\r\n", "/a", false},
		{"User-agent: *\nDisallow: /a\x00junk\n", "/a", false},
		{"User-agent: *\nDisallow: /a\x00\nDisallow: /b\n", "/b", false},
		{"User-agent: *\nDissallow: /a\n", "/a", false},
		{"User-agent: *\nDisallow /a\n", "/a", false},
		{"User-agent: *\nDisallow /a b\n", "/a", true},
		{"User agent: *\nDisallow: /a\n", "/a", false},
		{"User-agent *\nDisallow: /a\n", "/a", false},
		{"User-agent: *\n  Disallow :  /a   \n", "/a", false},
		{"User-agent: *\n: /a\n", "/a", true},
		{"User-agent: *\nAllow: /a\n#Disallow: /a\n", "/a", true},
		{"User-agent: *\nDisallow: /a\n\xEF\xBB\xBFDisallow: /b\n", "/b", true},
	}
	for _, tt := range tests {
		if got := Parse([]byte(tt.body)).MatchPath("bot", tt.path).Allowed; got != tt.allowed {
			t.Errorf("%q %s: allowed = %v, want %v", tt.body, tt.path, got, tt.allowed)
		}
	}
}

// TestDuplicateRulesCompiledOnce checks that copies of a rule (same
// compiled form and verdict) are matched once, and that the first copy
// still decides.
func TestDuplicateRulesCompiledOnce(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("User-agent: *\n")
	for i := 0; i < 1000; i++ {
		sb.WriteString("Disallow: *aa*b\nDisallow: /%7Ex\nDisallow: /~x\nAllow: *aa*b\n")
	}
	r := parseCompiled([]byte(sb.String()))
	// "/%7Ex" and "/~x" compile alike but differ in precedence: both kept.
	if n := r.ix.Form().Parts[r.parts(r.globalGroup())[0]].Matchers; n != 4 {
		t.Errorf("%d matchers, want 4", n)
	}
	if d := r.MatchPath("x", "/aab"); !d.Allowed || d.Rule.Line != 5 {
		t.Errorf("/aab: %+v, want allowed by line 5", d)
	}
	if d := r.MatchPath("x", "/~x"); d.Allowed || d.Rule.Line != 3 {
		t.Errorf("/~x: %+v, want disallowed by line 3", d)
	}
}
