package robots

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestDecisionReportsRuleAndGroup(t *testing.T) {
	r := Parse([]byte("# comment\nUser-agent: FooBot\nUser-agent: BarBot\nDisallow: /private  # why\nAllow: /private/ok\n\nUser-agent: *\nDisallow: /\n"))
	tests := []struct {
		agent, url string
		want       Decision
	}{
		{"foobot", "http://x/private/a", Decision{false, Rule{false, "/private", 4}, "FooBot"}},
		{"BARBOT", "http://x/private/ok", Decision{true, Rule{true, "/private/ok", 5}, "BarBot"}},
		{"FooBot", "http://x/public", Decision{true, Rule{}, "FooBot"}},
		{"other", "http://x/public", Decision{false, Rule{false, "/", 8}, "*"}},
		{"other", "http://x/robots.txt", Decision{true, Rule{true, "/robots.txt", 0}, "*"}},
		{"other", "http://x/robots.txt?x", Decision{false, Rule{false, "/", 8}, "*"}},
		{"", "http://x/a", Decision{false, Rule{false, "/", 8}, "*"}},
	}
	for _, tt := range tests {
		if got := r.Decide(tt.agent, tt.url); got != tt.want {
			t.Errorf("Decide(%q, %q) = %+v, want %+v", tt.agent, tt.url, got, tt.want)
		}
	}
	if got, want := (Rule{false, "/private", 4}).String(), "Disallow: /private"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := Parse(nil).Decide("x", "http://x/a"); got != (Decision{Allowed: true}) {
		t.Errorf("empty robots.txt: %+v", got)
	}
	var nilRobots *Robots
	if got := nilRobots.Decide("x", "/a"); !got.Allowed || nilRobots.Group("x") != nil || nilRobots.AllowsNothing("x") {
		t.Errorf("nil *Robots: %+v", got)
	}
}

