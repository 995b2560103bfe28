package robots

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// The reference matcher below is deliberately simple: it canonicalises
// pattern and path with its own code (decode every %XX, then write each
// octet back by the RFC 9309 §2.2.2 rules spelt out with the RFC 3986
// character lists: an escaped octet literally when unreserved or '*' or
// '$', else as %XX; a literal octet as is when a URI may hold it, else as
// %XX), and matches with a textbook dynamic-programming glob over the
// canonical strings, with no segment splitting, early exits or index.

// refTok is one token of a pattern: the wildcard or one canonical
// character.
type refTok struct {
	wild bool
	lit  string // canonical text of one octet
}

const (
	refUnreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
	refReserved   = ":/?#[]@!$&'()*+,;="
)

// refOctets returns the octets of s, whether each was given as an escape,
// and whether each is a literal '*' (the wildcard, in a pattern).
func refOctets(s string) (octs []byte, escaped, literalStar []bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		esc := false
		if c == '%' && i+2 < len(s) && strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i+1])) &&
			strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i+2])) {
			var v byte
			for _, h := range s[i+1 : i+3] {
				v <<= 4
				switch {
				case h >= '0' && h <= '9':
					v |= byte(h - '0')
				case h >= 'a' && h <= 'f':
					v |= byte(h-'a') + 10
				default:
					v |= byte(h-'A') + 10
				}
			}
			c, esc = v, true
			i += 2
		}
		octs = append(octs, c)
		escaped = append(escaped, esc)
		literalStar = append(literalStar, c == '*' && !esc)
	}
	return octs, escaped, literalStar
}

func refOctetText(c byte, escaped bool) string {
	literal := c < 0x80 && strings.IndexByte(refUnreserved+refReserved, c) >= 0
	if escaped {
		literal = c < 0x80 && strings.IndexByte(refUnreserved+"*$", c) >= 0
	}
	if literal {
		return string(rune(c))
	}
	return "%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15]))
}

func refCanonPath(path string) string {
	octs, escaped, _ := refOctets(path)
	var sb strings.Builder
	for i, c := range octs {
		sb.WriteString(refOctetText(c, escaped[i]))
	}
	return sb.String()
}

// refMatch reports whether pattern matches path, by the RFC 9309 rules and
// our canonical encoding.
func refMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	octs, escaped, wild := refOctets(pattern)
	var pat []refTok
	for i, c := range octs {
		if wild[i] {
			pat = append(pat, refTok{wild: true})
			continue
		}
		for _, b := range []byte(refOctetText(c, escaped[i])) {
			pat = append(pat, refTok{lit: string(rune(b))})
		}
	}
	text := refCanonPath(path)
	// ok[i][j]: pat[:i] matches text[:j].
	ok := make([][]bool, len(pat)+1)
	for i := range ok {
		ok[i] = make([]bool, len(text)+1)
	}
	ok[0][0] = true
	for i := 1; i <= len(pat); i++ {
		for j := 0; j <= len(text); j++ {
			if pat[i-1].wild {
				ok[i][j] = ok[i-1][j] || j > 0 && ok[i][j-1]
			} else {
				ok[i][j] = j > 0 && ok[i-1][j-1] && text[j-1] == pat[i-1].lit[0]
			}
		}
	}
	if anchored {
		return ok[len(pat)][len(text)]
	}
	for j := 0; j <= len(text); j++ {
		if ok[len(pat)][j] {
			return true
		}
	}
	return false
}

// refDecide decides path against rules the slow way: every rule is tried,
// the longest pattern (octets, non-ASCII counted %-encoded) wins, Allow
// wins ties, the earlier line wins among equals.
func refDecide(rules []Rule, path string) (allowed bool, line int) {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	if refCanonPath(path) == "/robots.txt" {
		return true, 0
	}
	bestPrio, bestAllow, bestLine := 0, true, 0
	consider := func(r Rule, pattern string) {
		if pattern == "" || !refMatch(pattern, path) {
			return
		}
		prio := len(pattern)
		for i := 0; i < len(pattern); i++ {
			if pattern[i] >= 0x80 {
				prio += 2
			}
		}
		if prio > bestPrio || prio == bestPrio && r.Allow && !bestAllow {
			bestPrio, bestAllow, bestLine = prio, r.Allow, r.Line
		}
	}
	for _, r := range rules {
		consider(r, r.Pattern)
		if i := strings.LastIndex(r.Pattern, "/"); r.Allow && i >= 0 && strings.HasPrefix(r.Pattern[i:], "/index.htm") {
			consider(r, r.Pattern[:i+1]+"$")
		}
	}
	return bestAllow, bestLine
}

func TestReferenceMatcher(t *testing.T) {
	for _, tt := range []struct {
		pattern, path string
		want          bool
	}{
		{"/", "/", true}, {"/a", "/", false}, {"/a*c", "/abbbc", true}, {"/a*c$", "/abcx", false},
		{"/a%2A", "/a*", true}, {"/a*", "/a", true}, {"*.gif$", "/x.gif", true}, {"/a$b", "/a$b", true},
	} {
		if got := refMatch(tt.pattern, tt.path); got != tt.want {
			t.Errorf("refMatch(%q, %q) = %v", tt.pattern, tt.path, got)
		}
	}
}

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
		robots := Parse([]byte(sb.String()))
		d := robots.MatchPath("bot", path)
		wantAllowed, wantLine := refDecide(fileRules, path)
		if d.Allowed != wantAllowed || d.Rule.Line != wantLine {
			t.Fatalf("robots.txt:\n%s\npath %q: got allowed=%v line %d, reference allowed=%v line %d",
				sb.String(), path, d.Allowed, d.Rule.Line, wantAllowed, wantLine)
		}
		checkIndexedAtOnce(t, robots, func() Match { return robots.MatchPath("bot", path) }, d)
		// The compiled form decides alike, and so it does with the path
		// indexed from the first pattern on, as a long decision does.
		compiled := parseCompiled([]byte(sb.String()))
		if dc := compiled.MatchPath("bot", path); dc != d {
			t.Fatalf("path %q compiled: %+v, compact %+v\n%s", path, dc, d, sb.String())
		}
		if compiled.ix.Form().Indexed {
			compiled.ix.SetBudget(0)
			if di := compiled.MatchPath("bot", path); di != d {
				t.Fatalf("path %q indexed: %+v, direct %+v\n%s", path, di, d, sb.String())
			}
		}
		if robots.AllowsNothing("bot") && d.Allowed && !(d.Rule.Line == 0 && d.Rule.Pattern == "/robots.txt") {
			t.Fatalf("AllowsNothing but %q is allowed by line %d:\n%s", path, wantLine, sb.String())
		}
		// A full URL decides like its path.
		if path != "" && strings.IndexByte("/?;", path[0]) >= 0 && !strings.Contains(path, "#") {
			if du := robots.Match("bot", "http://h"+path); du != d {
				t.Fatalf("Match(http://h%s) = %+v, MatchPath = %+v\n%s", path, du, d, sb.String())
			}
		}
	})
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
