/* report.js: a job's report.json as charts (docs/report.md has its fields).
 * npu_sim: cycles (compute and stall), DRAM traffic and utilisation per op
 * as horizontal SVG bars; fpga_board: the PL/PS split and each PL
 * segment's compute and DMA cycles. Every chart has a title and a text
 * description, and a table of its numbers beside it (the text
 * alternative); names from the spec only ever go in as text. */
'use strict';
(function () {
  const SVG = 'http://www.w3.org/2000/svg';
  const nf = new Intl.NumberFormat('en');
  const num = (v) => nf.format(v);
  let chartSeq = 0;

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const k of kids) if (k != null) e.append(k);
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text != null) e.textContent = text;
    return e;
  }
  function bytes(n) {
    if (n < 1024) return num(n) + ' B';
    const u = ['KiB', 'MiB', 'GiB', 'TiB'];
    let i = -1;
    do { n /= 1024; i++; } while (n >= 1024 && i < u.length - 1);
    return (n < 10 ? n.toFixed(1) : Math.round(n)) + ' ' + u[i];
  }
  const pct = (f) => (100 * f).toFixed(f < 0.1 ? 1 : 0) + '%';

  function figures(pairs) {
    const dl = el('dl', {class: 'figures'});
    for (const [k, v] of pairs) dl.append(el('div', null, el('dt', null, k), el('dd', null, String(v))));
    return dl;
  }

  /* Horizontal stacked bars: rows [{label, parts: [numbers]}], series
   * [{name, cls}], fmt for values, max (or the largest row's sum). */
  function hbars({title, desc, rows, series, fmt, max, kind}) {
    const id = 'chart' + (++chartSeq);
    const W = 720, labelW = 150, valueW = 100, rowH = 22, top = 4;
    const barW = W - labelW - valueW;
    const total = (r) => r.parts.reduce((a, b) => a + b, 0);
    const top1 = max || Math.max(1, ...rows.map(total));
    const H = top + rows.length * rowH + 4;
    const s = svg('svg', {class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img',
                          'aria-labelledby': `${id}-t ${id}-d`, 'data-chart': kind});
    s.append(svg('title', {id: `${id}-t`}, title), svg('desc', {id: `${id}-d`}, desc));
    s.append(svg('line', {class: 'axis', x1: labelW, x2: labelW, y1: 0, y2: H}));
    rows.forEach((r, i) => {
      const y = top + i * rowH;
      const name = r.label.length > 20 ? r.label.slice(0, 19) + '…' : r.label;
      const lt = svg('text', {x: labelW - 6, y: y + 15, 'text-anchor': 'end'}, name);
      lt.append(svg('title', null, r.label));
      s.append(lt);
      let x = labelW;
      r.parts.forEach((v, k) => {
        if (!(v > 0)) return;
        const w = Math.max(1, (v / top1) * barW);
        const b = svg('rect', {x: x.toFixed(1), y: y + 3, width: w.toFixed(1), height: rowH - 6,
                               class: 'bar ' + series[k].cls, 'data-op': r.label,
                               'data-series': series[k].name, 'data-value': String(v)});
        b.append(svg('title', null, `${r.label}, ${series[k].name}: ${fmt(v)}`));
        s.append(b);
        x += w;
      });
      s.append(svg('text', {x: (x + 6).toFixed(1), y: y + 15}, fmt(total(r))));
    });
    const legend = el('ul', {class: 'legend'});
    if (series.length > 1)
      for (const se of series) legend.append(el('li', null, el('span', {class: 'sw ' + se.cls, 'aria-hidden': 'true'}), se.name));
    const head = el('tr', null, el('th', {scope: 'col'}, 'Name'),
                    ...series.map((se) => el('th', {scope: 'col', class: 'num'}, se.name)));
    if (series.length > 1) head.append(el('th', {scope: 'col', class: 'num'}, 'Total'));
    const body = el('tbody');
    for (const r of rows) {
      const tr = el('tr', null, el('th', {scope: 'row'}, r.label),
                    ...r.parts.map((v) => el('td', {class: 'num'}, fmt(v))));
      if (series.length > 1) tr.append(el('td', {class: 'num'}, fmt(total(r))));
      body.append(tr);
    }
    const table = el('table', null, el('caption', {class: 'sr'}, title), el('thead', null, head), body);
    return el('figure', {'aria-labelledby': `${id}-c`},
              el('h3', {id: `${id}-c`}, title), legend, s,
              el('figcaption', null, desc),
              el('details', null, el('summary', null, 'The numbers'), el('div', {class: 'scroll'}, table)));
  }

  function npu(n) {
    const ops = n.ops || [], t = n.totals || {}, tg = n.target || {};
    const cyc = (o) => (o.compute_cycles || 0) + (o.stall_cycles || 0);
    const all = ops.reduce((a, o) => a + cyc(o), 0) || 1;
    const hot = ops.slice().sort((a, b) => cyc(b) - cyc(a))[0];
    const out = [];
    out.push(figures([
      ['cycles', num(t.cycles || 0)],
      ['time', `${num(t.time_us || 0)} µs at ${num(tg.clock_mhz || t.clock_mhz || 0)} MHz`],
      ['stall cycles', num(t.stall_cycles || 0)],
      ['utilisation', pct(t.utilisation || 0)],
      ['DRAM read', bytes(t.dram_read_bytes || 0)],
      ['DRAM written', bytes(t.dram_write_bytes || 0)],
      ['peak SRAM', bytes(t.peak_sram_bytes || 0)],
      ['array', `${(tg.array || []).join('×')} ${tg.dataflow || ''}`],
    ]));
    if (!ops.length) return out;
    out.push(hbars({
      kind: 'cycles', title: 'Cycles per op',
      desc: `Compute and stall cycles of each of the ${ops.length} ops; ` +
            (hot ? `the hottest is ${hot.name} (${hot.op}) with ${pct(cyc(hot) / all)} of the cycles.` : ''),
      rows: ops.map((o) => ({label: o.name, parts: [o.compute_cycles || 0, o.stall_cycles || 0]})),
      series: [{name: 'compute', cls: 'f1'}, {name: 'stall', cls: 'f2'}], fmt: num}));
    const ds = [['ifmap', 'read_bytes', 'ifmap read', 'f1'], ['filter', 'read_bytes', 'filter read', 'f3'],
                ['ofmap', 'read_bytes', 'ofmap read', 'f5'], ['ofmap', 'write_bytes', 'ofmap written', 'f2'],
                ['ifmap', 'write_bytes', 'ifmap written', 'f6'], ['filter', 'write_bytes', 'filter written', 'f4']]
      .filter(([k, f]) => ops.some((o) => ((o.dram || {})[k] || {})[f] > 0));
    const dram = (o) => ds.map(([k, f]) => ((o.dram || {})[k] || {})[f] || 0);
    const heavy = ops.slice().sort((a, b) => dram(b).reduce((x, y) => x + y, 0) - dram(a).reduce((x, y) => x + y, 0))[0];
    if (ds.length)
      out.push(hbars({
        kind: 'dram', title: 'DRAM traffic per op',
        desc: `Bytes each op reads and writes in DRAM, by operand; the most is ${heavy.name}'s.`,
        rows: ops.map((o) => ({label: o.name, parts: dram(o)})),
        series: ds.map(([, , name, cls]) => ({name, cls})), fmt: bytes}));
    out.push(hbars({
      kind: 'utilisation', title: 'Utilisation per op',
      desc: 'The share of the array\'s multiply-accumulate slots each op keeps busy (vector ops: 0).',
      rows: ops.map((o) => ({label: o.name, parts: [o.utilisation || 0]})),
      series: [{name: 'utilisation', cls: 'f4'}], fmt: pct, max: 1}));
    return out;
  }

  function fpga(f) {
    const seg = f.segments || [], tg = f.target || {};
    const out = [figures([
      ['ops on the PL', num(f.pl_ops || 0)],
      ['ops on the PS', num(f.ps_ops || 0)],
      ['PL segments', num(seg.length)],
      ['PL cycles', num(f.pl_cycles_total || 0)],
      ['PL time', `${num(f.pl_time_us || 0)} µs at ${num(tg.clock_mhz || 0)} MHz`],
      ['DMA bytes', bytes(f.dma_bytes_total || 0)],
      ['PL', `${(tg.array || []).join('×')} ${f.pl || ''}`],
      ['PS', tg.cpu || ''],
    ])];
    out.push(hbars({
      kind: 'split', title: 'PL/PS split',
      desc: `${f.pl_ops || 0} ops run on the programmable logic, ${f.ps_ops || 0} on the ARM cores.`,
      rows: [{label: 'ops', parts: [f.pl_ops || 0, f.ps_ops || 0]}],
      series: [{name: 'PL', cls: 'f4'}, {name: 'PS', cls: 'f5'}], fmt: num}));
    if (seg.length)
      out.push(hbars({
        kind: 'segments', title: 'PL cycles per segment',
        desc: 'Each PL segment\'s compute and DMA cycles (its ops named in the table).',
        rows: seg.map((s) => ({label: `${s.id}: ${(s.ops || []).join(', ')}`,
                               parts: [s.compute_cycles || 0, s.dma_cycles || 0]})),
        series: [{name: 'compute', cls: 'f1'}, {name: 'DMA', cls: 'f3'}], fmt: num}));
    return out;
  }

  /* The report of job into box (its children replaced). */
  function render(box, rep, job) {
    const kids = [];
    const outs = (rep.outputs || []).map((o) => `${o.name} (${(o.shape || []).join('×')})`).join(', ');
    kids.push(el('p', null, `Job ${job.id} on ${rep.backend}` + (job.board ? ` (board ${job.board})` : '') +
                 `; outputs: ${outs || 'none'}.`));
    if (rep.npu) kids.push(...npu(rep.npu));
    else if (rep.fpga) kids.push(...fpga(rep.fpga));
    else kids.push(el('p', {class: 'muted'}, `A ${rep.backend} report has no per-op figures to chart.`));
    box.replaceChildren(...kids);
  }

  window.enpuReport = {render, bytes};
})();
