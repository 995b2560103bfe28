package robots

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// crawlerUACases mirrors testdata/crawler_user_agents.json.
type crawlerUACases struct {
	Crawlers []struct {
		Name        string
		Source      string
		UserAgent   string `json:"user_agent"`
		Token       string
		RobotsToken string `json:"robots_token"`
	}
	Browsers []struct {
		Name      string
		UserAgent string `json:"user_agent"`
	}
}

// TestCrawlerTokenRealUserAgents: every documented crawler User-Agent
// gives the crawler's token, and the group the site wrote for the
// crawler's documented robots.txt token applies to it; plain browsers
// give "" and are decided by the "*" group only.
func TestCrawlerTokenRealUserAgents(t *testing.T) {
	b, err := os.ReadFile("testdata/crawler_user_agents.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases crawlerUACases
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases.Crawlers) < 30 || len(cases.Browsers) < 10 {
		t.Fatalf("%d crawler and %d browser cases: the file is incomplete", len(cases.Crawlers), len(cases.Browsers))
	}
	for _, c := range cases.Crawlers {
		if c.Source == "" || c.Token == "" || !ValidAgent(c.Token) {
			t.Errorf("%s: case without source or with an invalid token %q", c.Name, c.Token)
			continue
		}
		got := CrawlerToken(c.UserAgent)
		if got != c.Token {
			t.Errorf("%s: CrawlerToken(%q) = %q, want %q", c.Name, c.UserAgent, got, c.Token)
			continue
		}
		// The site closed everything to this crawler and nothing to others.
		r := Parse([]byte("User-agent: " + c.RobotsToken + "\nDisallow: /\n\nUser-agent: *\nAllow: /\n"))
		if d := r.Match(got, "https://example.com/page"); d.Allowed {
			t.Errorf("%s: the group for %q does not apply to agent %q: %+v", c.Name, c.RobotsToken, got, d)
		}
	}
	for _, c := range cases.Browsers {
		if got := CrawlerToken(c.UserAgent); got != "" {
			t.Errorf("%s: CrawlerToken(%q) = %q, want \"\" (no crawler named)", c.Name, c.UserAgent, got)
		}
	}
}

// TestCrawlerTokenShapes covers the rule's corners beyond real
// User-Agents: comments that never close, nested comments, escapes,
// tokens that are no names, and a browser token whatever its case.
func TestCrawlerTokenShapes(t *testing.T) {
	for ua, want := range map[string]string{
		"Mozilla/5.0 (compatible; BadBot/2.1; +http://example.com/bot)":  "BadBot",
		"MOZILLA/5.0 (COMPATIBLE; BadBot/2.1)":                           "BadBot",
		"Mozilla/5.0 (compatible; BadBot/2.1":                            "BadBot", // never closed
		"Mozilla/5.0 (compatible; (nested; X/1) BadBot/2.1)":             "X",      // nested comments are part of it
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) BadBot":               "BadBot",
		"Mozilla/5.0 (X11; Linux x86_64) like Gecko; compatible; BadBot": "BadBot",
		"Mozilla/5.0 (Linux; Android 10; SM-G981B)":                      "",       // device models need a version
		"Mozilla/5.0 (Macintosh; Lonely Build/1)":                        "",       // Build is a platform detail
		"Mozilla/5.0 (Windows\\) X; BadBot/1)":                           "BadBot", // an escaped ")" keeps the comment open
		"Mozilla/5.0 (a\\) b; BadBot/1) OtherBot/2":                      "BadBot",
		"Mozilla/5.0 (compatible; MSIE 9.0; 360Spider)":                  "360Spider",
		"Mozilla/5.0 (compatible; 9.0; 12; +http://x; help@x; rv:1.0)":   "",
		"Mozilla/5.0 (compatible; ツbot/1.0)":                             "",
		"  \tMyBot/1.0":                                                  "MyBot",
		"MyBot":                                                          "MyBot",
		"Mozilla/5.0 (compatible)) MyBot/1":                              "MyBot",
		"(":                                                              "", ")": "", "\\": "", "/1.0": "", "compatible": "",
		strings.Repeat("(", 10000) + "BadBot/1": "",
	} {
		if got := CrawlerToken(ua); got != want {
			t.Errorf("CrawlerToken(%q) = %q, want %q", ua, got, want)
		}
	}
}

// TestValidAgentOneRule: ValidAgent accepts exactly what ProductToken,
// CrawlerToken and Parse keep, digits included.
func TestValidAgentOneRule(t *testing.T) {
	for agent, want := range map[string]bool{
		"MJ12bot": true, "360Spider": true, "Googlebot-Image": true, "ia_archiver": true,
		"": false, "MyBot/1.0": false, "My Bot": false, "*": false, "bot.example": false, "ツ": false,
	} {
		if got := ValidAgent(agent); got != want {
			t.Errorf("ValidAgent(%q) = %v, want %v", agent, got, want)
		}
		if want && ProductToken(agent) != agent {
			t.Errorf("ProductToken(%q) = %q: a valid agent is not its own product token", agent, ProductToken(agent))
		}
		if want {
			r := Parse([]byte("User-agent: " + agent + "\nDisallow: /\n"))
			if r.Match(agent, "https://example.com/x").Allowed {
				t.Errorf("valid agent %q is not selected by its own group", agent)
			}
		}
	}
}

// FuzzCrawlerToken: for any header value, CrawlerToken returns "" or a
// valid agent that occurs in the value, and never a browser token.
func FuzzCrawlerToken(f *testing.F) {
	f.Add("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/W.X.Y.Z Safari/537.36")
	f.Add("Mozilla/5.0 (a\\) b; (c (d)); compatible, X/1")
	f.Add("curl/8.5.0")
	f.Fuzz(func(t *testing.T, ua string) {
		got := CrawlerToken(ua)
		if got == "" {
			return
		}
		if !ValidAgent(got) || !strings.Contains(ua, got) || isBrowserToken(got) {
			t.Fatalf("CrawlerToken(%q) = %q", ua, got)
		}
	})
}
