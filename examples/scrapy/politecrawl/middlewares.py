"""Downloader middlewares for crawling through robotsgate.

RetryAfterMiddleware: wait as long as a 429 or 503 answer's Retry-After
says before retrying, instead of Scrapy's immediate retry.

robotsgate answers 429 + Retry-After when a request would wait longer than
politeness.max_queue_wait for the origin's Crawl-delay slot, and 503 +
Retry-After while an origin is paused after its own 429/503. Scrapy's
RetryMiddleware retries at once (RETRY_TIMES=2), so on a site whose
Crawl-delay is long those retries are refused again and Scrapy gives up.
This middleware re-schedules the request after Retry-After seconds
(without blocking the reactor); answers without a usable Retry-After, or
past RETRY_AFTER_TIMES / RETRY_AFTER_MAX, go on to RetryMiddleware.

RobotsgateRefusalMiddleware: a robotsgate refusal becomes IgnoreRequest,
with stats robotsgate/forbidden and robotsgate/reason/<reason>.

RobotsgateConnectRefusalMiddleware: a CONNECT that robotsgate refused (a
TunnelError with status 403) becomes IgnoreRequest instead of being
retried.
"""

import re

from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

from scrapy.core.downloader.handlers.http11 import TunnelError
from scrapy.exceptions import IgnoreRequest
from twisted.internet.task import deferLater


def retry_after_seconds(value, now=None):
    """Seconds to wait for a Retry-After value (delta-seconds or HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return int(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    now = now or datetime.now(timezone.utc)
    return max(0.0, (when - now).total_seconds())


class RetryAfterMiddleware:
    def __init__(self, settings):
        self.codes = set(settings.getlist("RETRY_AFTER_HTTP_CODES", [429, 503]))
        self.max_times = settings.getint("RETRY_AFTER_TIMES", 5)
        self.max_wait = settings.getfloat("RETRY_AFTER_MAX", 600)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings)

    def process_response(self, request, response, spider):
        if response.status not in self.codes or request.meta.get("dont_retry"):
            return response
        header = response.headers.get("Retry-After")
        wait = retry_after_seconds(header.decode("latin-1") if header else None)
        tries = request.meta.get("retry_after_times", 0)
        if wait is None or wait > self.max_wait or tries >= self.max_times:
            return response
        spider.logger.info("%s answered %d; retrying in %.0f s (Retry-After)", request.url, response.status, wait)
        retry = request.replace(dont_filter=True)
        retry.meta["retry_after_times"] = tries + 1
        # The reactor Scrapy installed (imported here, not at module load,
        # so that importing this module never installs one).
        from twisted.internet import reactor

        # Fire a little after Retry-After: the slot it names has opened by then.
        return deferLater(reactor, wait + 0.1, lambda: retry)


class RobotsgateRefusalMiddleware:
    """Turn a robotsgate refusal into IgnoreRequest, as ROBOTSTXT_OBEY does.

    robotsgate marks every answer it writes itself (403 for a disallowed
    URL, and its other refusals) with an X-Robotsgate-Decision header that
    names the reason ("disallowed", "robots-unreachable", ...). Without this
    middleware such a 403 looks like the origin's own 403 to Scrapy. With
    it, the request is dropped with IgnoreRequest and counted in the stats
    robotsgate/forbidden and robotsgate/reason/<reason> (Scrapy's own
    robots.txt check counts robotstxt/forbidden). Answers without the
    header, such as the origin's own 403, are left alone, and so are the
    responses report mode forwards ("report-only; <reason>").

    Place it after RetryMiddleware (priority below 550) so that a 429 or 503
    that robotsgate answered for politeness is retried first; only the
    final answer is dropped.
    """

    header = "X-Robotsgate-Decision"

    def __init__(self, stats):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.stats)

    def process_response(self, request, response, spider):
        value = response.headers.get(self.header)
        if value is None or response.status < 400:
            return response
        reason = value.decode("latin-1").strip()
        if not reason or reason.startswith("report-only"):
            return response
        self.stats.inc_value("robotsgate/forbidden", spider=spider)
        self.stats.inc_value(f"robotsgate/reason/{reason}", spider=spider)
        spider.logger.debug("Forbidden by robotsgate (%s, %d): %s", reason, response.status, request.url)
        raise IgnoreRequest(f"Forbidden by robotsgate ({reason}): {request.url}")


class RobotsgateConnectRefusalMiddleware:
    """Turn a refused CONNECT into IgnoreRequest instead of three tries.

    When robotsgate refuses an HTTPS request's CONNECT (a port outside
    https.allowed_ports, a denied site, a disallowed host in tunnel mode),
    Scrapy sees no response, only a TunnelError ("Could not open CONNECT
    tunnel with proxy ... [{'status': 403, ...}]"), which RetryMiddleware
    retries like a network error: the URL is asked for, refused and
    audited 3 times. RETRY_HTTP_CODES does not apply (there is no
    response), and Scrapy 2.8 has no setting for the exceptions it
    retries. This middleware drops a TunnelError with status 403, counted
    as robotsgate/forbidden and robotsgate/connect/403; robotsgate's audit
    log and the answer's Proxy-Status header (which Scrapy does not show)
    have the reason. Any other TunnelError is left to RetryMiddleware.

    Its process_exception must run before RetryMiddleware's (550): give
    it a priority above 550, such as 555.
    """

    status = re.compile(r"'status': (\d+)")

    def __init__(self, stats):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.stats)

    def process_exception(self, request, exception, spider):
        if not isinstance(exception, TunnelError):
            return None
        m = self.status.search(str(exception))
        if not m or m.group(1) != "403":
            return None
        self.stats.inc_value("robotsgate/forbidden", spider=spider)
        self.stats.inc_value("robotsgate/connect/403", spider=spider)
        spider.logger.debug("CONNECT refused by robotsgate (403): %s", request.url)
        raise IgnoreRequest(f"CONNECT refused by robotsgate (403; its audit log has the reason): {request.url}")
