// The admin listener's status page in the system Chromium, driven by
// Playwright: without the admin token the page is refused; with it (as a
// browser sends it: HTTP basic authentication, the token as password) it
// loads without a console error, and a request refused through robotsgate
// appears on it within 2 s. Refusals made between the page's snapshot
// (/v1/status) and the opening of its event stream all appear too: the
// stream's request is held back until they are answered. Prints one line
// per check:
//
//   no-token <status>      the page's status without credentials (401)
//   no-token-page refused  Chromium did not load the page without them
//   page <status>          the page's status with the token (200)
//   live                   the event stream is open
//   early <n>/<n>          refusals made before the stream opened that it shows (5/5)
//   chart axis max-label   the chart has a time axis (5 or more HH:MM labels) and its
//                          maximum's label is inside the chart, clear of the bars
//   proxy <status>         robotsgate's answer to REFUSE_URL (403)
//   shown within-2s        the refused URL appeared on the page in time
//   console-errors <n>     console errors and uncaught exceptions (0)
//
//   ADMIN_URL=http://HOST:PORT ADMIN_TOKEN=... PROXY_URL=http://HOST:PORT \
//   REFUSE_URL=http://origin/private/x node statuspage.mjs
import http from 'node:http';
import { chromium } from 'playwright-core';

const { ADMIN_URL: admin, ADMIN_TOKEN: token, PROXY_URL: proxy, REFUSE_URL: refuse } = process.env;
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!admin || !token || !proxy || !refuse) {
  console.error('usage: ADMIN_URL=... ADMIN_TOKEN=... PROXY_URL=... REFUSE_URL=... node statuspage.mjs');
  process.exit(2);
}

// viaProxy sends GET url through robotsgate (an absolute-form request)
// and resolves to the status.
function viaProxy(url) {
  const p = new URL(proxy);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: p.hostname, port: p.port, method: 'GET', path: url, headers: { host: new URL(url).host } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end();
  });
}

// chartChecks: "chart axis max-label" when the chart (after a refusal,
// so that it has a bar at the maximum) has 5 or more time labels and its
// maximum's label lies inside the chart and clear of every bar; else what
// is wrong.
async function chartChecks(page) {
  return page.evaluate(() => {
    const svg = document.getElementById('chart');
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')];
    const times = texts.filter((t) => /^\d\d:\d\d$/.test(t.textContent));
    const max = texts.find((t) => t.textContent.startsWith('max '));
    const out = ['chart'];
    out.push(times.length >= 5 ? 'axis' : `axis-labels-${times.length}`);
    if (!max) return [...out, 'no-max-label'].join(' ');
    const m = max.getBoundingClientRect();
    const inside = m.top >= box.top && m.bottom <= box.bottom && m.left >= box.left && m.right <= box.right;
    const clear = [...svg.querySelectorAll('rect')].every((r) => {
      const b = r.getBoundingClientRect();
      return b.height === 0 || b.top >= m.bottom || b.left >= m.right || b.right <= m.left;
    });
    out.push(inside && clear ? 'max-label' : `max-label-${inside ? 'inside' : 'cut'}-${clear ? 'clear' : 'covered'}`);
    return out.join(' ');
  });
}

const browser = await chromium.launch({
  executablePath, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let code = 0;
try {
  // Without credentials: the browser's own request (Chromium gives up on
  // a 401 that asks for credentials it has none of), then its status.
  const anon = await browser.newContext();
  let navigated = 'loaded';
  await (await anon.newPage()).goto(`${admin}/`).catch((e) => { navigated = e.message.split('\n')[0]; });
  const refused = await anon.request.get(`${admin}/`);
  console.log(`no-token ${refused.status()}`);
  console.log(`no-token-page ${navigated === 'loaded' ? 'loaded' : 'refused'}`);
  await anon.close();

  const ctx = await browser.newContext({ httpCredentials: { username: 'operator', password: token } });
  const page = await ctx.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  // The page took its snapshot; before its stream opens, robotsgate
  // refuses these URLs: the page must show them all.
  const early = Array.from({ length: 5 }, (_, i) => `${refuse}?early=${i}-${Date.now()}`);
  let held = false;
  await page.route('**/v1/events*', async (route) => {
    if (!held) {
      held = true;
      for (const u of early) await viaProxy(u);
    }
    await route.continue();
  });
  const resp = await page.goto(`${admin}/`, { waitUntil: 'load' });
  console.log(`page ${resp ? resp.status() : 'no-response'}`);
  await page.waitForFunction(() => document.getElementById('conn').textContent === 'live', null, { timeout: 10000 });
  console.log('live');
  const shownURLs = () => page.evaluate(() => [...document.querySelectorAll('#events tbody td')].map((td) => td.textContent));
  await page.waitForFunction((us) => {
    const shown = new Set([...document.querySelectorAll('#events tbody td')].map((td) => td.textContent));
    return us.every((u) => shown.has(u));
  }, early, { timeout: 3000 }).catch(() => {});
  const shown = new Set(await shownURLs());
  console.log(`early ${early.filter((u) => shown.has(u)).length}/${early.length}`);
  // The chart counts them at the page's next refresh (every 5 s).
  await page.waitForFunction(() => document.querySelector('#chart rect'), null, { timeout: 8000 }).catch(() => {});
  console.log(await chartChecks(page));
  // A URL no earlier check refused, so that only the stream can show it.
  const url = `${refuse}?statuspage=${Date.now()}`;
  const start = Date.now();
  console.log(`proxy ${await viaProxy(url)}`);
  try {
    await page.waitForFunction((u) => [...document.querySelectorAll('#events tbody td')].some((td) => td.textContent === u),
      url, { timeout: Math.max(2000 - (Date.now() - start), 1) });
    console.log(`shown ${Date.now() - start < 2000 ? 'within-2s' : 'late'}`);
  } catch {
    console.log('shown never');
  }
  console.log(`console-errors ${errors.length}`);
  for (const e of errors) console.error(`console: ${e}`);
  await ctx.close();
} catch (err) {
  console.error(`statuspage: ${err.message}`);
  code = 1;
} finally {
  await browser.close();
}
process.exit(code);
