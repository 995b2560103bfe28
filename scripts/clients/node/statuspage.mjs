// The admin listener's status page in the system Chromium, driven by
// Playwright: without the admin token the page is refused; with it (as a
// browser sends it: HTTP basic authentication, the token as password) it
// loads without a console error, and a request refused through robotsgate
// appears on it within 2 s. Prints one line per check:
//
//   no-token <status>      the page's status without credentials (401)
//   no-token-page refused  Chromium did not load the page without them
//   page <status>          the page's status with the token (200)
//   live                   the event stream is open
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
  const resp = await page.goto(`${admin}/`, { waitUntil: 'load' });
  console.log(`page ${resp ? resp.status() : 'no-response'}`);
  await page.waitForFunction(() => document.getElementById('conn').textContent === 'live', null, { timeout: 10000 });
  console.log('live');
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
