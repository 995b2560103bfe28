package robots

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// sanitizeRule makes s a value the parser keeps unchanged.
func sanitizeRule(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '#', '\r', '\n', 0:
			return -1
		}
		return r
	}, s)
	return string(trimSpace([]byte(s)))
}

// FuzzDecide compares Match with refDecide. rules holds one rule per
// line: "A..." is an Allow, anything else a Disallow, the rest of the line
// the pattern. split spreads the rules over 2 or 3 groups naming bot
// (spelled differently), possibly with a group for another agent between
// them; the reference sees the rules of bot's groups concatenated.
func FuzzDecide(f *testing.F) {
	f.Add("D/a*b\nA/a*b$\nD*.gif$", "/aXb", byte(0))
	f.Add("D/\nA/index.html", "/", byte(3))
	f.Add("D/%2A\nA/*", "/*", byte(0x85))
	f.Add("D/caf%C3%A9\nA/café", "/caf%c3%a9", byte(1))
	f.Add("D/a$b\nD/earn$*", "/earn$", byte(2))
	f.Add("A/x\nD/x\nD/*x", "?x", byte(0x47))
	f.Add("D/a**b*c\nA/*a*b*c*", "/abcabc", byte(0xff))
	f.Add("D/a%2fb\nA/a/", "/a/b", byte(6))
	f.Add("D/robots.txt", "/robots.txt", byte(0))
	f.Add("D/*ab*x\nA/*bz\nW", "/ab/xabzq?xz", byte(4))
	f.Add("D/x*ab\nA*a?\nW", "/xa?ab", byte(1))
	f.Add("D/*ab*x\nA/*bz\nA/a*b?z$\nK", "/ab/xabzq?xz", byte(4))
	f.Fuzz(func(t *testing.T, rulesText, path string, split byte) {
		if len(rulesText) > 600 || len(path) > 200 {
			return
		}
		var rules []Rule
		for i, l := range strings.Split(rulesText, "\n") {
			if i >= 20 || l == "" {
				break
			}
			rules = append(rules, Rule{Allow: l[0] == 'A', Pattern: sanitizeRule(l[1:])})
		}
		if len(rules) > 0 {
			rules = padRules(rules, rulesText[len(rulesText)-1])
		}
		body, fileRules := fuzzFile(rules, split)
		robots := Parse([]byte(body))
		d := robots.MatchPath("bot", path)
		wantAllowed, wantLine := refDecide(fileRules, path)
		if d.Allowed != wantAllowed || d.Rule.Line != wantLine {
			t.Fatalf("robots.txt:\n%s\npath %q: got allowed=%v line %d, reference allowed=%v line %d",
				body, path, d.Allowed, d.Rule.Line, wantAllowed, wantLine)
		}
		checkIndexedAtOnce(t, robots, func() Match { return robots.MatchPath("bot", path) }, d)
		// A decision with usage lines shares its search with them, and
		// decides alike.
		if du, _ := robots.MatchUsage("bot", path); du != d {
			t.Fatalf("MatchUsage(%q) = %+v, MatchPath = %+v\n%s", path, du, d, body)
		}
		// The compiled form decides alike, and so it does with the path
		// indexed from the first pattern on, as a long decision does.
		compiled := parseCompiled([]byte(body))
		if dc := compiled.MatchPath("bot", path); dc != d {
			t.Fatalf("path %q compiled: %+v, compact %+v\n%s", path, dc, d, body)
		}
		if compiled.ix.Form().Indexed {
			compiled.ix.SetBudget(0)
			if di := compiled.MatchPath("bot", path); di != d {
				t.Fatalf("path %q indexed: %+v, direct %+v\n%s", path, di, d, body)
			}
		}
		if robots.AllowsNothing("bot") && d.Allowed && !(d.Rule.Line == 0 && d.Rule.Pattern == "/robots.txt") {
			t.Fatalf("AllowsNothing but %q is allowed by line %d:\n%s", path, wantLine, body)
		}
		// A full URL decides like its path.
		if path != "" && strings.IndexByte("/?;", path[0]) >= 0 && !strings.Contains(path, "#") {
			if du := robots.Match("bot", "http://h"+path); du != d {
				t.Fatalf("Match(http://h%s) = %+v, MatchPath = %+v\n%s", path, du, d, body)
			}
		}
	})
}

// fuzzFile writes rules into a robots.txt for FuzzDecide: rule i goes to
// one of 2 or 3 groups naming bot (spelled differently) chosen by split,
// possibly with a group for another agent between them. It returns the
// file and the rules of bot's groups in file order, with their lines.
func fuzzFile(rules []Rule, split byte) (string, []Rule) {
	// Rule i goes to group (i+split>>2)%ng; group g comes after the
	// groups before it, so the file keeps the rules' relative order
	// only per group: the reference gets them in file order.
	ng := 2 + int(split&1)
	spell := []string{"bot", "BOT", "Bot/1.0 (+https://example.com)"}
	var sb strings.Builder
	line := 0
	write := func(s string) {
		sb.WriteString(s + "\n")
		line++
	}
	var fileRules []Rule
	if split&0x40 != 0 {
		write("User-agent: unrelated\nDisallow: /")
		line++
	}
	for g := 0; g < ng; g++ {
		write("User-agent: " + spell[g])
		if g == 1 && split&0x80 != 0 {
			write("User-agent: other")
		}
		n := 0
		for i, r := range rules {
			if (i+int(split>>2))%ng != g {
				continue
			}
			write(r.String())
			r.Line = line
			fileRules = append(fileRules, r)
			n++
		}
		// Another agent's group between bot's (it would join a
		// bot group without rules).
		if n > 0 && split&0x20 != 0 {
			write("User-agent: unrelated\nDisallow: /")
			line++
		}
	}
	return sb.String(), fileRules
}

