// The headless-browser rows of the client table: load each URL in the
// system Chromium, driven by Playwright or Puppeteer, through robotsgate,
// and print per URL the page's status code; for the test origin's /styled
// page, whose stylesheet is disallowed, also the page's title, which the
// page's own script sets to "styled" or "unstyled". (Chromium aborts a
// stylesheet answered 403, so the browser reports no response for it:
// run.sh reads robotsgate's audit log and asks the origin instead.)
//
//   node browser.mjs playwright|puppeteer URL...
//
// Environment: PROXY_URL (robotsgate, e.g. http://127.0.0.1:9309),
// CHROMIUM (default /usr/bin/chromium), SPKI (robotsgate's CA public-key
// hash, as `robotsgate ca` prints it: Chromium then accepts the
// certificates robotsgate mints).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [mode, ...urls] = process.argv.slice(2);
const proxy = process.env.PROXY_URL;
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';

// Flags for Chromium as root in a container. Chromium never proxies
// loopback addresses unless the bypass list says '<-loopback>'.
function chromiumArgs(userDataDir) {
  const args = [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--user-data-dir=${userDataDir}`,
    `--proxy-server=${proxy}`, '--proxy-bypass-list=<-loopback>',
  ];
  if (process.env.SPKI) args.push(`--ignore-certificate-errors-spki-list=${process.env.SPKI}`);
  return args;
}

// visit loads url in page (Playwright's and Puppeteer's Page agree on
// goto and title) and returns the line to print.
async function visit(page, url) {
  const resp = await page.goto(url, { waitUntil: 'load', timeout: 60000 });
  const title = await page.title();
  const status = resp ? resp.status() : 'no-response';
  return title === 'styled' || title === 'unstyled' ? `${status} ${title}` : `${status}`;
}

// Each mode launches Chromium and returns { page, close }.
const modes = {
  async playwright(dir) {
    const { chromium } = await import('playwright-core');
    // Playwright passes its own --headless and --user-data-dir, and turns
    // its proxy option into --proxy-server and --proxy-bypass-list (adding
    // '<-loopback>' itself).
    const own = /^--(headless|user-data-dir=|proxy-server=|proxy-bypass-list=)/;
    const args = chromiumArgs(dir).filter((a) => !own.test(a));
    const browser = await chromium.launch({ executablePath, headless: true, proxy: { server: proxy }, args });
    const page = await browser.newPage();
    return { page, close: () => browser.close() };
  },
  async puppeteer(dir) {
    const { default: puppeteer } = await import('puppeteer-core');
    const browser = await puppeteer.launch({ executablePath, headless: true, args: chromiumArgs(dir) });
    const page = await browser.newPage();
    return { page, close: () => browser.close() };
  },
};

if (!modes[mode] || urls.length === 0 || !proxy) {
  console.error(`usage: PROXY_URL=http://HOST:PORT node browser.mjs (${Object.keys(modes).join('|')}) URL...`);
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'robotsgate-chromium-'));
let code = 0;
try {
  const { page, close } = await modes[mode](dir);
  try {
    for (const url of urls) console.log(await visit(page, url));
  } finally {
    await close();
  }
} catch (err) {
  console.error(`${mode}: ${err.message}`);
  code = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
