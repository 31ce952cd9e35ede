// racelab classroom: draws what the server streams (/classroom/events),
// fires the page's bursts (/classroom/burst) and turns its background load
// on and off (/classroom/background). Everything a store or a
// student sent is put on the page as text, never as markup; the only
// markup inserted is the lanes' SVG, which the server drew and escaped.
'use strict';

// el builds an element: attributes from attrs, children as nodes or text.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

const byId = (id) => document.getElementById(id);
const sel = (s) => '"' + String(s).replace(/["\\]/g, '\\$&') + '"';

let config = null;
let base = location.origin;
// The token serve printed, from the address after # (never sent to the
// server in the URL): writes need it under --public.
const token = new URLSearchParams(location.hash.slice(1)).get('token') || '';
const drawn = {}; // story → the burst drawn, so a redraw keeps the lanes

async function start() {
  const resp = await fetch('/classroom/config');
  config = await resp.json();
  if (config.addrs.length > 0) base = 'http://' + config.addrs[0];
  buildLive();
  buildLoad();
  buildReplay();
  // A SQL race's page (serve --race) has no contract: nothing lands but
  // its trials.
  if (config.stories.length > 0 && config.stories.every((st) => st.sql)) {
    document.querySelector('.log-section').hidden = true;
  }
  listen();
}

// curl writes the command line a student types for method and path.
function curl(method, path) {
  return 'curl ' + (method === 'GET' ? '' : '-X ' + method + ' ') + base + path;
}

// runLine is the racelab run that plays a story with no burst button on
// the page's stores. An http target must hold unless told otherwise, so
// a named store expected to break is told so, and the run exits 0 when
// each store does what its guarantee says.
function runLine(st) {
  const stores = config.stores.filter((s) => st.played_by.includes(s.name));
  const targets = stores.map((s) => ' -t ' + (s.base ? s.name + '=' : '') + base + s.base);
  const expect = stores.filter((s) => s.base && !s.holds).map((s) => ' --expect ' + s.name + '=breaks');
  return 'racelab run ' + st.name + targets.join('') + expect.join('') + ' ' + st.run_flags;
}

function buildLive() {
  const root = byId('stories');
  for (const st of config.stories) {
    // The op's words, from the ops table through /classroom/config.
    const w = { act: st.acts, value: st.stored, plan: st.plan };
    const heads = ['key', 'requests', 'allowed', 'refused', 'answered', 'stored ' + w.value].concat(w.plan ? ['plan'] : []);
    const stores = el('div', { class: 'stores' });
    const lanes = el('div', { class: 'lanes-row' });
    for (const s of config.stores) {
      if (!st.played_by.includes(s.name)) continue;
      if (st.sql) {
        stores.append(databaseCard(s));
        lanes.append(el('figure', { class: 'lanes-fig', 'data-store': s.name, hidden: true },
          el('figcaption', { text: s.name + ': one lane per transaction' }), el('div', { class: 'svg' })));
        continue;
      }
      const tbody = el('tbody', {}, el('tr', { class: 'empty' }, el('td', { colspan: heads.length, text: 'no ' + w.act + ' yet: try the curl line below' })));
      stores.append(el('article', { class: 'store', 'data-store': s.name },
        storeTitle(s),
        el('p', { class: 'guarantee', text: s.guarantee + ' · ' + (s.holds ? 'must hold' : 'expected to break') }),
        burstBox(),
        el('table', { class: 'keys' },
          el('caption', { class: 'muted', text: 'keys from requests as they land' }),
          el('thead', {}, el('tr', {}, ...heads.map((h) => el('th', { scope: 'col', text: h })))),
          tbody),
        el('pre', { class: 'curl', text: st.curl.map((c) => curl(c.method, s.base + c.path)).join('\n') })));
      lanes.append(el('figure', { class: 'lanes-fig', 'data-store': s.name, hidden: true },
        el('figcaption', { text: s.name + ': one lane per request' }), el('div', { class: 'svg' })));
    }
    let row;
    if (st.sql) {
      // One trial of the race file: its own number of transactions.
      const status = el('span', { class: 'fire-status', role: 'status' });
      const button = el('button', { type: 'button', class: 'fire', text: 'Run ' + st.requests + ' transactions at once on each database' });
      button.addEventListener('click', () => fire(st.name, st.requests, button, status));
      row = el('div', { class: 'fire-row' }, button, status);
    } else if (st.not_burst) {
      row = el('div', { class: 'no-burst' },
        el('p', { text: 'No burst button: ' + st.name + ' ' + st.not_burst + '. Play it with racelab run:' }),
        el('pre', { class: 'curl', text: runLine(st) }));
    } else {
      const n = el('input', { type: 'number', min: 1, max: config.max_burst, value: st.requests, 'aria-label': 'requests in the burst' });
      const status = el('span', { class: 'fire-status', role: 'status' });
      const button = el('button', { type: 'button', class: 'fire', text: 'Fire ' + st.requests + ' at once' });
      n.addEventListener('input', () => { button.textContent = 'Fire ' + (n.value || '?') + ' at once'; });
      button.addEventListener('click', () => fire(st.name, Number(n.value), button, status));
      row = el('div', { class: 'fire-row' }, button, el('label', {}, 'N ', n), status);
    }
    root.append(el('section', { class: 'story', 'data-story': st.name },
      el('h2', { text: st.name }),
      el('p', { class: 'title', text: st.title }),
      el('p', { class: 'rule', text: 'Hard rule: ' + st.rule + '.' }),
      row,
      stores, lanes,
      st.fix ? el('details', { class: 'fix' }, el('summary', { text: 'How the fix works' }), el('p', { text: st.fix })) : null));
  }
}

// databaseCard is a SQL race's database: its level, then after a trial
// its figures, verdict and each transaction's timeline in words.
function databaseCard(s) {
  return el('article', { class: 'store', 'data-store': s.name },
    storeTitle(s),
    el('p', { class: 'guarantee', text: s.guarantee }),
    burstBox(el('ol', { class: 'txs' })));
}

// storeTitle is a store card's heading: its name, and its target when the
// name is not the target itself.
function storeTitle(s) {
  return el('h3', {}, s.name + ' ', el('span', { class: 'target', text: s.name === s.target ? '' : '(' + s.target + ')' }));
}

// burstBox is the part of a store's card a burst fills in: the figures,
// the verdict and its lines, then extra; hidden until the first burst.
function burstBox(...extra) {
  return el('div', { class: 'burst', hidden: true },
    el('p', { class: 'big' }, ...['allowed', 'counted', 'refused'].map((f) =>
      el('span', { class: 'figure' }, el('span', { class: 'num', 'data-field': f, text: '–' }), el('span', { class: 'lbl', text: f })))),
    ...['verdict', 'account', 'spread'].map((f) => el('p', { class: f, 'data-field': f })),
    el('p', { class: 'load-line', 'data-field': 'background' }),
    ...extra);
}

// post sends body as JSON to the page's API, with the token if any.
function post(path, body) {
  return fetch(path, {
    method: 'POST',
    headers: Object.assign({ 'Content-Type': 'application/json' },
      token ? { 'Authorization': 'Bearer ' + token } : {}),
    body: JSON.stringify(body),
  });
}

async function fire(story, n, button, status) {
  button.disabled = true;
  status.textContent = 'firing ' + n + ' at once…';
  try {
    const resp = await post('/classroom/burst', { story: story, requests: n });
    const body = await resp.json();
    if (!resp.ok) {
      status.textContent = body.error || ('refused: ' + resp.status);
      return;
    }
    status.textContent = 'fired at ' + body.at;
    drawBurst(body);
  } catch (e) {
    status.textContent = 'the server did not answer: ' + e;
  } finally {
    button.disabled = false;
  }
}

function section(story) { return document.querySelector('section[data-story=' + sel(story) + ']'); }

function drawBurst(b) {
  const sec = section(b.story);
  if (!sec) return;
  const id = b.at + '/' + b.requests + '/' + b.stores.map((s) => s.counted + (s.background_line || '')).join(',');
  if (drawn[b.story] === id) return;
  drawn[b.story] = id;
  for (const s of b.stores) {
    const art = sec.querySelector('article[data-store=' + sel(s.store) + ']');
    if (!art) continue;
    const box = art.querySelector('.burst');
    box.hidden = false;
    const set = (f, v) => { art.querySelector('[data-field=' + f + ']').textContent = v; };
    set('allowed', s.allowed);
    set('counted', s.counted);
    set('refused', s.refused);
    set('verdict', s.verdict + (s.failure ? ': ' + s.failure : ''));
    set('account', s.account || '');
    set('spread', (s.errors ? s.errors + ' failed · ' : '') + (s.spread || ''));
    set('background', s.background_line || '');
    const v = art.querySelector('[data-field=verdict]');
    v.classList.toggle('broken', s.broken);
    v.classList.toggle('held', !s.broken && s.verdict.startsWith('✓'));
    const txs = art.querySelector('ol.txs');
    if (txs) {
      // A race's replay is its last trial: the next look at it reloads.
      if (replay.story === b.story) {
        replay.data = null;
        if (!byId('replay').hidden) loadReplay(b.story);
      }
      txs.replaceChildren(...(s.transactions || []).map((t) => el('li', { 'data-tx': t.tx },
        el('strong', { text: '#' + t.tx + ' ' + t.outcome + (t.retries ? ' after ' + t.retries + ' retries' : '') }),
        el('span', { class: 'tx-events', text: ': ' + t.events.join(' · ') }))));
    }
    const fig = sec.querySelector('figure[data-store=' + sel(s.store) + ']');
    if (fig) {
      fig.hidden = !s.lanes;
      const what = txs ? ' transactions run at ' + b.at + ', one lane per transaction' : ' requests fired at ' + b.at + ', one lane per request';
      fig.querySelector('figcaption').textContent = s.store + ': ' + b.requests + what;
      fig.querySelector('.svg').innerHTML = s.lanes || '';
    }
  }
}

function num(v) { return v === undefined || v === null ? '–' : String(v); }

function drawKeys(story, withPlan, rows) {
  const sec = section(story);
  if (!sec) return;
  for (const art of sec.querySelectorAll('article.store')) {
    const store = art.getAttribute('data-store');
    const mine = rows.filter((r) => r.cells[store]);
    if (mine.length === 0) continue;
    const tbody = art.querySelector('tbody');
    tbody.replaceChildren(...mine.map((r) => {
      const c = r.cells[store];
      const stored = c.read_error ? c.read_error : num(c.stored);
      const plan = [c.plan, c.plan_read && 'reads ' + c.plan_read].filter(Boolean).join(' · ') || '–';
      return el('tr', { 'data-key': r.key },
        el('td', { 'data-field': 'key', text: r.key }),
        el('td', { 'data-field': 'requests', text: c.requests }),
        el('td', { 'data-field': 'allowed', text: c.allowed }),
        el('td', { 'data-field': 'refused', text: c.refused }),
        el('td', { 'data-field': 'answered', text: num(c.answered) }),
        el('td', { 'data-field': 'stored', text: stored }),
        withPlan ? el('td', { 'data-field': 'plan', text: plan }) : null);
    }));
  }
}

function drawLog(snap) {
  byId('log-total').textContent = snap.requests ? '(' + snap.requests + ' so far; the latest first)' : '';
  // A burst fired from this page is one line: its requests went to the
  // store all at once, not as curl lines.
  byId('log').replaceChildren(...snap.log.map((l) => el('li', { 'data-store': l.store },
    el('span', { class: 'time', text: l.at }),
    el('code', { text: l.burst ? 'Fire ' + l.burst + ' at once → ' + l.store + ', key ' + l.key : curl(l.method, l.uri) }),
    el('span', { class: 'status', text: l.burst ? '→' : '→ ' + l.status }),
    el('code', { text: l.answer }))));
}

function draw(snap) {
  for (const st of config.stories) {
    const sec = section(st.name);
    const button = sec.querySelector('button.fire');
    const status = sec.querySelector('.fire-status');
    if (snap.firing === st.name && button) {
      button.disabled = true;
      status.textContent = 'firing…';
    }
    if (snap.bursts[st.name]) drawBurst(snap.bursts[st.name]);
    drawKeys(st.name, st.plan, snap.keys[st.name] || []);
  }
  drawLoad(snap.background);
  drawLog(snap);
}

// --- The background load switch: the stores under load while it is on
// and a page is open; a burst shows what the load came to beside its
// verdict. ---

function buildLoad() {
  if (!config.loadable) return;
  byId('load-bar').hidden = false;
  const on = byId('load-on');
  const rate = byId('load-rate');
  rate.title = 'arrivals per second, such as 200/s; at most ' + config.max_background;
  on.addEventListener('change', () => switchLoad(on.checked, rate.value));
  rate.addEventListener('change', () => { if (on.checked) switchLoad(true, rate.value); });
}

async function switchLoad(on, rate) {
  const status = byId('load-status');
  status.textContent = on ? 'starting ' + rate + '…' : 'stopping…';
  try {
    const resp = await post('/classroom/background', on ? { on: true, rate: rate } : { on: false });
    const body = await resp.json();
    if (!resp.ok) {
      byId('load-on').checked = false;
      status.textContent = body.error || ('refused: ' + resp.status);
      return;
    }
    drawLoad(body);
  } catch (e) {
    status.textContent = 'the server did not answer: ' + e;
  }
}

function drawLoad(v) {
  if (!v || !config.loadable) return;
  byId('load-on').checked = v.on;
  const rate = byId('load-rate');
  if (v.on && document.activeElement !== rate) rate.value = v.rate; // not under a teacher's typing
  byId('load-status').textContent = v.on
    ? 'on: ' + v.rate + ' at ' + v.stores.join(', ') + ' while this page is open; each burst shows what it came to'
    : (v.why || 'off');
}

function listen() {
  const conn = byId('conn');
  const es = new EventSource('/classroom/events');
  es.onopen = () => { conn.textContent = '● live'; };
  es.onerror = () => { conn.textContent = '○ reconnecting…'; };
  es.onmessage = (m) => { draw(JSON.parse(m.data)); };
}

// --- Replay: explain's steps, one per click or key press. ---

const replay = { story: null, data: null, part: 0, step: 0 };

function buildReplay() {
  const pick = byId('replay-story');
  for (const st of config.stories) pick.append(el('option', { value: st.name, text: st.name }));
  pick.addEventListener('change', () => loadReplay(pick.value));
  byId('replay-next').addEventListener('click', () => move(1));
  byId('replay-prev').addEventListener('click', () => move(-1));
  byId('tab-live').addEventListener('click', () => show('live'));
  byId('tab-replay').addEventListener('click', () => show('replay'));
  document.addEventListener('keydown', (e) => {
    if (byId('replay').hidden || e.target.tagName === 'SELECT' || e.target.tagName === 'INPUT') return;
    if (e.key === 'ArrowRight' || e.key === ' ' || e.key === 'PageDown') { e.preventDefault(); move(1); }
    if (e.key === 'ArrowLeft' || e.key === 'PageUp') { e.preventDefault(); move(-1); }
  });
}

function show(which) {
  byId('live').hidden = which !== 'live';
  byId('replay').hidden = which !== 'replay';
  byId('tab-live').setAttribute('aria-pressed', String(which === 'live'));
  byId('tab-replay').setAttribute('aria-pressed', String(which === 'replay'));
  if (which === 'replay' && !replay.data && config.stories.length > 0) loadReplay(byId('replay-story').value);
}

async function loadReplay(story) {
  byId('replay-caption').textContent = 'replaying ' + story + '…';
  const resp = await fetch('/classroom/replay?story=' + encodeURIComponent(story));
  const body = await resp.json();
  if (!resp.ok) { byId('replay-caption').textContent = body.error; return; }
  Object.assign(replay, { story: story, data: body, part: 0, step: 0 });
  byId('replay-fix').textContent = body.fix;
  byId('replay-footer').textContent = body.footer;
  drawPart();
}

function drawPart() {
  const p = replay.data.replays[replay.part];
  byId('replay-heading').textContent = (replay.part + 1) + ' of ' + replay.data.replays.length + '. ' + p.heading;
  byId('replay-lanes').innerHTML = p.lanes;
  drawStep();
}

function drawStep() {
  const p = replay.data.replays[replay.part];
  for (const g of byId('replay-lanes').querySelectorAll('[data-step]')) {
    const k = Number(g.getAttribute('data-step'));
    g.classList.toggle('later', k > replay.step);
    g.classList.toggle('now', k === replay.step);
  }
  byId('replay-caption').textContent = replay.step === 0
    ? 'Hard rule: ' + replay.data.rule + '. Press → for the first of ' + p.steps.length + ' steps.'
    : 'Step ' + replay.step + ' of ' + p.steps.length + ' · ' + p.steps[replay.step - 1];
  byId('replay-outcome').textContent = replay.step === p.steps.length ? p.outcome : '';
}

function move(d) {
  if (!replay.data) return;
  const parts = replay.data.replays;
  let { part, step } = replay;
  step += d;
  if (step > parts[part].steps.length) {
    if (part + 1 >= parts.length) return;
    part++;
    step = 0;
  } else if (step < 0) {
    if (part === 0) return;
    part--;
    step = parts[part].steps.length;
  }
  const newPart = part !== replay.part;
  Object.assign(replay, { part: part, step: step });
  if (newPart) drawPart(); else drawStep();
}

start().catch((e) => { byId('conn').textContent = 'could not start: ' + e; });