// FuzzParse parses arbitrary bytes and checks that nothing panics and the
// results are consistent.
//
// padRules pads rules to more than indexMin rules when last is 'I', so
// that the index is used too, or with wildcard rules so that the
// segFilter is ('W') or that the bot's compact parts are keyed ('K').
func padRules(rules []Rule, last byte) []Rule {
	n := map[byte]int{'I': indexMin + 1, 'W': 3 * segFilterMin, 'K': compactWild + 3*segFilterMin}[last]
	for i := 0; len(rules) < n; i++ {
		if last == 'I' {
			rules = append(rules, Rule{Pattern: "/zz-never-" + strings.Repeat("q", len(rules)) + "$"})
			continue
		}
		key := string([]byte{"ab/x"[i%4], "abz?"[i/4%4], "bq"[i/16%2]})[:2+i/32%2]
		rules = append(rules, Rule{Allow: i%3 == 0, Pattern: "*" + key + "*z" + "$"[:i%2]})
	}
	return rules
}

// checkIndexedAtOnce checks that r, parsed as usual, decides as d with
// decide when a decision indexes the path at once: for a file that
// keeps no filter, a decision that builds one and starts over.
func checkIndexedAtOnce(t *testing.T, r *Robots, decide func() Match, d Match) {
	t.Helper()
	if !r.ix.Form().Indexed {
		return
	}
	budget := r.ix.SetBudget(0)
	defer r.ix.SetBudget(budget)
	if di := decide(); di != d {
		t.Fatalf("indexed at once %+v, as usual %+v", di, d)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(realisticRobots), "Googlebot", "https://www.example.com/account/1/settings")
	f.Add([]byte("\xEF\xBBUser-agent: *\rDisallow: /a\r\n\r\nAllow /a/b"), "x", "/a")
	f.Add([]byte("User-agent: *\nDisallow: /\x00\nuser agent: MJ12bot\ndisallow /x\nCrawl-delay: 0.5"), "MJ12bot", "/x?y#z")
	f.Add([]byte("Sitemap: s\nHost: h\nUser-agent: a\nUser-agent: *\nAllow: /index.htm\nDisallow: /*$"), "a", "//h/")
	f.Fuzz(func(t *testing.T, body []byte, agent, rawURL string) {
		r := ParseLimit(body, 4096)
		d := r.Match(agent, rawURL)
		g := r.Group(agent)
		// The compact and the compiled forms agree.
		c := parseMode(cutAtLineEnd(body, 4096), true)
		if dc := c.Match(agent, rawURL); dc != d {
			t.Fatalf("compiled %+v, compact %+v", dc, d)
		}
		checkIndexedAtOnce(t, r, func() Match { return r.Match(agent, rawURL) }, d)
		if gc := c.Group(agent); !reflect.DeepEqual(gc, g) {
			t.Fatalf("compiled group %+v, compact %+v", gc, g)
		}
		if gc, gr := c.Groups(), r.Groups(); !reflect.DeepEqual(gc, gr) {
			t.Fatalf("compiled groups %+v, compact %+v", gc, gr)
		}
		if c.AllowsNothing(agent) != r.AllowsNothing(agent) {
			t.Fatalf("AllowsNothing: compiled %v, compact %v", c.AllowsNothing(agent), r.AllowsNothing(agent))
		}
		switch {
		case g == nil && (d.Group != "" || !d.Allowed):
			t.Fatalf("no group but decision %+v", d)
		case g != nil && d.Group == "":
			t.Fatalf("group %v but decision %+v", g.Agents, d)
		case !d.Allowed && d.Rule.Allow, d.Allowed && d.Rule.Line > 0 && !d.Rule.Allow:
			t.Fatalf("decision %+v contradicts its rule", d)
		}
		if d.Rule.Line > 0 {
			found := false
			for _, rule := range g.Rules {
				found = found || rule == d.Rule
			}
			if !found {
				t.Fatalf("deciding rule %+v not in group %+v", d.Rule, g)
			}
		}
		if r.AllowsNothing(agent) && d.Allowed && !(d.Rule.Line == 0 && d.Rule.Pattern == "/robots.txt") {
			t.Fatalf("AllowsNothing(%q) but %q allowed by %+v", agent, rawURL, d.Rule)
		}
		if g != nil && r.CrawlDelay(agent) != g.CrawlDelay || g == nil && r.CrawlDelay(agent) != 0 {
			t.Fatalf("CrawlDelay(%q) = %v, group %+v", agent, r.CrawlDelay(agent), g)
		}
		// Groups are as written: no more rules than lines.
		nrules := 0
		for _, g := range r.Groups() {
			nrules += len(g.Rules)
			if len(g.Agents) == 0 {
				t.Fatal("group without agents")
			}
			if g.CrawlDelay < 0 {
				t.Fatal("negative crawl-delay")
			}
		}
		if lines := bytes.Count(body, []byte("\n")) + bytes.Count(body, []byte("\r")) + 1; nrules > lines {
			t.Fatalf("Groups holds %d rules for %d lines", nrules, lines)
		}
		_ = r.Sitemaps()
		_ = r.Extensions()
		_ = PathParamsQuery(rawURL)
		_ = ProductToken(agent)
	})
}
