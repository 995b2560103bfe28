package robots

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestAgentTokensWithDigits is the MJ12bot deviation: Google cuts a
// user-agent line "MJ12bot" to "MJ", so that group never applies to
// MJ12bot. robotsgate keeps digits in tokens.
func TestAgentTokensWithDigits(t *testing.T) {
	r := Parse([]byte("User-agent: MJ12bot\nDisallow: /\n\nUser-agent: 360Spider/2.0\nDisallow: /s\n\nUser-agent: *\nDisallow: /private\n"))
	tests := []struct {
		agent   string
		path    string
		allowed bool
		group   string
	}{
		{"MJ12bot", "/a", false, "MJ12bot"},
		{"mj12bot", "/a", false, "MJ12bot"},
		{"MJ", "/a", true, "*"},
		{"360spider", "/s", false, "360Spider"},
		{"Spider", "/s", true, "*"},
	}
	for _, tt := range tests {
		d := r.MatchPath(tt.agent, tt.path)
		if d.Allowed != tt.allowed || d.Group != tt.group {
			t.Errorf("MatchPath(%q, %q) = %+v, want allowed %v group %q", tt.agent, tt.path, d, tt.allowed, tt.group)
		}
	}
	for ua, want := range map[string]string{
		"MJ12bot/v1.4.8 (http://mj12bot.com/)":    "MJ12bot",
		"MyBot/2.1 (+https://x)":                  "MyBot",
		"Googlebot-Image/1.0":                     "Googlebot-Image",
		"Mozilla/5.0 (compatible; Googlebot/2.1)": "Mozilla",
		"foo_bar baz":                             "foo_bar",
		"/2.0":                                    "",
		"":                                        "",
	} {
		if got := ProductToken(ua); got != want {
			t.Errorf("ProductToken(%q) = %q, want %q", ua, got, want)
		}
	}
}

