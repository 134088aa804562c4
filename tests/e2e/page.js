// page.js: the status page in headless Chromium (driven by page.sh, which
// starts the lab server and its two board agents and passes them in the
// environment). Prints TAP-like "ok - ..." / "not ok - ..." lines that
// page.sh counts, and the page's load figures as "# load ..." lines.
// Every wait is bounded; nothing assumes how long a step takes.
'use strict';
const fs = require('fs');
const path = require('path');
const {execFileSync} = require('child_process');
const puppeteer = require(process.env.PUPPETEER);

const E = process.env;
const URL0 = E.LAB_URL;
const OUT = E.OUT_DIR;
const WAIT = 60000;
let pass = 0, fail = 0;

function ok(cond, what, detail) {
  if (cond) {
    pass++;
    console.log('ok - ' + what);
  } else {
    fail++;
    console.log('not ok - ' + what + (detail ? '\n    | ' + String(detail).split('\n').join('\n    | ') : ''));
  }
  return cond;
}
// A step that waits for the page: ok when it happens within WAIT. When it
// does not, what follows it cannot happen either: the test ends there.
class Bail extends Error {}
async function until(what, fn) {
  try {
    await fn();
  } catch (e) {
    ok(false, what, e.message);
    throw new Bail(what);
  }
  return ok(true, what);
}
// eulernpu as a user (the CLI, as a person at a terminal would do it).
function enpu(token, ...args) {
  return execFileSync(path.join(E.BIN, 'eulernpu'), args, {
    env: Object.assign({}, process.env, {EULERNPU_SERVER: URL0, EULERNPU_TOKEN: token}),
    encoding: 'utf8', timeout: 60000}).trim();
}
async function api(token, p, opt) {
  const res = await fetch(URL0 + p, Object.assign({headers: {Authorization: 'Bearer ' + token}}, opt || {}));
  return {status: res.status, json: await res.json().catch(() => null)};
}
// A click in the page itself: the tables are redrawn as events come, so a
// handle taken before the click may be gone by then.
const click = (page, sel) => page.waitForFunction((s) => {
  const e = document.querySelector(s);
  if (e) e.click();
  return !!e;
}, {}, sel);
const shot = (page, name) => page.screenshot({path: path.join(OUT, name), fullPage: true});
// The row of job id in table (queue-table or recent-table) in the given state.
const jobRow = (table, id, state) => `#${table} tr[data-job="${id}"][data-state="${state}"]`;

