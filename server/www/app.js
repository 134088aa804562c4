/* app.js: the status page, live from one stream, GET /v1/events (read with
 * fetch, since EventSource cannot send a token): "hello" says who we are,
 * "status" brings health, cache, boards and the job figures, "job" each
 * job's change, "reset" that we fell behind. The job list is read once
 * (GET /v1/jobs) after each hello or reset; nothing is polled. Names and
 * messages from the server only ever go in as text. */
'use strict';
(function () {
  const TOKEN_KEY = 'eulernpu.token';
  const KEEP_JOBS = 500;          /* jobs held in the page at most */
  const RECENT = 50;              /* rows of the recent-jobs table */
  const WINDOW_S = 60;            /* throughput and latency: over this window */
  const RANK = {queued: 0, running: 1};   /* final states rank 2 */
  const $ = (id) => document.getElementById(id);
  const nf = new Intl.NumberFormat('en');

  const page = {
    me: null,          /* {name, admin} from hello */
    jobs: new Map(),   /* id -> job JSON */
    status: null,
    samples: [],       /* {t, m: status.metrics} for the throughput window */
    lastId: null,      /* the last job event's number (Last-Event-ID) */
    report: null,      /* the job id whose report is shown */
    abort: null,
    drawPending: false,
  };

  /* ---- helpers ------------------------------------------------------------ */

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'on') for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
      else e.setAttribute(k, v);
    }
    for (const k of kids) if (k != null) e.append(k);
    return e;
  }
  const token = () => sessionStorage.getItem(TOKEN_KEY) || '';
  function headers(extra) {
    const h = Object.assign({}, extra || {});
    if (token()) h.Authorization = 'Bearer ' + token();
    return h;
  }
  function ago(iso) {
    if (!iso) return '';
    const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
    if (s < 60) return `${Math.round(s)} s ago`;
    if (s < 3600) return `${Math.round(s / 60)} min ago`;
    if (s < 86400) return `${(s / 3600).toFixed(1)} h ago`;
    return new Date(iso).toLocaleString();
  }
  function secs(s) {
    if (s == null) return '';
    if (s < 1e-3) return `${Math.round(s * 1e6)} µs`;
    if (s < 1) return `${(s * 1e3).toFixed(s < 0.01 ? 2 : 0)} ms`;
    return `${s.toFixed(s < 10 ? 2 : 0)} s`;
  }
  const badge = (state, text) => el('span', {class: 'badge st-' + state}, text || state.replace('_', ' '));
  const shortId = (id) => el('code', {title: id}, id);
  function notice(msg) {
    const n = $('notice');
    n.textContent = msg || '';
    n.hidden = !msg;
  }
  /* The message of an error reply ({"error": {"code", "message"}}), or the status. */
  async function why(res) {
    try {
      const j = await res.json();
      const e = j.error || {};
      return `${e.code ? e.code + ': ' : ''}${e.message || res.statusText}`;
    } catch (_) {
      return `${res.status} ${res.statusText}`;
    }
  }
  function setConn(state, text) {
    const c = $('conn');
    c.className = 'badge st-' + state;
    c.textContent = text || state;
  }

  /* ---- the token ---------------------------------------------------------- */

  function askToken(msg) {
    $('login-why').textContent = msg;
    $('login').hidden = false;
    $('signout').hidden = !token();
    setConn('offline', 'not signed in');
    $('token').focus();
  }
  $('login').addEventListener('submit', (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $('token').value.trim());
    $('token').value = '';
    $('login').hidden = true;
    connect();
  });
  $('signout').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    if (page.abort) page.abort.abort();
    page.jobs.clear();
    draw();
    askToken('Token forgotten.');
  });

  /* ---- the data ----------------------------------------------------------- */

  function putJob(j) {
    const old = page.jobs.get(j.id);
    const rank = (s) => (s in RANK ? RANK[s] : 2);
    if (old && rank(old.state) > rank(j.state)) return;   /* a late copy of an older state */
    page.jobs.set(j.id, j);
  }
  function trimJobs() {
    if (page.jobs.size <= KEEP_JOBS) return;
    const done = [...page.jobs.values()].filter((j) => !(j.state in RANK))
      .sort((a, b) => Date.parse(a.finished || a.created) - Date.parse(b.finished || b.created));
    for (const j of done.slice(0, page.jobs.size - KEEP_JOBS)) page.jobs.delete(j.id);
  }
  async function loadJobs() {
    const [live, recent] = await Promise.all([
      fetch('/v1/jobs?state=queued,running&limit=' + KEEP_JOBS, {headers: headers()}),
      fetch('/v1/jobs?limit=' + RECENT, {headers: headers()})]);
    for (const res of [live, recent]) {
      if (!res.ok) throw new Error(await why(res));
      for (const j of (await res.json()).jobs || []) putJob(j);
    }
    trimJobs();
    schedule();
  }

  function onEvent(type, data, id) {
    let d;
    try {
      d = JSON.parse(data);
    } catch (_) {
      return;   /* not ours to read */
    }
    if (id) page.lastId = id;
    if (type === 'hello') {
      page.me = d;
      $('who').textContent = `as ${d.name}${d.admin ? ' (admin)' : ''}`;
      $('signout').hidden = !token();
      loadJobs().catch((e) => notice('Could not read the jobs: ' + e.message));
    } else if (type === 'status') {
      page.status = d;
      const now = Date.now() / 1000;
      if (d.metrics) page.samples.push({t: now, m: d.metrics});
      while (page.samples.length > 2 && page.samples[1].t < now - WINDOW_S) page.samples.shift();
      schedule();
    } else if (type === 'job') {
      putJob(d);
      trimJobs();
      schedule();
    } else if (type === 'reset') {
      loadJobs().catch((e) => notice('Could not read the jobs: ' + e.message));
    }
  }

  /* Server-sent events over fetch: blocks of "field: value" lines. */
  async function readStream(res) {
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '', ev = {type: 'message', data: [], id: null};
    for (;;) {
      const {value, done} = await reader.read();
      if (done) return;
      buf += dec.decode(value, {stream: true});
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, '');
        buf = buf.slice(nl + 1);
        if (line === '') {
          if (ev.data.length) onEvent(ev.type, ev.data.join('\n'), ev.id);
          ev = {type: 'message', data: [], id: null};
        } else if (!line.startsWith(':')) {
          const c = line.indexOf(':');
          const k = c < 0 ? line : line.slice(0, c);
          const v = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
          if (k === 'event') ev.type = v;
          else if (k === 'data') ev.data.push(v);
          else if (k === 'id') ev.id = v;
        }
      }
    }
  }

  async function connect() {
    if (page.abort) page.abort.abort();
    const ctl = new AbortController();
    page.abort = ctl;
    let wait = 1000;
    while (!ctl.signal.aborted) {
      try {
        const h = headers(page.lastId ? {'Last-Event-ID': page.lastId} : {});
        const res = await fetch('/v1/events', {headers: h, cache: 'no-store', signal: ctl.signal});
        if (res.status === 401 || res.status === 403) {
          askToken(token() ? `That token was refused: ${await why(res)}` : 'This server asks for a token.');
          return;
        }
        if (!res.ok) throw new Error(await why(res));
        setConn('live');
        notice('');
        wait = 1000;
        await readStream(res);   /* ends after the server's stream limit: go on */
      } catch (e) {
        if (ctl.signal.aborted) return;
        setConn('reconnecting', 'reconnecting');
        notice(`The connection to the server broke (${e.message}); trying again.`);
      }
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, 30000);
    }
  }

  /* ---- actions ------------------------------------------------------------ */

  async function cancel(id, btn) {
    btn.disabled = true;
    const res = await fetch('/v1/jobs/' + encodeURIComponent(id), {method: 'DELETE', headers: headers()});
    if (!res.ok) {
      notice(`Could not cancel ${id}: ${await why(res)}`);
      btn.disabled = false;
      return;
    }
    const j = await res.json().catch(() => null);
    if (j && j.id) putJob(j);
    schedule();
  }

  /* A link the browser could not follow with our token: fetched here. */
  async function download(ev, url, name) {
    if (!token()) return;   /* no token to send: the plain link works */
    ev.preventDefault();
    const res = await fetch(url, {headers: headers()});
    if (!res.ok) {
      notice(`Could not fetch ${name}: ${await why(res)}`);
      return;
    }
    const a = el('a', {href: URL.createObjectURL(await res.blob()), download: name});
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  }

  async function showReport(job) {
    const box = $('report-body');
    page.report = job.id;
    $('report').hidden = false;
    $('h-report').textContent = `Report of job ${job.id}`;
    box.replaceChildren(el('p', {class: 'muted'}, 'Loading…'));
    $('h-report').focus();
    const res = await fetch(`/v1/jobs/${encodeURIComponent(job.id)}/report`, {headers: headers()});
    if (!res.ok) {
      box.replaceChildren(el('p', {class: 'err'}, `No report: ${await why(res)}`));
      return;
    }
    window.enpuReport.render(box, await res.json(), job);
  }

  /* ---- drawing ------------------------------------------------------------ */

  function schedule() {
    if (page.drawPending) return;
    page.drawPending = true;
    requestAnimationFrame(() => {
      page.drawPending = false;
      draw();
    });
  }
  /* Rows into a table; each cell also carries its column's name, which a
   * phone's layout shows beside it (app.css: a row per card). A row the
   * same as before stays as it is; a control that had the focus keeps it
   * in its row's new copy (rows are keyed by data-job or data-board). */
  const key = (r) => r.dataset.job || r.dataset.board;
  const ctlName = (e) => e && (e.getAttribute('aria-label') || e.textContent);
  function fill(table, empty, rows) {
    const t = $(table), body = t.tBodies[0];
    const names = [...t.tHead.rows[0].cells].map((c) => c.textContent);
    const old = new Map([...body.rows].map((r) => [key(r), r]));
    const focus = document.activeElement;
    const focusRow = focus && body.contains(focus) ? key(focus.closest('tr')) : null;
    const next = rows.map((r) => {
      [...r.cells].forEach((c, i) => c.setAttribute('data-label', names[i] || ''));
      const o = old.get(key(r));
      return o && o.outerHTML === r.outerHTML ? o : r;
    });
    t.hidden = rows.length === 0;
    $(empty).hidden = rows.length !== 0;
    if (next.length === body.rows.length && next.every((r, i) => r === body.rows[i])) return;
    body.replaceChildren(...next);
    if (focusRow && document.activeElement !== focus) {   /* moving a node blurs it */
      const row = next.find((r) => key(r) === focusRow);
      const same = body.contains(focus) ? focus : row &&
        [...row.querySelectorAll('button, a')].find((e) => ctlName(e) === ctlName(focus));
      if (same) same.focus();
    }
  }
  const mayCancel = (j) => page.me && (page.me.admin || page.me.name === j.owner);

  function drawBoards(boards) {
    fill('boards-table', 'boards-empty', boards.map((b) => {
      const state = b.state === 'up' && b.busy ? 'busy' : b.state;
      return el('tr', {'data-board': b.name},
        el('th', {scope: 'row'}, b.name),
        el('td', null, badge(state)),
        el('td', {title: b.since || ''}, b.since ? ago(b.since) : 'not checked yet'),
        el('td', null, b.job ? shortId(b.job) : '—'),
        el('td', {class: 'num'}, String(b.queue || 0)),
        el('td', null, (b.backends || []).join(', ')),
        el('td', {class: 'num'}, nf.format(b.jobs_done || 0)),
        el('td', {class: 'err'}, b.last_error || ''));
    }));
  }

  function drawQueue(jobs) {
    const live = jobs.filter((j) => j.state in RANK)
      .sort((a, b) => RANK[b.state] - RANK[a.state] || (a.position || 0) - (b.position || 0));
    fill('queue-table', 'queue-empty', live.map((j) => {
      const act = el('td');
      if (mayCancel(j)) {
        const btn = el('button', {type: 'button', class: 'danger', 'aria-label': `Cancel job ${j.id}`}, 'Cancel');
        btn.addEventListener('click', () => cancel(j.id, btn));
        act.append(btn);
      }
      return el('tr', {'data-job': j.id, 'data-state': j.state},
        el('th', {scope: 'row'}, shortId(j.id)),
        el('td', null, badge(j.state)),
        el('td', {class: 'num'}, j.position == null ? '' : String(j.position)),
        el('td', {class: 'num'}, j.eta == null ? '' : secs(j.eta)),
        el('td', null, j.owner || ''),
        el('td', null, j.priority || ''),
        el('td', null, j.backend),
        el('td', null, j.board || (j.waiting ? el('span', {class: 'muted'}, j.waiting) : '')),
        act);
    }));
  }

  function drawRecent(jobs) {
    const done = jobs.filter((j) => !(j.state in RANK))
      .sort((a, b) => Date.parse(b.finished || b.created) - Date.parse(a.finished || a.created))
      .slice(0, RECENT);
    fill('recent-table', 'recent-empty', done.map((j) => {
      const base = '/v1/jobs/' + encodeURIComponent(j.id);
      const res = el('td'), rep = el('td');
      if (j.result) {
        const a = el('a', {href: base + '/result', download: j.id + '.npz'}, 'result.npz');
        a.addEventListener('click', (ev) => download(ev, base + '/result', j.id + '.npz'));
        res.append(a);
      }
      if (j.report) {
        const b = el('button', {type: 'button', 'aria-label': `Show the report of job ${j.id}`}, 'Chart');
        b.addEventListener('click', () => showReport(j));
        const a = el('a', {href: base + '/report', download: j.id + '.report.json'}, 'json');
        a.addEventListener('click', (ev) => download(ev, base + '/report', j.id + '.report.json'));
        rep.append(b, ' ', a);
      }
      const state = el('td', null, badge(j.state));
      if (j.error && j.error.message) state.append(el('div', {class: 'err'}, j.error.message));
      return el('tr', {'data-job': j.id, 'data-state': j.state},
        el('th', {scope: 'row'}, shortId(j.id)), state,
        el('td', null, j.backend + (j.board ? ` on ${j.board}` : '')),
        el('td', null, j.owner || ''),
        el('td', {title: j.finished || ''}, ago(j.finished)),
        el('td', {class: 'num'}, secs(j.seconds)),
        res, rep);
    }));
  }

  function dl(id, pairs) {
    $(id).replaceChildren(...pairs.map(([k, v]) => el('div', {'data-figure': k}, el('dt', null, k), el('dd', null, String(v)))));
  }

  /* The q-quantile of a bucket histogram (per-bucket counts, bounds le;
   * past the last bound is "> last"): linear within a bucket. */
  function quantile(q, le, buckets, count) {
    if (!count) return null;
    const want = q * count;
    let below = 0;
    for (let i = 0; i < le.length; i++) {
      if (below + buckets[i] >= want) {
        const lo = i ? le[i - 1] : 0;
        return buckets[i] ? lo + (le[i] - lo) * ((want - below) / buckets[i]) : le[i];
      }
      below += buckets[i];
    }
    return Infinity;
  }
  function diff(a, b) {   /* histogram b minus a ({buckets, count, sum}) */
    return {buckets: b.buckets.map((v, i) => v - (a ? a.buckets[i] : 0)),
            count: b.count - (a ? a.count : 0), sum: b.sum - (a ? a.sum : 0)};
  }
  const doneTotal = (m) => Object.values(m.done || {}).reduce((x, y) => x + y, 0);

  function drawRates(st) {
    const s = page.samples;
    const m = st.metrics;
    const h = st.health || {};
    if (!m) return;
    const first = s.length > 1 ? s[0] : null;
    const span = first ? Math.max(1, Date.now() / 1000 - first.t) : 0;
    const win = (k) => diff(first && first.m[k], m[k]);
    const run = win('run_s'), queue = win('queue_s');
    const use = (hh) => (hh.count ? hh : m.run_s);
    const q = (p, hh) => {
      const v = quantile(p, m.le, hh.buckets, hh.count);
      return v == null ? '—' : v === Infinity ? `> ${secs(m.le[m.le.length - 1])}` : secs(v);
    };
    const r = use(run);
    const rate = first ? (doneTotal(m) - doneTotal(first.m)) / span : null;
    dl('rates', [
      ['jobs/s (last minute)', rate == null ? '—' : rate >= 10 ? Math.round(rate) : rate.toFixed(2)],
      ['run p50' + (run.count ? '' : ' (all)'), q(0.5, r)],
      ['run p95' + (run.count ? '' : ' (all)'), q(0.95, r)],
      ['mean run', r.count ? secs(r.sum / r.count) : '—'],
      ['mean wait', queue.count ? secs(queue.sum / queue.count) : m.queue_s.count ? secs(m.queue_s.sum / m.queue_s.count) : '—'],
      ['workers', h.workers == null ? '—' : h.workers],
    ]);
    const d = m.done || {};
    dl('counts', [['queued', h.queue_depth || 0], ['running', h.running || 0],
                  ['succeeded', nf.format(d.succeeded || 0)], ['failed', nf.format(d.failed || 0)],
                  ['cancelled', nf.format(d.cancelled || 0)], ['timed out', nf.format(d.timed_out || 0)]]);
  }

  function drawCache(c) {
    const rate = (v) => (v == null ? '—' : `${(100 * v).toFixed(0)}%`);
    const B = window.enpuReport.bytes;
    dl('cache-figures', [
      ['size', B(c.blob_bytes || 0) + (c.max_bytes ? ` of ${B(c.max_bytes)}` : '')],
      ['blobs', nf.format(c.blobs || 0)],
      ['artifacts', nf.format(c.artifacts || 0)],
      ['compile hits', rate(c.ac_hit_rate)],
      ['blob hits', rate(c.cas_hit_rate)],
      ['evictions', nf.format(c.evictions || 0)],
    ]);
  }

  function draw() {
    const st = page.status;
    const jobs = [...page.jobs.values()];
    if (st) {
      const h = st.health || {};
      $('server').textContent = `${h.version || ''} · ${h.role || ''}` + (h.status && h.status !== 'ok' ? ` · ${h.status}` : '');
      drawBoards(st.boards || []);
      drawRates(st);
      drawCache(st.cache || {});
    }
    drawQueue(jobs);
    drawRecent(jobs);
  }

  setInterval(() => page.status && drawRates(page.status), 5000);   /* the window moves on */
  connect();
})();
