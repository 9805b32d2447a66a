// The report page's script (feedbench report), embedded into the binary at build time: draws
// every chart from the data in <script id="feedbench-data">, then records on
// <html data-report-status> either "ok N charts" (each canvas checked for drawn pixels) or
// "error: ..." (read by the tests).
(function () {
  'use strict';
  const root = document.documentElement;
  const fail = (msg) => { root.dataset.reportStatus = 'error: ' + msg; };
  window.addEventListener('error', (e) => fail(e.message || 'script error'));
  if (typeof Chart === 'undefined') { fail('Chart.js did not load'); return; }
  const D = JSON.parse(document.getElementById('feedbench-data').textContent);
  const multi = D.files.length > 1;
  Chart.defaults.animation = false;
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  Chart.defaults.font.size = 13;
  Chart.defaults.color = '#2d3440';
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.plugins.legend.labels.usePointStyle = true;
  Chart.defaults.plugins.legend.labels.boxWidth = 9;
  Chart.defaults.plugins.legend.labels.boxHeight = 9;
  Chart.defaults.plugins.title.font = { size: 15, weight: '600' };
  // Lines: one colour per path (and file). Bars: one colour per page-cache state, so the two
  // encodings never share a colour.
  const palette = ['#0f7b6c', '#7b4fb6', '#e08a00', '#c2399b', '#00a3b4', '#8c6239', '#5b6472', '#9bb31a', '#3d5a80', '#b5651d'];
  const stateColours = { cold: '#2c6fbb', warm: '#d1495b', direct: '#7a828f' };
  const alpha = (hex, a) => hex + Math.round(a * 255).toString(16).padStart(2, '0');
  const dashes = { cold: [], warm: [7, 4], direct: [2, 3] };
  const points = { cold: 'circle', warm: 'rectRot', direct: 'triangle' };
  const charts = [];

  const section = (id, title, intro) => {
    const s = document.createElement('section');
    s.id = id;
    s.innerHTML = '<h2></h2>' + (intro ? '<p class="muted"></p>' : '') + '<div class="charts"></div>';
    s.querySelector('h2').textContent = title;
    if (intro) s.querySelector('p').textContent = intro;
    document.getElementById('charts').appendChild(s);
    return s.querySelector('.charts');
  };
  const figure = (into, caption) => {
    const f = document.createElement('figure');
    f.innerHTML = '<div class="box"><canvas role="img"></canvas></div><figcaption></figcaption>';
    f.querySelector('figcaption').textContent = caption || '';
    into.appendChild(f);
    const canvas = f.querySelector('canvas');
    canvas.setAttribute('aria-label', caption || '');
    return canvas;
  };
  // The series names stay on the canvas (data-series) so a test can read them from the DOM.
  const draw = (canvas, config) => {
    canvas.dataset.series = config.data.datasets.map((d) => d.label).join(' | ');
    charts.push(new Chart(canvas, config));
  };

  // Every successful case of a family, with its file.
  const casesOf = (family) => {
    const out = [];
    D.files.forEach((f, fi) => f.cases.forEach((c) => {
      if (c.family === family && Object.keys(c.counters).length) out.push({ file: fi, c });
    }));
    return out;
  };
  const p = (x, k) => (x.c.params[k] === undefined ? '' : String(x.c.params[k]));
  const state = (x) => x.c.cache.requested || p(x, 'cache_state');
  // Parameters that differ between cases of a list (beyond those excluded) name the series.
  const varying = (list, exclude) => {
    const keys = new Set();
    list.forEach((x) => Object.keys(x.c.params).forEach((k) => keys.add(k)));
    return [...keys].filter((k) => !exclude.includes(k) && new Set(list.map((x) => p(x, k))).size > 1);
  };
  const short = { cache_state: '', path: '', block_size: 'bs ', queue_depth: 'qd ', engine: '', batch_size: 'batch ', accelerators: 'acc ', workers: 'w ' };
  const seriesName = (x, keys) => {
    const parts = [];
    if (multi) parts.push(D.files[x.file].name);
    keys.forEach((k) => parts.push((k in short ? short[k] : k + ' ') + p(x, k)));
    return parts.join(' · ') || 'all';
  };
  const groupBy = (list, keyOf) => {
    const m = new Map();
    list.forEach((x) => { const k = keyOf(x); if (!m.has(k)) m.set(k, []); m.get(k).push(x); });
    return m;
  };
  const mib = (b) => b / 1048576;
  // Colour says which path (and file), line style and point shape which page-cache state.
  const styleFor = (i, st) => ({
    borderColor: palette[i % palette.length], backgroundColor: palette[i % palette.length],
    borderDash: dashes[st] || [], pointStyle: points[st] || 'circle', pointRadius: 4, borderWidth: 2, clip: 6,
  });
  const colourIndex = () => { const m = new Map(); return (key) => { if (!m.has(key)) m.set(key, m.size); return m.get(key); }; };
  // A log axis where values span more than 30x (warm rounds dwarf cold ones on a linear one).
  const spanScale = (values, title) => {
    const v = values.filter((x) => x > 0);
    return v.length && Math.max(...v) / Math.min(...v) > 30
      ? { type: 'logarithmic', beginAtZero: false, ticks: logTicks, title: { display: true, text: title.replace(')', ', log scale)'), font: { weight: '600' } } }
      : {};
  };
  const axis = (title, extra) => Object.assign({ title: { display: true, text: title, font: { weight: '600' } }, grid: { color: '#e6e9ee' } }, extra || {});
  // Log axes: decades only when the axis spans more than 2.5 of them, else 1-2-5; 1k, 10k...
  const logTicks = { maxRotation: 0, autoSkip: false, callback: (v, i, ticks) => {
    const span = Math.log10(ticks[ticks.length - 1].value / ticks[0].value);
    const m = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
    if (![1, 2, 5].slice(0, span > 2.5 ? 1 : 3).some((k) => Math.abs(m - k) < 1e-6)) return '';
    return v >= 1e6 ? v / 1e6 + 'M' : v >= 1e3 ? v / 1e3 + 'k' : String(Number(v.toPrecision(3)));
  } };

  // Lines of a y counter against a numeric x parameter, one per series.
  const lineChart = (canvas, list, xKey, yOf, title, xTitle, yTitle, extraDatasets, yScale) => {
    const keys = varying(list, ['family', xKey, 'pattern']);
    const groups = groupBy(list, (x) => seriesName(x, keys));
    const colour = colourIndex();
    const datasets = [];
    [...groups.entries()].forEach(([name, xs]) => {
      const pts = xs.map((x) => ({ x: Number(x.c.params[xKey]), y: yOf(x) })).filter((q) => isFinite(q.x) && isFinite(q.y));
      pts.sort((a, b) => a.x - b.x);
      const i = colour(seriesName(xs[0], keys.filter((k) => k !== 'cache_state')));
      datasets.push(Object.assign({ label: name, data: pts }, styleFor(i, state(xs[0]))));
    });
    const xs = new Set(list.map((x) => Number(x.c.params[xKey])));
    draw(canvas, {
      type: 'line',
      data: { datasets: datasets.concat(extraDatasets || []) },
      options: {
        parsing: true,
        plugins: { title: { display: true, text: title }, legend: { position: 'bottom' },
                   tooltip: { callbacks: { label: (c) => c.dataset.label + ': ' + Number(c.parsed.y).toFixed(1) + ' at ' + xTitle.split(' (')[0].toLowerCase() + ' ' + c.parsed.x } } },
        scales: {
          x: axis(xTitle, { type: 'linear', ticks: { precision: 0 }, afterBuildTicks: (s) => { if (xs.size && xs.size < 12) s.ticks = [...xs].sort((a, b) => a - b).map((v) => ({ value: v })); } }),
          y: axis(yTitle, Object.assign({ beginAtZero: true }, yScale === 'span' ? spanScale(list.map(yOf), yTitle) : yScale || {})),
        },
      },
    });
  };

  // ---- reads: throughput vs workers, per pattern
  const reads = casesOf('file_read').filter((x) => x.c.counters.bytes_per_second !== undefined);
  if (reads.length) {
    const into = section('throughput', 'Read throughput', 'Median of the achieved repetitions. One line per path and page-cache state' + (multi ? ' and result file' : '') + '; solid = cold, dashed = warm, dotted = direct (O_DIRECT).');
    groupBy(reads, (x) => p(x, 'pattern') || 'reads').forEach((list, pattern) => {
      const c = figure(into, 'Throughput of ' + pattern + ' reads as workers are added. A line that flattens early means the device (or the CPU), not the worker count, limits reads.');
      lineChart(c, list, 'workers', (x) => mib(x.c.counters.bytes_per_second), 'Throughput vs workers — ' + pattern, 'Workers (threads)', 'Throughput (MiB/s)', [], 'span');
    });

    // Cold vs warm, source vs cache: best case of each.
    const states = ['cold', 'warm', 'direct'].filter((s) => reads.some((x) => state(x) === s));
    const cats = [];
    reads.forEach((x) => { const k = (p(x, 'pattern') ? p(x, 'pattern') + ' · ' : '') + (p(x, 'path') || 'path'); if (!cats.includes(k)) cats.push(k); });
    const datasets = [];
    D.files.forEach((f, fi) => states.forEach((s) => {
      const data = cats.map((cat) => {
        let best = null;
        reads.forEach((x) => {
          const k = (p(x, 'pattern') ? p(x, 'pattern') + ' · ' : '') + (p(x, 'path') || 'path');
          if (x.file === fi && state(x) === s && k === cat) best = Math.max(best === null ? 0 : best, mib(x.c.counters.bytes_per_second));
        });
        return best;
      });
      if (data.every((v) => v === null)) return;
      const colour = stateColours[s] || palette[datasets.length % palette.length];
      datasets.push({ label: (multi ? f.name + ' · ' : '') + s, data, backgroundColor: alpha(colour, [1, 0.5, 0.25][fi % 3]), borderColor: colour, borderWidth: 1.5 });
    }));
    const c = figure(into, 'Best throughput of each pattern and path (over the worker counts and other parameters), by page-cache state. Warm far above cold: the page cache, not the device, served the second round.');
    draw(c, {
      type: 'bar',
      data: { labels: cats.map((c) => c.split(' · ')), datasets },
      options: {
        plugins: { title: { display: true, text: 'Cold vs warm, source vs cache (best case)' }, legend: { position: 'bottom' } },
        scales: { x: axis('Pattern · path', { ticks: { maxRotation: 0, autoSkip: false } }),
                  y: axis('Throughput (MiB/s)', Object.assign({ beginAtZero: true }, spanScale([].concat(...datasets.map((d) => d.data)), 'Throughput (MiB/s)'))) },
      },
    });

    // Latency CDF per pattern, at the smallest worker count (the device's own latency).
    const withLat = reads.filter((x) => x.c.latency && x.c.latency.cdf.length);
    if (withLat.length) {
      const lat = section('latency', 'Read latency', 'Cumulative distribution of per-read latency from the recorded histograms (within 1%). Further left is faster; a long flat tail at the top means rare slow reads.');
      groupBy(withLat, (x) => p(x, 'pattern') || 'reads').forEach((list, pattern) => {
        const w = Math.min(...list.map((x) => Number(x.c.params.workers)).filter(isFinite));
        const sel = isFinite(w) ? list.filter((x) => Number(x.c.params.workers) === w) : list;
        const keys = varying(sel, ['family', 'pattern', 'workers']);
        const colour = colourIndex();
        const datasets = sel.map((x) => Object.assign({ label: seriesName(x, keys), data: x.c.latency.cdf.map((q) => ({ x: q[0], y: q[1] * 100 })), stepped: false, tension: 0 },
                                                     styleFor(colour(seriesName(x, keys.filter((k) => k !== 'cache_state'))), state(x)), { pointRadius: 0 }));
        const c = figure(lat, 'Latency CDF of ' + pattern + ' reads' + (isFinite(w) ? ' at ' + w + (w === 1 ? ' worker' : ' workers') : '') + ', per path and page-cache state.');
        draw(c, {
          type: 'line',
          data: { datasets },
          options: {
            plugins: { title: { display: true, text: 'Read latency CDF — ' + pattern + (isFinite(w) ? ', ' + w + ' worker' + (w === 1 ? '' : 's') : '') }, legend: { position: 'bottom' },
                       tooltip: { callbacks: { label: (c) => c.dataset.label + ': ' + c.parsed.y.toFixed(1) + '% ≤ ' + Number(c.parsed.x).toPrecision(3) + ' µs' } } },
            scales: { x: axis('Read latency (µs, log scale)', { type: 'logarithmic', ticks: logTicks }), y: axis('Reads completed (%)', { min: 0, max: 100 }) },
          },
        });
      });
    }
  }

  // ---- loader: AU vs workers (and vs accelerators when swept), with the target line.
  const loader = casesOf('loader').filter((x) => x.c.counters.au !== undefined && !x.c.calibration);  // calibration: no storage
  if (loader.length) {
    const into = section('loader', 'Simulated training loop', 'Accelerator utilisation (AU): the share of each training step the simulated accelerator computes rather than waits for data. The dashed grey line is the target.');
    const target = 100 * (Number(loader[0].c.params.target_au) || Number(loader[0].c.extra.target_au) || 0.9);
    const targetLine = (list, key) => {
      const xs = list.map((x) => Number(x.c.params[key])).filter(isFinite);
      return [{ label: 'target ' + target.toFixed(0) + '%', data: [{ x: Math.min(...xs), y: target }, { x: Math.max(...xs), y: target }],
                borderColor: '#7a828f', borderDash: [6, 4], borderWidth: 1.5, pointRadius: 0, backgroundColor: '#7a828f' }];
    };
    const auScale = { min: 0, max: 100 };
    if (new Set(loader.map((x) => p(x, 'workers'))).size > 0) {
      const c = figure(into, 'AU as loader workers are added. The first point at or above the target is the smallest worker count that keeps the accelerator fed.');
      lineChart(c, loader, 'workers', (x) => 100 * x.c.counters.au, 'AU vs loader workers', 'Loader workers (threads per trainer)', 'Accelerator utilisation (%)', targetLine(loader, 'workers'), auScale);
    }
    if (new Set(loader.map((x) => p(x, 'accelerators'))).size > 1) {
      const c = figure(into, 'AU as simulated accelerators (trainers, each with its own workers) share the storage. The last point above the target is how many accelerators this storage feeds.');
      lineChart(c, loader, 'accelerators', (x) => 100 * x.c.counters.au, 'AU vs simulated accelerators', 'Simulated accelerators', 'Accelerator utilisation (%)', targetLine(loader, 'accelerators'), auScale);
    }
  }

  // Chart.js does not follow the page into print layout by itself.
  window.addEventListener('beforeprint', () => charts.forEach((ch) => ch.resize()));
  window.addEventListener('afterprint', () => charts.forEach((ch) => ch.resize()));
  if (!charts.length) {
    document.getElementById('charts').innerHTML = '<p class="muted">No successful case to chart: see the tables below.</p>';
  }
  // Each canvas must hold drawn pixels.
  let drawn = 0;
  charts.forEach((ch) => {
    const cv = ch.canvas;
    const px = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
    for (let i = 3; i < px.length; i += 4) if (px[i]) { drawn++; break; }
  });
  if (root.dataset.reportStatus) return;  // an error was already recorded
  root.dataset.reportStatus = drawn === charts.length ? 'ok ' + drawn + ' charts' : 'error: ' + (charts.length - drawn) + ' of ' + charts.length + ' charts empty';
})();
