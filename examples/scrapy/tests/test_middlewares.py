"""Unit tests of RobotsgateRefusalMiddleware with Scrapy's own classes.

    cd examples/scrapy && python3 -m unittest discover -s tests -t .

scripts/clients/run.sh runs them, and runs the middleware through a real
robotsgate as well.
"""

import unittest

from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, Request
from scrapy.spiders import Spider
from scrapy.utils.test import get_crawler

from scrapy.core.downloader.handlers.http11 import TunnelError

from politecrawl.middlewares import RobotsgateConnectRefusalMiddleware, RobotsgateRefusalMiddleware


class RobotsgateRefusalMiddlewareTest(unittest.TestCase):
    def setUp(self):
        self.crawler = get_crawler(Spider)
        self.spider = self.crawler._create_spider("t")
        self.mw = RobotsgateRefusalMiddleware.from_crawler(self.crawler)
        self.request = Request("https://example.com/private/x")

    def respond(self, status, headers=None):
        resp = HtmlResponse(self.request.url, status=status, headers=headers or {}, body=b"x", request=self.request)
        return self.mw.process_response(self.request, resp, self.spider)

    def stats(self):
        return {k: v for k, v in self.crawler.stats.get_stats().items() if k.startswith("robotsgate/")}

    def test_refusal_is_ignored_and_counted(self):
        with self.assertRaises(IgnoreRequest):
            self.respond(403, {"X-Robotsgate-Decision": "disallowed"})
        with self.assertRaises(IgnoreRequest):
            self.respond(429, {"X-Robotsgate-Decision": "crawl-delay-wait", "Retry-After": "60"})
        self.assertEqual(self.stats(), {
            "robotsgate/forbidden": 2,
            "robotsgate/reason/disallowed": 1,
            "robotsgate/reason/crawl-delay-wait": 1,
        })

    def test_origin_answers_are_left_alone(self):
        for status, headers in [
            (403, {}),  # the origin's own 403
            (200, {}),
            (200, {"X-Robotsgate-Decision": "report-only; disallowed"}),  # report mode forwarded it
            (403, {"X-Robotsgate-Decision": "report-only; disallowed"}),  # ... and the origin refused
        ]:
            resp = self.respond(status, headers)
            self.assertEqual(resp.status, status)
        self.assertEqual(self.stats(), {})


class RobotsgateConnectRefusalMiddlewareTest(unittest.TestCase):
    def setUp(self):
        self.crawler = get_crawler(Spider)
        self.spider = self.crawler._create_spider("t")
        self.mw = RobotsgateConnectRefusalMiddleware.from_crawler(self.crawler)
        self.request = Request("https://example.com:8443/x")

    def test_refused_connect_is_ignored_and_counted(self):
        err = TunnelError("Could not open CONNECT tunnel with proxy 127.0.0.1:9309 [{'status': 403, 'reason': b'Forbidden'}]")
        with self.assertRaises(IgnoreRequest):
            self.mw.process_exception(self.request, err, self.spider)
        stats = {k: v for k, v in self.crawler.stats.get_stats().items() if k.startswith("robotsgate/")}
        self.assertEqual(stats, {"robotsgate/forbidden": 1, "robotsgate/connect/403": 1})

    def test_other_failures_are_left_to_retry(self):
        for err in [
            TunnelError("Could not open CONNECT tunnel with proxy 127.0.0.1:9309 [{'status': 502, 'reason': b'Bad Gateway'}]"),
            TimeoutError("timed out"),
        ]:
            self.assertIsNone(self.mw.process_exception(self.request, err, self.spider))


if __name__ == "__main__":
    unittest.main()