// The lowest contrast of visible text against what is behind it (WCAG
// AA asks 4.5:1), run in the page.
function contrast() {
  const rgb = (c) => (c.match(/[\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const bg = (e) => {
    for (; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  let worst = 21, where = '';
  for (const e of document.querySelectorAll('td, th, dd, dt, p, span, a, button, h1, h2, h3, code, li, summary, figcaption')) {
    if (!e.offsetParent || !e.textContent.trim()) continue;
    const l1 = lum(rgb(getComputedStyle(e).color).slice(0, 3)), l2 = lum(bg(e));
    const r = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    if (r < worst) { worst = r; where = `${e.tagName} ${e.className} "${e.textContent.slice(0, 30)}"`; }
  }
  return {worst, where};
}

async function main() {
  fs.mkdirSync(OUT, {recursive: true});
  const browser = await puppeteer.launch({
    executablePath: E.CHROMIUM, headless: true,
    // root in CI: no sandbox; no GPU on the machine
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions'],
  });
  const errors = [];
  // A tab whose errors count; the one expected is the stream's 401 before
  // a token is given (st.signedIn false).
  async function tab() {
    const p = await browser.newPage(), st = {signedIn: false};
    p.setDefaultTimeout(WAIT);
    p.on('pageerror', (e) => errors.push('page error: ' + e.message));
    p.on('console', (m) => {
      if (m.type() === 'error' && !(!st.signedIn && /status of 401/.test(m.text())))
        errors.push('console: ' + m.text());
    });
    p.on('response', (r) => {
      if (r.status() >= 400 && !(!st.signedIn && r.status() === 401))
        errors.push(`HTTP ${r.status()} for ${r.url()}`);
    });
    return [p, st];
  }
  try {
    const [page, st] = await tab();
    await page.setViewport({width: 1280, height: 900});

    // ---- load: the page and its files, and what they cost --------------------
    const t0 = Date.now();
    const res = await page.goto(URL0 + '/', {waitUntil: 'load'});
    const loadMs = Date.now() - t0;
    ok(res.status() === 200, 'GET / answers 200', res.status());
    ok(/text\/html/.test(res.headers()['content-type'] || ''), 'as text/html');
    ok(/default-src 'self'/.test(res.headers()['content-security-policy'] || ''),
       'with a Content-Security-Policy of its own origin only');
    const perf = await page.evaluate(() => {
      const n = performance.getEntriesByType('navigation')[0];
      const files = performance.getEntriesByType('resource').filter((r) => r.name.includes('/ui/'));
      return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd,
              bytes: n.encodedBodySize + files.reduce((a, r) => a + r.encodedBodySize, 0),
              files: files.length + 1,
              external: performance.getEntriesByType('resource')
                .filter((r) => !r.name.startsWith(location.origin)).length};
    });
    console.log(`# load: ${perf.files} files, ${perf.bytes} bytes, DOMContentLoaded ${perf.dcl.toFixed(1)} ms, ` +
                `load ${perf.load.toFixed(1)} ms (goto ${loadMs} ms)`);
    ok(perf.external === 0, 'nothing is fetched from another origin (works offline)', perf.external);
    ok(perf.files >= 4, 'its HTML, CSS, scripts and icon all load', perf.files);

    // ---- the token ---------------------------------------------------------------
    await until('a TCP server with tokens: the page asks for one',
                () => page.waitForSelector('#login:not([hidden]) #token'));
    await shot(page, 'login.png');
    const focused = await page.evaluate(() => document.activeElement && document.activeElement.id);
    ok(focused === 'token', 'the token field has the focus', focused);
    st.signedIn = true;
    await page.type('#token', E.ALICE_TOKEN);
    await page.keyboard.press('Enter');
    await until('signed in: the stream is live', () => page.waitForFunction(
      () => document.querySelector('#conn').textContent === 'live'));
    await until('... as alice, a user', () => page.waitForFunction(
      () => /as alice$/.test(document.querySelector('#who').textContent)));
    ok(await page.evaluate(() => sessionStorage.getItem('eulernpu.token')) === E.ALICE_TOKEN,
       'the token is kept in sessionStorage');

    // ---- boards ----------------------------------------------------------------
    for (const b of ['b1', 'b2'])
      await until(`board ${b} shows up`, () => page.waitForSelector(
        `#boards-table tr[data-board="${b}"] .st-up`));

    // ---- jobs: running, queued, cancelled, succeeded ---------------------------------
    // The daemons hold every job running until page.sh's gate is released.
    const j1 = enpu(E.ALICE_TOKEN, 'run', '--artifact', E.CNN_SIM, '--input', E.CNN_INPUT, '--detach');
    await until('a job shows as running', () => page.waitForSelector(jobRow('queue-table', j1, 'running')));
    const j2 = enpu(E.ALICE_TOKEN, 'run', '--artifact', E.MLP_SIM, '--input', E.MLP_INPUT, '--detach');
    await until('a second one queued behind it, at position 1', () => page.waitForFunction(
      (sel) => { const r = document.querySelector(sel); return r && r.cells[2].textContent === '1'; },
      {}, jobRow('queue-table', j2, 'queued')));
    // a keyboard user on a Cancel button keeps the focus while rows are redrawn
    await page.evaluate((id) => document.querySelector(`#queue-table button[aria-label="Cancel job ${id}"]`).focus(), j1);
    const jb = enpu(E.BOB_TOKEN, 'run', '--artifact', E.MLP_SIM_BOB, '--input', E.MLP_INPUT, '--detach');
    const j3 = enpu(E.ALICE_TOKEN, 'run', '--artifact', E.MLP_FPGA, '--input', E.MLP_INPUT, '--detach');
    await until('a board job runs on a board, which shows it as its job', () => page.waitForFunction(
      (id) => [...document.querySelectorAll('#boards-table tr')].some(
        (r) => r.querySelector('.st-busy') && r.cells[3].textContent === id), {}, j3));
    ok(await page.$(`tr[data-job="${jb}"]`) === null, "bob's job is not on alice's page");
    const still = await page.evaluate(() => document.activeElement.getAttribute('aria-label'));
    ok(still === `Cancel job ${j1}`, 'the focused Cancel button kept the focus through the redraws', still);
    const cancels = await page.$$eval('#queue-table button', (bs) => bs.map((b) => b.getAttribute('aria-label')));
    ok(cancels.includes(`Cancel job ${j2}`) && cancels.includes(`Cancel job ${j1}`),
       'alice has a cancel button on each of her jobs', cancels.join(', '));
    await shot(page, 'queue.png');
    await click(page, `${jobRow('queue-table', j2, 'queued')} button`);
    await until('her cancel button cancels the queued job', () => page.waitForSelector(
      jobRow('recent-table', j2, 'cancelled')));
    ok((await api(E.ALICE_TOKEN, '/v1/jobs/' + j2)).json.state === 'cancelled', '... as the server says too');

    // ---- an admin, in another tab: every job, a Cancel button on each -------------------
    const [adm, ast] = await tab();
    await adm.goto(URL0 + '/');
    await adm.waitForSelector('#login:not([hidden]) #token');
    ast.signedIn = true;
    await adm.type('#token', E.ADMIN_TOKEN);
    await adm.keyboard.press('Enter');
    await until("an admin's page shows bob's job with a Cancel button", () => adm.waitForSelector(
      `${jobRow('queue-table', jb, 'queued')} button[aria-label="Cancel job ${jb}"]`));
    ok(/as ops \(admin\)$/.test(await adm.$eval('#who', (e) => e.textContent)), '... signed in as the admin');
    await adm.close();
    await page.bringToFront();   // a background tab draws no frames

    // ---- a board goes down: its job moves to the other ---------------------------------
    const busy = await page.$$eval('#boards-table tr', (rs, id) => rs.filter(
      (r) => r.cells[3].textContent === id).map((r) => r.dataset.board), j3);
    const gone = busy[0], other = gone === 'b1' ? 'b2' : 'b1';
    process.kill(Number(gone === 'b1' ? E.B1_PID : E.B2_PID), 'SIGKILL');
    await until(`the killed board ${gone} shows as down`, () => page.waitForSelector(
      `#boards-table tr[data-board="${gone}"] .st-down`));
    const lastErr = await page.$eval(`#boards-table tr[data-board="${gone}"]`, (r) => r.cells[7].textContent);
    ok(lastErr.length > 0, '... with its last error', lastErr);
    await until(`... and its job runs again on ${other}`, () => page.waitForFunction(
      (id, b) => [...document.querySelectorAll('#boards-table tr')].some(
        (r) => r.dataset.board === b && r.cells[3].textContent === id), {}, j3, other));
    await shot(page, 'board-down.png');

    // ---- results and reports -----------------------------------------------------------
    fs.rmSync(E.HOLD, {force: true});   // let every job end
    await until('the jobs succeed', async () => {
      await page.waitForSelector(jobRow('recent-table', j1, 'succeeded'));
      await page.waitForSelector(jobRow('recent-table', j3, 'succeeded'));
    });
    const link = await page.$eval(`${jobRow('recent-table', j1, 'succeeded')} a[download$=".npz"]`,
                                  (a) => a.getAttribute('href'));
    ok(link === `/v1/jobs/${j1}/result`, 'a finished job links its result', link);
    const figs = await page.$$eval('#throughput dd', (d) => d.map((x) => x.textContent));
    ok(figs.length >= 4 && figs[0] !== '—', 'throughput and latency show figures', figs.join(' | '));
    const cache = await page.$$eval('#cache dd', (d) => d.map((x) => x.textContent));
    ok(cache.length >= 4 && /\d/.test(cache[0]), 'the cache shows its size and hit rates', cache.join(' | '));

    const rep = (await api(E.ALICE_TOKEN, `/v1/jobs/${j1}/report`)).json;
    await click(page, `${jobRow('recent-table', j1, 'succeeded')} button`);
    await until("the npu_sim report's chart appears", () => page.waitForSelector(
      '#report-body svg[data-chart="cycles"] rect.bar'));
    const bars = await page.$$eval('#report-body svg[data-chart="cycles"] rect.bar[data-series="compute"]',
      (rs) => rs.map((r) => [r.dataset.op, Number(r.dataset.value)]));
    const want = rep.npu.ops.filter((o) => o.compute_cycles > 0).map((o) => [o.name, o.compute_cycles]);
    ok(JSON.stringify(bars) === JSON.stringify(want), "a compute bar per op, each the report's cycles",
       JSON.stringify(bars) + '\nwant ' + JSON.stringify(want));
    const dram = await page.$$eval('#report-body svg[data-chart="dram"] rect.bar', (rs) => rs.length);
    ok(dram > 0, 'DRAM traffic bars', dram);
    const util = await page.$$eval('#report-body svg[data-chart="utilisation"] rect.bar', (rs) => rs.length);
    ok(util === rep.npu.ops.filter((o) => o.utilisation > 0).length, 'a utilisation bar per busy op', util);
    const focusRep = await page.evaluate(() => document.activeElement.id);
    ok(focusRep === 'h-report', 'the report takes the focus', focusRep);
    await shot(page, 'report-npu.png');
    await page.evaluate(() => { document.activeElement.blur(); window.scrollTo(0, 0); });
    await page.screenshot({path: path.join(OUT, 'overview.png'), clip: {x: 0, y: 0, width: 1280, height: 1500}});

    await click(page, `${jobRow('recent-table', j3, 'succeeded')} button`);
    await until("the fpga_board report shows the PL/PS split", () => page.waitForSelector(
      '#report-body svg[data-chart="split"] rect.bar[data-series="PL"]'));
    const frep = (await api(E.ALICE_TOKEN, `/v1/jobs/${j3}/report`)).json;
    const seg = await page.$$eval('#report-body svg[data-chart="segments"] rect.bar[data-series="compute"]',
                                  (rs) => rs.map((r) => Number(r.dataset.value)));
    ok(JSON.stringify(seg) === JSON.stringify(frep.fpga.segments.map((s) => s.compute_cycles)),
       "a bar per PL segment, its compute cycles the report's", JSON.stringify(seg));
    await shot(page, 'report-fpga.png');

    // ---- accessibility --------------------------------------------------------------------
    const a11y = await page.evaluate(() => {
      const bad = [];
      if (!document.documentElement.lang) bad.push('no lang');
      for (const s of document.querySelectorAll('svg[role="img"]')) {
        const ids = (s.getAttribute('aria-labelledby') || '').split(' ');
        if (ids.length < 2 || ids.some((i) => !document.getElementById(i) || !document.getElementById(i).textContent))
          bad.push('a chart without a title and description');
      }
      for (const b of document.querySelectorAll('button, a[href]'))
        if (!(b.getAttribute('aria-label') || b.textContent.trim())) bad.push('a control without a name');
      for (const i of document.querySelectorAll('input'))
        if (!document.querySelector(`label[for="${i.id}"]`)) bad.push('an input without a label');
      return bad;
    });
    ok(a11y.length === 0, 'charts have text alternatives, controls names, inputs labels', a11y.join('; '));
    for (const scheme of ['light', 'dark']) {
      await page.emulateMediaFeatures([{name: 'prefers-color-scheme', value: scheme}]);
      const c = await page.evaluate(contrast);
      ok(c.worst >= 4.5, `${scheme} scheme: text contrast at least 4.5:1 (lowest ${c.worst.toFixed(2)})`, c.where);
    }
    await page.emulateMediaFeatures([]);
    // keyboard: from the top of the page, the first Tab stop skips to the status
    await page.evaluate(() => { document.activeElement.blur(); window.scrollTo(0, 0); });
    await page.mouse.click(2, 2);
    await page.keyboard.press('Tab');
    const first = await page.evaluate(() => document.activeElement.className);
    ok(first === 'skip', 'the first Tab stop is the skip link', first);
    await page.keyboard.press('Enter');
    const skipped = await page.evaluate(() => document.activeElement.id);
    ok(skipped === 'main', '... which moves the focus to the status', skipped);

    // ---- a phone ---------------------------------------------------------------------------
    await page.setViewport({width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 2});
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    ok(wide <= 390, 'on a phone the page fits the screen (tables scroll inside)', wide);
    await shot(page, 'phone.png');

    ok(errors.length === 0, 'no console errors, page errors or failed requests', errors.join('\n'));
  } finally {
    await browser.close();
  }
}

main().then(() => {
  console.log(`${pass} passed, ${fail} failed`);
  process.exit(fail ? 1 : 0);
}, (e) => {
  if (!(e instanceof Bail)) {
    console.log('not ok - the browser test ran to its end\n    | ' + (e && e.stack || e));
    fail++;
  }
  console.log(`${pass} passed, ${fail} failed`);
  process.exit(1);
});
