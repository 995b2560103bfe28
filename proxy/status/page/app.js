// robotsgate's status page. Every value shown comes from clients or
// origins (URLs, agents, rules, reasons): it is only ever put in the page
// as text (textContent, SVG attributes set one by one), never as markup.
'use strict';

const maxRows = 200;
const svgNS = 'http://www.w3.org/2000/svg';
const colors = new Map();

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

// colorOf gives each reason a stable colour.
function colorOf(reason) {
  if (!colors.has(reason)) {
    let h = 0;
    for (const c of reason) h = (h * 31 + c.codePointAt(0)) % 360;
    colors.set(reason, `hsl(${h}, 60%, 48%)`);
  }
  return colors.get(reason);
}

function shortTime(t) {
  const d = new Date(t);
  return isNaN(d) ? String(t) : d.toISOString().slice(11, 19);
}

function ruleText(it) {
  if (!it.rule) return it.detail || '';
  return it.line ? `${it.rule} (line ${it.line})` : it.rule;
}

// row is the table row of one record.
function row(it) {
  const tr = document.createElement('tr');
  tr.className = it.kind ? 'kind' : (it.decision || '');
  const cells = [shortTime(it.time), it.kind || it.decision || '', it.reason || '', it.agent || '',
    it.url || '', ruleText(it)];
  for (const c of cells) tr.append(el('td', c));
  tr.dataset.reason = it.reason || '';
  return tr;
}

// lastSeq is the position of the last record shown: the stream resumes
// after it, and a record at or before it is not shown twice.
let lastSeq = -1;

function addRecord(it) {
  if (typeof it.seq === 'number' && it.seq > 0) {
    if (it.seq <= lastSeq) return;
    lastSeq = it.seq;
  }
  const body = document.querySelector('#events tbody');
  body.prepend(row(it));
  while (body.rows.length > maxRows) body.deleteRow(body.rows.length - 1);
}

function fillList(dl, pairs) {
  dl.replaceChildren();
  for (const [k, v] of pairs) dl.append(el('dt', k), el('dd', v));
}

// Chart geometry, in the SVG's own units (its width is the element's
// width in pixels, so that text is never stretched): a band at the top
// for the maximum's label, the bars, then the time axis.
const chartH = 180;
const labelBand = 18;
const axisBand = 20;

function svgEl(tag, attrs, text) {
  const e = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = String(text);
  return e;
}

let lastPerMinute = [];

function drawChart(perMinute) {
  lastPerMinute = perMinute;
  const svg = document.getElementById('chart');
  svg.replaceChildren();
  const width = Math.max(svg.clientWidth || 720, 240);
  svg.setAttribute('viewBox', `0 0 ${width} ${chartH}`);
  const w = width / Math.max(perMinute.length, 1);
  const base = chartH - axisBand;
  const h = base - labelBand;
  let max = 1;
  const reasons = new Set();
  for (const m of perMinute) {
    let total = 0;
    for (const [r, c] of Object.entries(m.by_reason)) { total += c; reasons.add(r); }
    max = Math.max(max, total);
  }
  perMinute.forEach((m, i) => {
    let y = base;
    for (const [r, c] of Object.entries(m.by_reason).sort()) {
      const bh = (c / max) * h;
      y -= bh;
      const rect = svgEl('rect', { x: i * w + 1, y, width: Math.max(w - 2, 1), height: bh, fill: colorOf(r) });
      rect.append(svgEl('title', {}, `${shortTime(m.minute).slice(0, 5)} ${r}: ${c}`));
      svg.append(rect);
    }
  });
  drawAxes(svg, perMinute, width, w, base, max);
  const legend = document.getElementById('legend');
  legend.replaceChildren();
  for (const r of [...reasons].sort()) {
    const li = el('li');
    const sw = el('span', undefined, 'swatch');
    sw.style.background = colorOf(r);
    li.append(sw, document.createTextNode(r));
    legend.append(li);
  }
}

