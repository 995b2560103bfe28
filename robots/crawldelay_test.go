package robots

import (
	"testing"
	"time"
)

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
