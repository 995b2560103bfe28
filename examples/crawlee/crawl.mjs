// A Crawlee crawl through robotsgate (see robotsgate.mjs): prints one
// line per URL, "<status> <url>" for a page, "refused <reason> <url>" for
// a robotsgate refusal, "failed <url>" for a request Crawlee gave up on;
// with --stats FILE, writes the robotsgate/ counts there as JSON.
//
//   PROXY_URL=http://127.0.0.1:9309 NODE_EXTRA_CA_CERTS=robotsgate-ca.pem \
//     node crawl.mjs [--agent NAME] [--follow] [--stats FILE] [--max-retries N] URL...
//
// --crawlee-defaults leaves robotsgate's options out (Crawlee's defaults:
// every refusal retried as a block), to compare.
//
// PROXY_URL defaults to https_proxy / http_proxy. HTTPS: robotsgate's CA
// through NODE_EXTRA_CA_CERTS; certificates are verified (Crawlee's
// default, ignoreSslErrors, would accept any).
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Configuration, HttpCrawler, LogLevel, ProxyConfiguration, log } from '@crawlee/http';
import { robotsgateOptions } from './robotsgate.mjs';

const { values: opts, positionals: urls } = parseArgs({
  allowPositionals: true,
  options: {
    agent: { type: 'string', default: 'crawleebot' },
    follow: { type: 'boolean', default: false },
    stats: { type: 'string' },
    'max-retries': { type: 'string', default: '3' },
    'crawlee-defaults': { type: 'boolean', default: false },
  },
});
const proxy = process.env.PROXY_URL || process.env.https_proxy || process.env.HTTPS_PROXY || process.env.http_proxy || process.env.HTTP_PROXY;
if (!proxy || urls.length === 0) {
  console.error('usage: PROXY_URL=http://127.0.0.1:9309 node crawl.mjs [--agent NAME] [--follow] [--stats FILE] [--max-retries N] [--crawlee-defaults] URL...');
  process.exit(2);
}
log.setLevel(LogLevel.WARNING);

const lines = [];
const gate = robotsgateOptions({
  agent: opts.agent,
  onRefusal: (ctx, reason) => { lines.push(`refused ${reason} ${ctx.request.url}`); },
});
const crawler = new HttpCrawler({
  ...(opts['crawlee-defaults'] ? {} : gate.options),
  maxRequestRetries: Number(opts['max-retries']),
  proxyConfiguration: new ProxyConfiguration({ proxyUrls: [proxy] }),
  ignoreSslErrors: false,
  maxConcurrency: 4,
  requestHandler: (opts['crawlee-defaults'] ? (fn) => fn : gate.handler)(async ({ request, response, parseWithCheerio, enqueueLinks }) => {
    if (opts.follow) {
      const $ = await parseWithCheerio();
      const links = $('a[href]').map((_, a) => $(a).attr('href')).get();
      await enqueueLinks({ urls: links, baseUrl: request.loadedUrl ?? request.url, strategy: 'same-origin' });
    }
    lines.push(`${response.statusCode} ${request.url}`);
  }),
  failedRequestHandler: ({ request }) => { lines.push(`failed ${request.url}`); },
}, new Configuration({ persistStorage: false, purgeOnStart: true }));

await crawler.run(urls);
for (const l of lines.sort()) console.log(l);
if (opts.stats) writeFileSync(opts.stats, `${JSON.stringify(gate.stats)}\n`);
