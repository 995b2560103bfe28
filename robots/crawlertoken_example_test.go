package robots_test

import (
	"fmt"

	"github.com/robotsgate/robotsgate/robots"
)

func ExampleCrawlerToken() {
	r := robots.Parse([]byte("User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n"))
	for _, ua := range []string{
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)",
		"Scrapy/2.11 (+https://scrapy.org)",
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
	} {
		agent := robots.CrawlerToken(ua)
		fmt.Printf("%q %v\n", agent, r.Match(agent, "https://example.com/a").Allowed)
	}
	// Output:
	// "GPTBot" false
	// "Scrapy" true
	// "" true
}
