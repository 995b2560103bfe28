package robots

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestDecisionReportsRuleAndGroup(t *testing.T) {
	r := Parse([]byte("# comment\nUser-agent: FooBot\nUser-agent: BarBot\nDisallow: /private  # why\nAllow: /private/ok\n\nUser-agent: *\nDisallow: /\n"))
	tests := []struct {
		agent, url string
		want       Match
	}{
		{"foobot", "http://x/private/a", Match{false, Rule{false, "/private", 4}, "FooBot"}},
		{"BARBOT", "http://x/private/ok", Match{true, Rule{true, "/private/ok", 5}, "BarBot"}},
		{"FooBot", "http://x/public", Match{true, Rule{}, "FooBot"}},
		{"other", "http://x/public", Match{false, Rule{false, "/", 8}, "*"}},
		{"other", "http://x/robots.txt", Match{true, Rule{true, "/robots.txt", 0}, "*"}},
		{"other", "http://x/robots.txt?x", Match{false, Rule{false, "/", 8}, "*"}},
		{"", "http://x/a", Match{false, Rule{false, "/", 8}, "*"}},
	}
	for _, tt := range tests {
		if got := r.Match(tt.agent, tt.url); got != tt.want {
			t.Errorf("Match(%q, %q) = %+v, want %+v", tt.agent, tt.url, got, tt.want)
		}
	}
	if got, want := (Rule{false, "/private", 4}).String(), "Disallow: /private"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := Parse(nil).Match("x", "http://x/a"); got != (Match{Allowed: true}) {
		t.Errorf("empty robots.txt: %+v", got)
	}
	var nilRobots *Robots
	if got := nilRobots.Match("x", "/a"); !got.Allowed || nilRobots.Group("x") != nil || nilRobots.AllowsNothing("x") {
		t.Errorf("nil *Robots: %+v", got)
	}
}

func TestDecidePath(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /?a\nDisallow: /x;p\n"))
	for path, allowed := range map[string]bool{"?a": false, "/?a": false, "/x;p": false, ";x": true, "": true, "/": true, "/b": true} {
		if got := r.MatchPath("bot", path).Allowed; got != allowed {
			t.Errorf("MatchPath(%q).Allowed = %v, want %v", path, got, allowed)
		}
	}
	if got := PathParamsQuery("http://a.b?q"); got != "/?q" {
		t.Errorf("PathParamsQuery = %q", got)
	}
}

func TestAllowsNothing(t *testing.T) {
	tests := []struct {
		body string
		want bool
	}{
		{"User-agent: *\nDisallow: /\n", true},
		{"User-agent: *\nDisallow: *\n", true},
		{"User-agent: *\nDisallow: /*\n", true},
		{"User-agent: *\nDisallow: /**\n", true},
		{"User-agent: *\ndisallow /\n", true},
		{"User-agent: *\nDisallow: /\nAllow: foo\n", true}, // can never match
		{"User-agent: *\nDisallow: /*\nAllow: /\n", true},  // "/*" is longer than "/"
		{"User-agent: *\nDisallow: /\nAllow: /\n", false},  // Allow wins the tie
		{"User-agent: *\nDisallow: /\nAllow: /a\n", false},
		{"User-agent: *\nDisallow: /\nAllow: *.html\n", false},
		{"User-agent: *\nDisallow: /\nAllow: /index.html\n", false},
		{"User-agent: *\nDisallow: /$\n", false},
		{"User-agent: *\nDisallow: *a\n", false},
		{"User-agent: *\nDisallow: *a*\n", false},
		{"User-agent: *\nDisallow: */\n", true},
		{"User-agent: *\nDisallow: */*\n", true},
		{"User-agent: *\nDisallow: /%2F\n", false},
		{"User-agent: *\nDisallow: /a\n", false},
		{"User-agent: *\nDisallow:\n", false},
		{"User-agent: *\nDisallow: /\n\nUser-agent: bot\nDisallow: /x\n", false},
		{"User-agent: other\nDisallow: /\n", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := Parse([]byte(tt.body)).AllowsNothing("bot"); got != tt.want {
			t.Errorf("AllowsNothing(%q) = %v, want %v", tt.body, got, tt.want)
		}
	}
}

func TestDecideDoesNotAllocate(t *testing.T) {
	r := Parse([]byte(realisticRobots))
	urls := []string{
		"https://www.example.com/search?q=robots&page=2",
		"https://www.example.com/products/shoes/12345.html",
		"https://www.example.com/caf%C3%A9/menu%2Fdrinks?x=%7e",
		"https://www.example.com/" + strings.Repeat("a", 900),
	}
	for _, u := range urls {
		n := testing.AllocsPerRun(100, func() { r.Match("Googlebot", u) })
		if n != 0 {
			t.Errorf("Match(%.40q) allocates %v times", u, n)
		}
	}
}

// TestConcurrentUse exercises a *Robots from several goroutines; run with
// -race. Group builds a fresh merged rule list on each call.
func TestConcurrentUse(t *testing.T) {
	r := Parse(mergeBomb(20, 50))
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				agent := fmt.Sprintf("t%d", i%20)
				if d := r.MatchPath(agent, fmt.Sprintf("/x%d", i%20)); d.Allowed {
					t.Errorf("%s: %+v", agent, d)
				}
				if g := r.Group(agent); len(g.Rules) != 51 {
					t.Errorf("%s: %d rules", agent, len(g.Rules))
				}
				if i%10 == 0 && len(r.Groups()) != 21 {
					t.Error("Groups changed")
				}
			}
		}()
	}
	wg.Wait()
}
