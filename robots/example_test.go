package robots_test

import (
	"fmt"

	"github.com/robotsgate/robotsgate/robots"
)

func ExampleParse() {
	r := robots.Parse([]byte(`User-agent: *
Disallow: /private
Allow: /private/press   # the press kit is public
Crawl-delay: 2

Sitemap: https://example.com/sitemap.xml
`))
	for _, u := range []string{
		"https://example.com/private/notes",
		"https://example.com/private/press/kit.zip",
		"https://example.com/",
	} {
		d := r.Match("MyBot", u)
		if d.Rule.Line == 0 {
			fmt.Println(d.Allowed, "(no rule matched)")
			continue
		}
		fmt.Printf("%v (%v, line %d)\n", d.Allowed, d.Rule, d.Rule.Line)
	}
	fmt.Println(r.Group("MyBot").CrawlDelay, r.Sitemaps())
	// Output:
	// false (Disallow: /private, line 2)
	// true (Allow: /private/press, line 3)
	// true (no rule matched)
	// 2s [https://example.com/sitemap.xml]
}

func ExampleProductToken() {
	ua := "MyBot/2.1 (+https://example.com/bot)"
	r := robots.Parse([]byte("User-agent: mybot\nDisallow: /\n"))
	agent := robots.ProductToken(ua)
	fmt.Println(agent, r.Match(agent, "https://example.com/a").Allowed, r.AllowsNothing(agent))
	// Output:
	// MyBot false true
}