func TestDecidePath(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /?a\nDisallow: /x;p\n"))
	for path, allowed := range map[string]bool{"?a": false, "/?a": false, "/x;p": false, ";x": true, "": true, "/": true, "/b": true} {
		if got := r.DecidePath("bot", path).Allowed; got != allowed {
			t.Errorf("DecidePath(%q).Allowed = %v, want %v", path, got, allowed)
		}
	}
	if got := PathParamsQuery("http://a.b?q"); got != "/?q" {
		t.Errorf("PathParamsQuery = %q", got)
	}
}

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
		d := r.DecidePath(tt.agent, tt.path)
		if d.Allowed != tt.allowed || d.Group != tt.group {
			t.Errorf("DecidePath(%q, %q) = %+v, want allowed %v group %q", tt.agent, tt.path, d, tt.allowed, tt.group)
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
	if d := r.DecidePath("c", "/d"); d.Allowed || d.Group != "c" {
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
	if d := r.DecidePath("foobot", "/x"); !d.Allowed || d.Group != "FooBot" {
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
	if d := r.DecidePath("other", "/x"); !d.Allowed || d.Group != "" {
		t.Errorf("no group: %+v", d)
	}
}

func TestCrawlDelay(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"10": 10 * time.Second, "0.25": 250 * time.Millisecond, "1.": time.Second, ".5": 500 * time.Millisecond,
		"-1": 0, "abc": 0, "1e3": 0, "NaN": 0, "Inf": 0, "": 0, "1.2.3": 0, "99999999999999999999": 0, "0x10": 0,
	} {
		r := Parse([]byte("User-agent: *\nCrawl-delay: " + v + "\nDisallow: /x\n"))
		if got := r.Group("bot").CrawlDelay; got != want {
			t.Errorf("Crawl-delay: %q = %v, want %v", v, got, want)
		}
		if got := r.CrawlDelay("bot"); got != want {
			t.Errorf("CrawlDelay(bot) with Crawl-delay: %q = %v, want %v", v, got, want)
		}
		// An invalid value is kept for display.
		if ext := r.Extensions(); (want == 0) != (len(ext) == 1) || len(ext) == 1 && (ext[0].Key != "Crawl-delay" || ext[0].Value != v || ext[0].Line != 2) {
			t.Errorf("Crawl-delay: %q: Extensions = %+v", v, ext)
		}
	}
}

// TestCrawlDelayLargest checks that the largest Crawl-delay counts, within
// a group and across the groups merged for an agent, and that the
// spellings "crawl delay" and "crawldelay" are read.
func TestCrawlDelayLargest(t *testing.T) {
	body := "User-agent: bot\nCrawl-delay: 5\nCrawl-delay: 2\ncrawl delay: 7\nDisallow: /a\n" +
		"User-agent: other\nCrawldelay: 1\nDisallow: /o\n" +
		"User-agent: BOT\nCRAWLDELAY: 9\nCrawl-delay: x\nDisallow: /z\n" +
		"User-agent: *\nCrawl-delay: 3\n"
	r := Parse([]byte(body))
	for agent, want := range map[string]time.Duration{"bot": 9 * time.Second, "other": time.Second, "x": 3 * time.Second} {
		if got := r.CrawlDelay(agent); got != want {
			t.Errorf("CrawlDelay(%q) = %v, want %v", agent, got, want)
		}
		if got := r.Group(agent).CrawlDelay; got != want {
			t.Errorf("Group(%q).CrawlDelay = %v, want %v", agent, got, want)
		}
	}
	gs := r.Groups()
	if len(gs) != 4 || gs[0].CrawlDelay != 7*time.Second || gs[2].CrawlDelay != 9*time.Second {
		t.Errorf("Groups = %+v", gs)
	}
	if ext := r.Extensions(); len(ext) != 1 || ext[0] != (Extension{"Crawl-delay", "x", 11}) {
		t.Errorf("Extensions = %+v", ext)
	}
	if Parse([]byte("Crawl-delay: 4\nUser-agent: *\n")).CrawlDelay("x") != 0 {
		t.Error("Crawl-delay before any group applied")
	}
	if (*Robots)(nil).CrawlDelay("x") != 0 || Parse([]byte("User-agent: a\nCrawl-delay: 1\n")).CrawlDelay("b") != 0 {
		t.Error("CrawlDelay without a group")
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
	d := r.DecidePath("bot", "/a")
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
		if got := !r.DecidePath("bot", tt.path).Allowed; got != tt.match {
			t.Errorf("rule %q path %q: match = %v, want %v", tt.rule, tt.path, got, tt.match)
		}
	}
}

// TestOctetClasses checks the octet sets of the canonical encoding
// against RFC 3986's lists of unreserved and reserved characters.
func TestOctetClasses(t *testing.T) {
	const (
		unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
		reserved   = ":/?#[]@!$&'()*+,;="
	)
	for c := 0; c < 256; c++ {
		b := byte(c)
		raw := c < 0x80 && strings.IndexByte(unreserved+reserved, b) >= 0
		dec := c < 0x80 && strings.IndexByte(unreserved+"*$", b) >= 0
		if uriRaw(b) != raw || decodedEscape(b) != dec {
			t.Errorf("octet %#02x: uriRaw %v (want %v), decodedEscape %v (want %v)", c, uriRaw(b), raw, decodedEscape(b), dec)
		}
	}
}

func TestLimits(t *testing.T) {
	body := "User-agent: *\nDisallow: /private\n"
	// The limit inside the second line: that line is dropped, not cut.
	for n := len("User-agent: *\n"); n < len(body)-1; n++ {
		if d := ParseLimit([]byte(body), n).DecidePath("bot", "/p"); !d.Allowed {
			t.Errorf("limit %d: a partial rule applied: %+v", n, d)
		}
	}
	for _, n := range []int{len(body) - 1, len(body), 0, -1} {
		if d := ParseLimit([]byte(body), n).DecidePath("bot", "/private"); d.Allowed {
			t.Errorf("limit %d: rule lost", n)
		}
	}
	// Past DefaultMaxBytes nothing is read.
	big := body + "# " + strings.Repeat("x", DefaultMaxBytes) + "\nDisallow: /late\n"
	if d := Parse([]byte(big)).DecidePath("bot", "/late"); !d.Allowed {
		t.Errorf("a rule past DefaultMaxBytes applied: %+v", d)
	}
	// Lines are cut after 16663 bytes, and the cut rule still applies.
	long := "/" + strings.Repeat("a", 20000)
	r := Parse([]byte("User-agent: *\nDisallow: " + long + "\n"))
	rule := r.Group("bot").Rules[0]
	if want := maxLineLen - len("Disallow: "); len(rule.Pattern) != want {
		t.Errorf("cut pattern has %d bytes, want %d", len(rule.Pattern), want)
	}
	if r.DecidePath("bot", long[:len(rule.Pattern)]).Allowed {
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
		if got := Parse([]byte(tt.body)).DecidePath("bot", tt.path).Allowed; got != tt.allowed {
			t.Errorf("%q %s: allowed = %v, want %v", tt.body, tt.path, got, tt.allowed)
		}
	}
}

func TestLongAndOddAgents(t *testing.T) {
	long := strings.Repeat("Ab", 50)
	r := Parse([]byte("User-agent: " + long + "\nDisallow: /\nUser-agent: *\nAllow: /\n"))
	if d := r.DecidePath(strings.ToLower(long), "/x"); d.Allowed || d.Group != long {
		t.Errorf("long agent: %+v", d)
	}
	// U+212A KELVIN SIGN lower-cases to 'k' in Unicode; it must not match.
	r = Parse([]byte("User-agent: k" + strings.Repeat("x", 70) + "\nDisallow: /\n"))
	if d := r.DecidePath("\u212A"+strings.Repeat("x", 70), "/x"); !d.Allowed {
		t.Errorf("Kelvin sign matched: %+v", d)
	}
	r = Parse([]byte("User-agent: Foo Bar\nDisallow: /\n"))
	for _, a := range []string{"Foo Bar", "Bar", "FooBar", ""} {
		if !r.DecidePath(a, "/x").Allowed {
			t.Errorf("agent %q matched the group of \"Foo Bar\"", a)
		}
	}
	if r.DecidePath("foo", "/x").Allowed {
		t.Error("agent foo did not match the group of \"Foo Bar\"")
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
		n := testing.AllocsPerRun(100, func() { r.Decide("Googlebot", u) })
		if n != 0 {
			t.Errorf("Decide(%.40q) allocates %v times", u, n)
		}
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
	big := groups[0].parts[0]
	for _, g := range groups {
		if len(g.parts) != 2 || g.parts[0] != big {
			t.Fatalf("group %v does not share the big group's compiled rules", g.agents)
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
		if d := r.DecidePath(tt.agent, tt.path); d.Allowed != tt.allowed || d.Rule.Line != tt.line {
			t.Errorf("DecidePath(%q, %q) = %+v, want allowed %v line %d", tt.agent, tt.path, d, tt.allowed, tt.line)
		}
	}
	if g := r.Group("T7"); len(g.Rules) != n+1 || g.Rules[n].Pattern != "/x7$" {
		t.Errorf("Group(T7) has %d rules", len(g.Rules))
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
				if d := r.DecidePath(agent, fmt.Sprintf("/x%d", i%20)); d.Allowed {
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

// TestDuplicateRulesCompiledOnce checks that copies of a rule (same
// compiled form and verdict) are matched once, and that the first copy
// still decides.
func TestDuplicateRulesCompiledOnce(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("User-agent: *\n")
	for i := 0; i < 1000; i++ {
		sb.WriteString("Disallow: *aa*b\nDisallow: /%7Ex\nDisallow: /~x\nAllow: *aa*b\n")
	}
	r := Parse([]byte(sb.String()))
	// "/%7Ex" and "/~x" compile alike but differ in precedence: both kept.
	if n := len(r.global.parts[0].matchers); n != 4 {
		t.Errorf("%d matchers, want 4", n)
	}
	if d := r.DecidePath("x", "/aab"); !d.Allowed || d.Rule.Line != 5 {
		t.Errorf("/aab: %+v, want allowed by line 5", d)
	}
	if d := r.DecidePath("x", "/~x"); d.Allowed || d.Rule.Line != 3 {
		t.Errorf("/~x: %+v, want disallowed by line 3", d)
	}
}
