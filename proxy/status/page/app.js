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

function addRecord(it) {
  const body = document.querySelector('#events tbody');
  body.prepend(row(it));
  while (body.rows.length > maxRows) body.deleteRow(body.rows.length - 1);
}

function fillList(dl, pairs) {
  dl.replaceChildren();
  for (const [k, v] of pairs) dl.append(el('dt', k), el('dd', v));
}

function drawChart(perMinute) {
  const svg = document.getElementById('chart');
  svg.replaceChildren();
  const w = 720 / Math.max(perMinute.length, 1);
  const h = 150;
  let max = 1;
  const reasons = new Set();
  for (const m of perMinute) {
    let total = 0;
    for (const [r, c] of Object.entries(m.by_reason)) { total += c; reasons.add(r); }
    max = Math.max(max, total);
  }
  perMinute.forEach((m, i) => {
    let y = 158;
    for (const [r, c] of Object.entries(m.by_reason).sort()) {
      const bh = (c / max) * h;
      y -= bh;
      const rect = document.createElementNS(svgNS, 'rect');
      rect.setAttribute('x', String(i * w + 1));
      rect.setAttribute('y', String(y));
      rect.setAttribute('width', String(Math.max(w - 2, 1)));
      rect.setAttribute('height', String(bh));
      rect.setAttribute('fill', colorOf(r));
      const title = document.createElementNS(svgNS, 'title');
      title.textContent = `${shortTime(m.minute).slice(0, 5)} ${r}: ${c}`;
      rect.append(title);
      svg.append(rect);
    }
  });
  const label = document.createElementNS(svgNS, 'text');
  label.setAttribute('x', '4');
  label.setAttribute('y', '12');
  label.setAttribute('font-size', '11');
  label.textContent = `max ${max}/min`;
  svg.append(label);
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
  document.getElementById('totals').textContent = `(${s.records} records, ${s.refusals} refusals since start)`;
  if (first) for (const it of s.recent || []) addRecord(it);
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

function connect() {
  const conn = document.getElementById('conn');
  const es = new EventSource('/v1/events');
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
});
