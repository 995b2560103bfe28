# Scrapy settings for crawling through robotsgate.
#
# Proxy: Scrapy's HttpProxyMiddleware reads http_proxy / https_proxy from
# the environment (either case):
#   export http_proxy=http://127.0.0.1:9309 https_proxy=http://127.0.0.1:9309
#
# HTTPS: Scrapy does not verify server certificates by default, so it
# accepts robotsgate's minted certificates without installing its CA
# (robotsgate itself verifies the origins' certificates).

BOT_NAME = "politecrawl"
SPIDER_MODULES = ["politecrawl.spiders"]
NEWSPIDER_MODULE = "politecrawl.spiders"

# robotsgate's robots.txt agent is the User-Agent's product token
# ("politecrawl" here); name yours.
USER_AGENT = "politecrawl/1.0 (+https://example.com/bot)"

# robotsgate decides robots.txt for every request (and audits every
# refusal); Scrapy's own check would fetch and parse it a second time.
ROBOTSTXT_OBEY = False

# One request at a time per site: robotsgate spaces requests by the site's
# Crawl-delay, so parallel requests to one site only queue inside robotsgate
# and, beyond politeness.max_queue_wait, come back as 429. With Scrapy's
# default of 8, any Crawl-delay above about max_queue_wait / 7 (4 s with the
# default 30 s) makes Scrapy drop URLs ("Gave up retrying ... 429").
CONCURRENT_REQUESTS_PER_DOMAIN = 1

# A request may wait up to politeness.max_queue_wait (30 s) inside robotsgate
# before it is sent: keep the timeout well above it (Scrapy's default, 180 s).
DOWNLOAD_TIMEOUT = 180

# Wait for Retry-After on 429/503 instead of retrying at once (runs before
# RetryMiddleware, priority 550). Needed when a Crawl-delay is longer than
# politeness.max_queue_wait, and while robotsgate pauses an origin.
#
# A robotsgate refusal (its X-Robotsgate-Decision header) becomes
# IgnoreRequest, counted as robotsgate/forbidden and
# robotsgate/reason/<reason>; the origin's own 403 reaches the spider. It
# runs after RetryMiddleware, so only the final answer is dropped.
#
# A CONNECT robotsgate refused (TunnelError, status 403) becomes
# IgnoreRequest before RetryMiddleware would try it twice more (its
# process_exception runs first: priority above 550).
DOWNLOADER_MIDDLEWARES = {
    "politecrawl.middlewares.RetryAfterMiddleware": 560,
    "politecrawl.middlewares.RobotsgateConnectRefusalMiddleware": 555,
    "politecrawl.middlewares.RobotsgateRefusalMiddleware": 540,
}
RETRY_AFTER_TIMES = 5
RETRY_AFTER_MAX = 600

REQUEST_FINGERPRINTER_IMPLEMENTATION = "2.7"