// drawAxes draws the maximum's line and label above the bars, and the
// time axis below them: a tick and an HH:MM label (UTC) every ten
// minutes.
function drawAxes(svg, perMinute, width, w, base, max) {
  svg.append(svgEl('line', { x1: 0, x2: width, y1: labelBand, y2: labelBand, class: 'grid' }));
  svg.append(svgEl('text', { x: 4, y: labelBand - 5, class: 'max' }, `max ${max}/min`));
  svg.append(svgEl('line', { x1: 0, x2: width, y1: base, y2: base, class: 'axis' }));
  perMinute.forEach((m, i) => {
    const t = new Date(m.minute);
    if (isNaN(t) || t.getUTCMinutes() % 10 !== 0) return;
    const x = i * w + w / 2;
    svg.append(svgEl('line', { x1: x, x2: x, y1: base, y2: base + 4, class: 'axis' }));
    const anchor = x < 20 ? 'start' : (x > width - 20 ? 'end' : 'middle');
    svg.append(svgEl('text', { x, y: chartH - 5, 'text-anchor': anchor, class: 'tick' }, shortTime(m.minute).slice(0, 5)));
  });
}

// renderSpend fills the payment budgets' table (hidden without budgets).
function renderSpend(spend) {
  document.getElementById('spend-section').hidden = spend.length === 0;
  const sb = document.querySelector('#spend tbody');
  sb.replaceChildren();
  for (const b of spend) {
    const tr = document.createElement('tr');
    tr.append(el('td', b.budget), el('td', b.key || '-'), el('td', b.period),
      el('td', b.error ? 'unknown: ' + b.error : b.spent, 'num'), el('td', b.reserved, 'num'));
    sb.append(tr);
  }
}

function render(s, first) {
  drawChart(s.refusals_per_minute || []);
  const ob = document.querySelector('#origins tbody');
  ob.replaceChildren();
  for (const o of s.top_refused_origins || []) {
    const tr = document.createElement('tr');
    tr.append(el('td', o.origin), el('td', o.count, 'num'));
    ob.append(tr);
  }
  const c = s.cache || {};
  const cache = [['mode', c.mode], ['entries', c.entries], ['bytes', c.bytes], ['evictions', c.evictions]];
  if (c.redis_healthy !== undefined) cache.push(['redis reachable', c.redis_healthy ? 'yes' : 'no']);
  fillList(document.getElementById('cache'), cache);
  fillList(document.getElementById('config'), (s.config || []).map((kv) => [kv.key, kv.value]));
  renderSpend(s.spend || []);
  document.getElementById('totals').textContent = `(${s.records} records, ${s.refusals} refusals since start)`;
  if (first) {
    for (const it of s.recent || []) addRecord(it);
    if (typeof s.seq === 'number') lastSeq = Math.max(lastSeq, s.seq);
  }
}

async function refresh(first) {
  try {
    const r = await fetch('/v1/status', { cache: 'no-store', credentials: 'same-origin' });
    if (r.ok) render(await r.json(), first);
    return r.ok;
  } catch (e) {
    return false;
  }
}

// connect opens the stream after the snapshot's position, so that no
// record written between the snapshot and the stream is missed (the
// server replays those it still holds, and counts the others as
// dropped). When it reconnects, the browser sends the last event's id.
function connect() {
  const conn = document.getElementById('conn');
  const es = new EventSource(lastSeq >= 0 ? `/v1/events?since=${lastSeq}` : '/v1/events');
  es.addEventListener('open', () => { conn.textContent = 'live'; conn.className = 'conn live'; });
  es.addEventListener('error', () => { conn.textContent = 'reconnecting…'; conn.className = 'conn'; });
  es.addEventListener('decision', (ev) => addRecord(JSON.parse(ev.data)));
  es.addEventListener('dropped', (ev) => {
    addRecord({ time: new Date().toISOString(), kind: 'page', reason: 'fell-behind',
      detail: `${Number(ev.data)} records not shown: this page fell behind (the audit log has them)` });
  });
}

document.addEventListener('DOMContentLoaded', async () => {
  await refresh(true);
  connect();
  setInterval(() => refresh(false), 5000);
  window.addEventListener('resize', () => drawChart(lastPerMinute));
});