func TestGroupsMerged(t *testing.T) {
	body := "User-agent: a\nUser-agent: b\nDisallow: /1\n" +
		"User-agent: *\nDisallow: /star\nCrawl-delay: 2\n" +
		"User-agent: A\nDisallow: /2\nCrawl-delay: 0.5\n" +
		"User-agent: c\n" +
		"User-agent: d\nSitemap: https://x/s.xml\nHost: x\nDisallow: /d\n"
	r := Parse([]byte(body))
	var got [][]string
	for _, g := range r.Groups() {
		got = append(got, g.Agents)
	}
	// Groups are as written: A's own group is not merged with a's.
	want := [][]string{{"a", "b"}, {"*"}, {"A"}, {"c", "d"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Groups agents = %q, want %q", got, want)
	}
	gs := r.Groups()
	if len(gs[0].Rules) != 1 || gs[0].Rules[0].Pattern != "/1" || gs[0].CrawlDelay != 0 ||
		len(gs[2].Rules) != 1 || gs[2].Rules[0].Pattern != "/2" || gs[2].CrawlDelay != 500*time.Millisecond ||
		gs[1].CrawlDelay != 2*time.Second || len(gs[3].Rules) != 1 {
		t.Errorf("Groups = %+v %+v %+v %+v", gs[0], gs[1], gs[2], gs[3])
	}
	a := r.Group("A")
	if a == nil || len(a.Rules) != 2 || a.Rules[0].Pattern != "/1" || a.Rules[1].Pattern != "/2" || a.CrawlDelay != 500*time.Millisecond {
		t.Errorf("Group(A) = %+v", a)
	}
	if b := r.Group("b"); b == nil || len(b.Rules) != 1 || b.CrawlDelay != 0 {
		t.Errorf("Group(b) = %+v", b)
	}
	if s := r.Group("nobody"); s == nil || s.Agents[0] != "*" || s.CrawlDelay != 2*time.Second {
		t.Errorf("Group(nobody) = %+v", s)
	}
	// c names a group that also names d: it has d's rule.
	if d := r.MatchPath("c", "/d"); d.Allowed || d.Group != "c" {
		t.Errorf("c /d: %+v", d)
	}
	if !reflect.DeepEqual(r.Sitemaps(), []string{"https://x/s.xml"}) {
		t.Errorf("Sitemaps = %q", r.Sitemaps())
	}
	if !reflect.DeepEqual(r.Extensions(), []Extension{{"Host", "x", 13}}) {
		t.Errorf("Extensions = %+v", r.Extensions())
	}

	// A group that names the agent but has no rules beats "*".
	r = Parse([]byte("User-agent: *\nDisallow: /\n\nUser-agent: FooBot\n"))
	if d := r.MatchPath("foobot", "/x"); !d.Allowed || d.Group != "FooBot" {
		t.Errorf("empty named group: %+v", d)
	}
	if r.AllowsNothing("FooBot") || !r.AllowsNothing("other") {
		t.Error("AllowsNothing wrong for empty named group")
	}
	// No group at all.
	r = Parse([]byte("Disallow: /\nUser-agent: FooBot\nDisallow: /x\n"))
	if g := r.Group("other"); g != nil {
		t.Errorf("Group(other) = %+v, want nil", g)
	}
	if d := r.MatchPath("other", "/x"); !d.Allowed || d.Group != "" {
		t.Errorf("no group: %+v", d)
	}
}

// TestGroupsAreCopies checks that changing a returned Group changes
// nothing in the Robots.
func TestGroupsAreCopies(t *testing.T) {
	r := Parse([]byte("User-agent: bot\nDisallow: /a\nUser-agent: bot\nDisallow: /b\n"))
	g := r.Group("bot")
	g.Rules[0].Pattern = "/changed"
	g.Agents[0] = "changed"
	for _, g := range r.Groups() {
		g.Rules[0].Pattern = "/changed"
		g.Agents[0] = "changed"
	}
	d := r.MatchPath("bot", "/a")
	if d.Allowed || d.Rule.Pattern != "/a" || d.Group != "bot" {
		t.Errorf("decision after editing groups: %+v", d)
	}
	if g := r.Group("bot"); g.Rules[0].Pattern != "/a" || g.Agents[0] != "bot" {
		t.Errorf("Group after editing: %+v", g)
	}
	if gs := r.Groups(); gs[0].Rules[0].Pattern != "/a" || gs[1].Agents[0] != "bot" {
		t.Errorf("Groups after editing: %+v %+v", gs[0], gs[1])
	}
	// The groups of Groups share one backing array: appending to one
	// must not overwrite the next.
	gs := r.Groups()
	_ = append(gs[0].Rules, Rule{Pattern: "/x"})
	if gs[1].Rules[0].Pattern != "/b" {
		t.Errorf("append to Groups()[0].Rules overwrote Groups()[1]: %+v", gs[1])
	}
}

// TestGroupsMergeBombIsLinear checks that Groups allocates in proportion
// to the file, not to agents times merged rules, on a file in which every
// agent heads one big group and also has a small one of its own.
func TestGroupsMergeBombIsLinear(t *testing.T) {
	body := mergeBomb(500, 2000)
	r := Parse(body)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	gs := r.Groups()
	runtime.ReadMemStats(&after)
	if len(gs) != 501 {
		t.Fatalf("%d groups", len(gs))
	}
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(8*len(body)); got > limit {
		t.Errorf("Groups allocated %d bytes for a %d-byte file (limit %d)", got, len(body), limit)
	}
	if n := testing.AllocsPerRun(5, func() { r.CrawlDelay("t7") }); n != 0 {
		t.Errorf("CrawlDelay allocates %v times", n)
	}
}

func TestLongAndOddAgents(t *testing.T) {
	long := strings.Repeat("Ab", 50)
	r := Parse([]byte("User-agent: " + long + "\nDisallow: /\nUser-agent: *\nAllow: /\n"))
	if d := r.MatchPath(strings.ToLower(long), "/x"); d.Allowed || d.Group != long {
		t.Errorf("long agent: %+v", d)
	}
	// U+212A KELVIN SIGN lower-cases to 'k' in Unicode; it must not match.
	r = Parse([]byte("User-agent: k" + strings.Repeat("x", 70) + "\nDisallow: /\n"))
	if d := r.MatchPath("\u212A"+strings.Repeat("x", 70), "/x"); !d.Allowed {
		t.Errorf("Kelvin sign matched: %+v", d)
	}
	r = Parse([]byte("User-agent: Foo Bar\nDisallow: /\n"))
	for _, a := range []string{"Foo Bar", "Bar", "FooBar", ""} {
		if !r.MatchPath(a, "/x").Allowed {
			t.Errorf("agent %q matched the group of \"Foo Bar\"", a)
		}
	}
	if r.MatchPath("foo", "/x").Allowed {
		t.Error("agent foo did not match the group of \"Foo Bar\"")
	}
}

// mergeBomb returns a robots.txt in which each of k agents heads one big
// group of n rules and also a small group of its own, so that every agent
// has a different merged group of n+1 rules.
func mergeBomb(k, n int) []byte {
	var sb strings.Builder
	for i := 0; i < k; i++ {
		fmt.Fprintf(&sb, "User-agent: t%d\n", i)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "Disallow: /r%d$\n", i)
	}
	for i := 0; i < k; i++ {
		fmt.Fprintf(&sb, "User-agent: t%d\nDisallow: /x%d$\n", i, i)
	}
	return []byte(sb.String())
}

// TestMergeBombIsLinear checks that merging shares the compiled groups as
// written instead of copying their rules once per agent.
func TestMergeBombIsLinear(t *testing.T) {
	const k, n = 2000, 5000
	r := Parse(mergeBomb(k, n))
	groups := r.groups
	if len(groups) != k {
		t.Fatalf("%d merged groups, want %d", len(groups), k)
	}
	big := r.parts(&groups[0])[0]
	for i := range groups {
		g := &groups[i]
		if ps := r.parts(g); len(ps) != 2 || ps[0] != big {
			t.Fatalf("group %v does not share the big group's compiled rules", r.mergedAgents(g))
		}
	}
	if gs := r.Groups(); len(gs) != k+1 || len(gs[0].Agents) != k || len(gs[0].Rules) != n || len(gs[1].Rules) != 1 {
		t.Errorf("Groups: %d groups as written, want %d", len(gs), k+1)
	}
	for _, tt := range []struct {
		agent, path string
		allowed     bool
		line        int
	}{
		{"t7", "/r4999", false, k + n},
		{"t7", "/x7", false, k + n + 2*7 + 2},
		{"t7", "/x8", true, 0},
		{"other", "/r1", true, 0},
	} {
		if d := r.MatchPath(tt.agent, tt.path); d.Allowed != tt.allowed || d.Rule.Line != tt.line {
			t.Errorf("MatchPath(%q, %q) = %+v, want allowed %v line %d", tt.agent, tt.path, d, tt.allowed, tt.line)
		}
	}
	if g := r.Group("T7"); len(g.Rules) != n+1 || g.Rules[n].Pattern != "/x7$" {
		t.Errorf("Group(T7) has %d rules", len(g.Rules))
	}
}
