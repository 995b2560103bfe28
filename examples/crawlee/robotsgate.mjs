// Crawlee through robotsgate: the options that make a robotsgate refusal
// final (no retry, no session retired) and counted, and that name the
// crawler to robotsgate.
//
// Crawlee's default reads every 403 as an anti-bot block: it retires the
// session and retries the request (3 times by default), so each refused
// URL is asked for, refused and audited 4 times. robotsgate's refusals say
// who answered: they carry an X-Robotsgate-Decision header naming the
// reason ("disallowed", "robots-unreachable", ...). With these options a
// refusal reaches the request handler once, as a final answer, and the
// origin's own 403 (no such header) is still treated as a block, as
// Crawlee does by default.
//
//   import { HttpCrawler } from '@crawlee/http';
//   import { robotsgateOptions } from './robotsgate.mjs';
//   const gate = robotsgateOptions({ agent: 'MyBot' });
//   const crawler = new HttpCrawler({
//     ...gate.options,
//     proxyConfiguration: new ProxyConfiguration({ proxyUrls: ['http://127.0.0.1:9309'] }),
//     requestHandler: gate.handler(async (ctx) => { /* your pages */ }),
//   });
//   ... gate.stats: { 'robotsgate/forbidden': n, 'robotsgate/reason/disallowed': n, ... }

export const decisionHeader = 'x-robotsgate-decision';

// refusalReason is the reason of robotsgate's final refusal in a response
// (its status and headers), or null: no X-Robotsgate-Decision header (the
// origin answered), a response report mode forwarded ("report-only; ..."),
// or a refusal that is worth trying again later: 429 and 503 (politeness:
// a Crawl-delay slot, an origin paused; they carry Retry-After) and 502
// and 504 (the origin could not be reached).
export function refusalReason(statusCode, headers) {
  let v = headers?.[decisionHeader];
  if (Array.isArray(v)) v = v[0];
  if (typeof v !== 'string' || statusCode < 400) return null;
  const reason = v.trim();
  if (!reason || reason.startsWith('report-only')) return null;
  if (statusCode === 429 || statusCode >= 500) return null;
  return reason;
}

// robotsgateOptions returns { options, handler, stats }: options to spread
// into an HttpCrawler's (or CheerioCrawler's) options, handler(fn) the
// request handler that counts robotsgate's refusals and hands every other
// page to fn, and stats, the counts. agent, when given, is sent as
// X-Robots-Agent with every request: robotsgate decides robots.txt for
// that name (when robotsgate has no `agent` of its own configured) rather
// than for the product token it finds in Crawlee's generated browser
// User-Agent. onRefusal(ctx, reason) is called once per refused URL.
export function robotsgateOptions({ agent, onRefusal } = {}) {
  const stats = { 'robotsgate/forbidden': 0 };
  const options = {
    // A 403 is no longer a block by itself: handler() tells robotsgate's
    // refusal (final) from the origin's own 403 (still a block).
    sessionPoolOptions: { blockedStatusCodes: [401, 429] },
    // robotsgate's refusal is short text (JSON when asked for JSON).
    additionalMimeTypes: ['text/plain'],
    preNavigationHooks: agent ? [(_ctx, gotOptions) => {
      gotOptions.headers = { ...gotOptions.headers, 'X-Robots-Agent': agent };
    }] : [],
    postNavigationHooks: [({ request, response }) => {
      const reason = refusalReason(response.statusCode, response.headers);
      if (reason) {
        request.noRetry = true; // final: robotsgate would refuse it again
        request.userData.robotsgateRefusal = reason;
      }
    }],
  };
  const handler = (fn) => async (ctx) => {
    const reason = ctx.request.userData.robotsgateRefusal;
    if (!reason) {
      if (ctx.response.statusCode === 403) {
        // The origin's own 403: what Crawlee does by default with a block.
        ctx.session?.retire();
        throw new Error('Request blocked - received 403 status code.');
      }
      return fn(ctx);
    }
    stats['robotsgate/forbidden'] += 1;
    stats[`robotsgate/reason/${reason}`] = (stats[`robotsgate/reason/${reason}`] ?? 0) + 1;
    ctx.log.debug(`Forbidden by robotsgate (${reason}, ${ctx.response.statusCode}): ${ctx.request.url}`);
    if (onRefusal) await onRefusal(ctx, reason);
  };
  return { options, handler, stats };
}
