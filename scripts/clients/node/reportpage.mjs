// The crawl report's HTML page (robotsgate report -format html) in the
// system Chromium, driven by Playwright, offline: the page is opened from
// a file with every network request refused. Prints one line per check:
//
//   chart <n>              the top-domains chart: bars with a width (n > 0)
//   labels <n>             bar labels (origins) on that chart
//   requests <n>           requests other than the page's own file (0)
//   console-errors <n>     console errors and uncaught exceptions (0)
//
//   REPORT_FILE=/path/report.html node reportpage.mjs
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const file = process.env.REPORT_FILE;
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!file) {
  console.error('usage: REPORT_FILE=... node reportpage.mjs');
  process.exit(2);
}
const browser = await chromium.launch({
  executablePath, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let code = 0;
try {
  const ctx = await browser.newContext({ offline: true });
  const page = await ctx.newPage();
  const errors = [];
  const url = pathToFileURL(file).href;
  let others = 0;
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (r.url() !== url) { others++; console.error(`request: ${r.url()}`); } });
  await page.goto(url, { waitUntil: 'load' });
  const chart = await page.evaluate(() => {
    const svg = document.getElementById('top-domains');
    if (!svg) return { bars: 0, labels: 0 };
    const bars = [...svg.querySelectorAll('rect')].filter((r) => r.getBoundingClientRect().width > 0).length;
    const labels = [...svg.querySelectorAll('text')].filter((t) => t.getAttribute('x') === '0' && t.textContent.trim() !== '').length;
    return { bars, labels };
  });
  console.log(`chart ${chart.bars}`);
  console.log(`labels ${chart.labels}`);
  console.log(`requests ${others}`);
  console.log(`console-errors ${errors.length}`);
  for (const e of errors) console.error(`console: ${e}`);
  await ctx.close();
} catch (err) {
  console.error(`reportpage: ${err.message}`);
  code = 1;
} finally {
  await browser.close();
}
process.exit(code);
