"""A spider that fetches given URLs (and, with follow=1, the same-site links
of their pages) and yields one item per response: its URL and status.

    scrapy crawl pages -a urls=https://example.com/ -a follow=1 -O pages.jl

403 answers are yielded too; everything else above 399 is dropped as
Scrapy does. In the project, robotsgate's refusals never reach the spider
(RobotsgateRefusalMiddleware drops them and counts them in the stats), so
a 403 item is the origin's own. With -a stats=FILE the spider writes the
robotsgate/ stats to FILE (JSON) when it closes.
"""

import json
from urllib.parse import urlsplit

import scrapy


class PagesSpider(scrapy.Spider):
    name = "pages"
    handle_httpstatus_list = [403]

    def __init__(self, urls="", follow="0", stats="", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [u for u in urls.split(",") if u]
        self.follow = follow == "1"
        self.stats_file = stats

    def closed(self, reason):
        if not self.stats_file:
            return
        stats = self.crawler.stats.get_stats()
        with open(self.stats_file, "w") as f:
            json.dump({k: v for k, v in sorted(stats.items()) if k.startswith("robotsgate/")}, f)

    def parse(self, response):
        yield {"url": response.url, "status": response.status}
        if not self.follow or response.status != 200:
            return
        here = urlsplit(response.url).netloc
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href)
            if urlsplit(url).netloc == here:
                yield scrapy.Request(url, callback=self.parse)
