"""A spider that fetches given URLs (and, with follow=1, the same-site links
of their pages) and yields one item per response: its URL and status.

    scrapy crawl pages -a urls=https://example.com/ -a follow=1 -O pages.jl

403 answers (robotsgate's refusals) are yielded too, so that a run shows
what was refused; everything else above 399 is dropped as Scrapy does.
"""

from urllib.parse import urlsplit

import scrapy


class PagesSpider(scrapy.Spider):
    name = "pages"
    handle_httpstatus_list = [403]

    def __init__(self, urls="", follow="0", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [u for u in urls.split(",") if u]
        self.follow = follow == "1"

    def parse(self, response):
        yield {"url": response.url, "status": response.status}
        if not self.follow or response.status != 200:
            return
        here = urlsplit(response.url).netloc
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href)
            if urlsplit(url).netloc == here:
                yield scrapy.Request(url, callback=self.parse)
