// Unit tests of robotsgate.mjs: which answers are robotsgate's final
// refusals, and what its hooks and handler do with them (no retry, no
// session retired, counted once), with the origin's own 403 still a
// block.   node --test test/
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { refusalReason, robotsgateOptions } from '../robotsgate.mjs';

test('refusalReason', async (t) => {
  const cases = [
    ['disallowed 403', 403, { 'x-robotsgate-decision': 'disallowed' }, 'disallowed'],
    ['robots-unreachable 403', 403, { 'x-robotsgate-decision': 'robots-unreachable' }, 'robots-unreachable'],
    ['url-too-long 414', 414, { 'x-robotsgate-decision': 'url-too-long' }, 'url-too-long'],
    ['header as an array', 403, { 'x-robotsgate-decision': ['site-denied'] }, 'site-denied'],
    ["the origin's own 403", 403, {}, null],
    ['report mode forwards', 403, { 'x-robotsgate-decision': 'report-only; disallowed' }, null],
    ['crawl-delay wait 429: retry later', 429, { 'x-robotsgate-decision': 'crawl-delay-wait' }, null],
    ['origin paused 503: retry later', 503, { 'x-robotsgate-decision': 'origin-paused' }, null],
    ['origin unreachable 502: retry later', 502, { 'x-robotsgate-decision': 'origin-unreachable' }, null],
    ['allowed 200', 200, { 'x-robotsgate-decision': 'allowed' }, null],
    ['no headers', 403, undefined, null],
  ];
  for (const [name, status, headers, want] of cases) {
    await t.test(name, () => assert.equal(refusalReason(status, headers), want));
  }
});

// context is a crawling context as Crawlee hands it to hooks and handlers.
function context(status, headers) {
  const session = { retired: 0, retire() { this.retired += 1; } };
  const log = { debug() {} };
  return { request: { url: 'http://a.example/private/x', userData: {}, noRetry: false }, response: { statusCode: status, headers }, session, log };
}

test('a refusal is final, counted once, and its session kept', async () => {
  const refused = [];
  const gate = robotsgateOptions({ onRefusal: (ctx, reason) => refused.push(`${reason} ${ctx.request.url}`) });
  const ctx = context(403, { 'x-robotsgate-decision': 'disallowed' });
  for (const hook of gate.options.postNavigationHooks) await hook(ctx, {});
  assert.equal(ctx.request.noRetry, true);
  let pages = 0;
  await gate.handler(async () => { pages += 1; })(ctx);
  assert.equal(pages, 0);
  assert.equal(ctx.session.retired, 0);
  assert.deepEqual(refused, ['disallowed http://a.example/private/x']);
  assert.deepEqual(gate.stats, { 'robotsgate/forbidden': 1, 'robotsgate/reason/disallowed': 1 });
  assert.ok(!gate.options.sessionPoolOptions.blockedStatusCodes.includes(403));
});

test("the origin's own 403 is still a block: session retired, retried", async () => {
  const gate = robotsgateOptions();
  const ctx = context(403, { 'content-type': 'text/plain' });
  for (const hook of gate.options.postNavigationHooks) await hook(ctx, {});
  assert.equal(ctx.request.noRetry, false);
  await assert.rejects(gate.handler(async () => {})(ctx), /blocked - received 403/);
  assert.equal(ctx.session.retired, 1);
  assert.deepEqual(gate.stats, { 'robotsgate/forbidden': 0 });
});

test('pages reach the handler; the agent is sent as X-Robots-Agent', async () => {
  const gate = robotsgateOptions({ agent: 'crawleebot' });
  const gotOptions = { headers: { accept: 'text/html' } };
  for (const hook of gate.options.preNavigationHooks) await hook(context(0, {}), gotOptions);
  assert.deepEqual(gotOptions.headers, { accept: 'text/html', 'X-Robots-Agent': 'crawleebot' });
  const ctx = context(200, { 'content-type': 'text/html' });
  let pages = 0;
  await gate.handler(async () => { pages += 1; })(ctx);
  assert.equal(pages, 1);
  assert.equal(robotsgateOptions().options.preNavigationHooks.length, 0);
});
