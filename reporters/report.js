// The report page's script (feedbench report), embedded into the binary at build time. It draws
// every chart from the data in <script id="feedbench-data">, then records on
// <html data-report-status> either "ok N charts" (each canvas checked for drawn pixels) or
// "error: ...". With #selfcheck in the address it also measures its own layout (legends,
// axis titles, which table columns a reader sees without scrolling, generated text) and writes
// the findings as JSON into <pre id="selfcheck">: what the tests read.
//
// Charts scale with the sweep: cases are split into one chart per pattern and page-cache
// state, and a chart never carries more than MAX_SERIES lines. Where the remaining parameters
// would give more, the least telling of them (block size, engine, ...) leave the legend: as a
// few small charts side by side when that makes at most MAX_FACETS, else as a selector above
// one chart.
(function () {
  'use strict';
  const root = document.documentElement;
  const errors = [];
  const fail = (msg) => { errors.push(msg); root.dataset.reportStatus = 'error: ' + msg; };
  window.addEventListener('error', (e) => fail(e.message || 'script error'));
  if (typeof Chart === 'undefined') { fail('Chart.js did not load'); return; }
  const D = JSON.parse(document.getElementById('feedbench-data').textContent);
  const multi = D.files.length > 1;
  const MAX_SERIES = 8;
  const MAX_FACETS = 4;
  Chart.defaults.animation = false;
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  Chart.defaults.font.size = 12;
  Chart.defaults.color = '#2d3440';
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.plugins.legend.labels.usePointStyle = true;
  Chart.defaults.plugins.legend.labels.boxWidth = 8;
  Chart.defaults.plugins.legend.labels.boxHeight = 8;
  Chart.defaults.plugins.legend.labels.padding = 8;
  Chart.defaults.plugins.title.font = { size: 14, weight: '600' };
  // Lines: one colour per series. Bars: one colour per page-cache state.
  const palette = ['#0f7b6c', '#7b4fb6', '#e08a00', '#c2399b', '#00a3b4', '#8c6239', '#3d5a80', '#9bb31a', '#5b6472', '#b5651d'];
  const stateColours = { cold: '#2c6fbb', warm: '#d1495b', direct: '#7a828f' };
  const dashes = { cold: [], warm: [7, 4], direct: [2, 3] };
  const points = { cold: 'circle', warm: 'rectRot', direct: 'triangle' };
  const charts = [];  // every Chart drawn, in page order (a selector replaces its own entry)

  // ---- page parts
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
    f.innerHTML = '<div class="pick"></div><div class="box"><canvas role="img"></canvas></div><ul class="legend"></ul><figcaption></figcaption>';
    f.querySelector('figcaption').textContent = caption;
    into.appendChild(f);
    const canvas = f.querySelector('canvas');
    canvas.setAttribute('aria-label', caption);
    return canvas;
  };
  // The legend is HTML under the canvas, not drawn on it: it wraps, so however long a file's
  // label, no entry is cut off or runs past the chart. A click hides or shows that series.
  const htmlLegend = {
    id: 'htmlLegend',
    afterUpdate(chart) {
      const ul = chart.canvas.closest('figure').querySelector('ul.legend');
      ul.textContent = '';
      Chart.defaults.plugins.legend.labels.generateLabels(chart).forEach((item) => {
        const li = document.createElement('li');
        const b = document.createElement('button');
        b.type = 'button';
        const mark = document.createElement('span');
        mark.className = 'mark';
        mark.style.borderTopColor = item.strokeStyle || item.fillStyle;
        if (item.lineDash && item.lineDash.length) mark.style.borderTopStyle = item.lineDash[0] > 3 ? 'dashed' : 'dotted';
        if (chart.config.type === 'bar') { mark.classList.add('bar'); mark.style.background = item.fillStyle; }
        b.append(mark, item.text);
        if (item.hidden) li.className = 'off';
        b.addEventListener('click', () => { chart.setDatasetVisibility(item.datasetIndex, !chart.isDatasetVisible(item.datasetIndex)); chart.update(); });
        li.appendChild(b);
        ul.appendChild(li);
      });
    },
  };
  // (Re)draws a canvas. The series names stay on it (data-series) so a test can read them.
  const draw = (canvas, config) => {
    canvas.dataset.series = config.data.datasets.filter((d) => !d.reference).map((d) => d.label).join(' | ');
    config.plugins = [htmlLegend].concat(config.plugins || []);  // a chart's own plugins after the legend
    config.options.plugins.legend = { display: false };
    const old = Chart.getChart(canvas);
    const chart = new Chart(canvas, (old && old.destroy(), config));
    const i = charts.indexOf(old);
    if (i >= 0) charts[i] = chart; else charts.push(chart);
  };

  // ---- cases and their parameters
  // Every case of a family that has figures, with its file.
  const casesOf = (family) => {
    const out = [];
    D.files.forEach((f, fi) => f.cases.forEach((c) => {
      if (c.family === family && Object.keys(c.counters).length) out.push({ file: fi, c });
    }));
    return out;
  };
  const p = (x, k) => (x.c.params[k] === undefined || x.c.params[k] === null ? '' : String(x.c.params[k]));
  const state = (x) => x.c.cache.requested || p(x, 'cache_state');
  // A size as a config writes it: 4 KiB, 1 MiB.
  const sizeText = (b) => {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let u = 0;
    while (u < 4 && b >= 1024 && b % 1024 === 0) { b /= 1024; u++; }
    return u ? b + ' ' + units[u] : b >= 1024 ? (b / 1024).toPrecision(3) + ' KiB' : b + ' B';
  };
  const prefix = { workers: 'w ', queue_depth: 'qd ', accelerators: 'acc ', batch_size: 'batch ', prefetch: 'prefetch ' };
  const plain = ['pattern', 'engine', 'cache_state', 'path', 'transform'];
  // A parameter as the tables' labels write it ("w 4", "qd 32", "4 KiB", "cold"); the pseudo
  // parameter "file" is the file's label. The cache path of a file whose cache failed its checks
  // carries the words the page's tables put beside it (the file's cache_qualifier in the data).
  const text = (x, k) => {
    if (k === 'file') return D.files[x.file].name;
    const v = x.c.params[k];
    if (v === undefined || v === null) return '';
    if (k === 'path' && v === 'cache' && D.files[x.file].cache_qualifier) return v + ' ' + D.files[x.file].cache_qualifier;
    if (typeof v === 'number' && (k === 'block_size' || k === 'record_size' || k === 'samples')) return sizeText(v);
    if (plain.includes(k)) return String(v);
    return (k in prefix ? prefix[k] : k + ' ') + v;
  };
  const join = (parts, sep) => parts.filter((s) => s !== '').join(sep);
  const byNatural = (a, b) => (isFinite(a) && isFinite(b) && a !== '' && b !== '' ? Number(a) - Number(b) : String(a).localeCompare(String(b)));
  const valueOf = (x, k) => (k === 'file' ? String(x.file) : p(x, k));
  const distinct = (list, k) => [...new Set(list.map((x) => valueOf(x, k)))].sort(byNatural);
  // Parameters (and "file") that differ between the cases of a list, beyond `exclude`.
  const varying = (list, exclude) => {
    const keys = multi ? ['file'] : [];
    list.forEach((x) => Object.keys(x.c.params).forEach((k) => { if (!keys.includes(k)) keys.push(k); }));
    return keys.filter((k) => !exclude.includes(k) && distinct(list, k).length > 1);
  };
  const groupBy = (list, keyOf) => {
    const m = new Map();
    list.forEach((x) => { const k = keyOf(x); if (!m.has(k)) m.set(k, []); m.get(k).push(x); });
    return m;
  };
  const mib = (b) => b / 1048576;
  const styleFor = (i, st) => ({
    borderColor: palette[i % palette.length], backgroundColor: palette[i % palette.length],
    borderDash: dashes[st] || [], pointStyle: points[st] || 'circle', pointRadius: 3.5, borderWidth: 2, clip: 6,
  });

  // The order in which parameters leave a chart's series for side-by-side charts or a selector:
  // the first named go first; the file and the path, what a comparison is about, go last.
  const leaveOrder = ['block_size', 'record_size', 'engine', 'samples', 'transform', 'step_time', 'prefetch', 'batch_size',
                      'queue_depth', 'accelerators', 'workers', 'cache_state', 'pattern', 'path', 'file'];
  const leaveRank = (k) => { const i = leaveOrder.indexOf(k); return i < 0 ? -1 : i; };  // unknown keys leave first
  const seriesCount = (list, keys) => new Set(list.map((x) => keys.map((k) => valueOf(x, k)).join('\u0001'))).size;

  // Charts of a list of cases: one group per value of `opts.fixed` (e.g. pattern and state), and
  // in each at most MAX_SERIES series. opts: fixed, exclude (never a series: the x axis),
  // title (first title line), caption(group), build(canvas, items, seriesKeys, titleLines).
  const facet = (into, list, opts) => {
    groupBy(list, (x) => opts.fixed.map((k) => valueOf(x, k)).join('\u0001')).forEach((group) => {
      const head = join([opts.title, join(opts.fixed.map((k) => text(group[0], k)), ' · ')], ' — ');
      const series = varying(group, opts.exclude.concat(opts.fixed));
      const moved = [];
      while (series.length > 1 && seriesCount(group, series) > MAX_SERIES) {
        const k = series.reduce((a, b) => (leaveRank(b) < leaveRank(a) ? b : a));
        series.splice(series.indexOf(k), 1);
        moved.push(k);
      }
      moved.sort((a, b) => leaveRank(a) - leaveRank(b));
      const facets = [...groupBy(group, (x) => moved.map((k) => valueOf(x, k)).join('\u0001')).values()];
      facets.sort((a, b) => {
        for (const k of moved) { const c = byNatural(valueOf(a[0], k), valueOf(b[0], k)); if (c) return c; }
        return 0;
      });
      const caption = opts.caption(group);
      if (facets.length <= MAX_FACETS) {
        facets.forEach((items) => {
          const sub = join(moved.map((k) => text(items[0], k)), ' · ');
          opts.build(figure(into, caption), items, series, sub ? [head, sub] : head);
        });
        return;
      }
      // Too many for side by side: one chart, a selector per parameter that left the series.
      const canvas = figure(into, caption + ' Choose the ' + moved.map((k) => (k === 'file' ? 'file' : k.replace('_', ' '))).join(' and ') + ' above the chart.');
      const pick = canvas.closest('figure').querySelector('.pick');
      const chosen = {};
      const redraw = () => {
        const items = group.filter((x) => moved.every((k) => valueOf(x, k) === chosen[k]));
        opts.build(canvas, items, series, [head, join(moved.map((k) => text(group.find((x) => valueOf(x, k) === chosen[k]), k)), ' · ')]);
      };
      moved.forEach((k) => {
        const l = document.createElement('label');
        const sel = document.createElement('select');
        distinct(group, k).forEach((v) => {
          const o = document.createElement('option');
          o.value = v;
          o.textContent = text(group.find((x) => valueOf(x, k) === v), k) || '(none)';
          sel.appendChild(o);
        });
        chosen[k] = sel.value;
        sel.addEventListener('change', () => { chosen[k] = sel.value; redraw(); });
        l.append((k === 'file' ? 'file' : k.replace('_', ' ')) + ' ', sel);
        pick.appendChild(l);
      });
      redraw();
    });
  };
  const seriesName = (x, keys) => join(keys.map((k) => text(x, k)), ' · ') || 'all cases';

  // ---- axes
  const axis = (title, extra) => Object.assign({ title: { display: true, text: title, font: { weight: '600' } }, grid: { color: '#e6e9ee' } }, extra || {});
  // Log axes: decades only when the axis spans more than 2.5 of them, else 1-2-5; 1k, 10k...
  const logTicks = { maxRotation: 0, autoSkip: false, callback: (v, i, ticks) => {
    const span = Math.log10(ticks[ticks.length - 1].value / ticks[0].value);
    const m = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
    if (![1, 2, 5].slice(0, span > 2.5 ? 1 : 3).some((k) => Math.abs(m - k) < 1e-6)) return '';
    return v >= 1e6 ? v / 1e6 + 'M' : v >= 1e3 ? v / 1e3 + 'k' : String(Number(v.toPrecision(3)));
  } };
  // A log axis where values span more than 30x (warm rounds dwarf cold ones on a linear one).
  const spanScale = (values, title) => {
    const v = values.filter((x) => x > 0);
    return v.length && Math.max(...v) / Math.min(...v) > 30
      ? { type: 'logarithmic', beginAtZero: false, ticks: logTicks, title: { display: true, text: title.replace(')', ', log scale)'), font: { weight: '600' } } }
      : {};
  };

  // Lines of a y value against a numeric x parameter, one per series.
  const lineBuilder = (xKey, yOf, xTitle, yTitle, yScale, reference) => (canvas, items, keys, title) => {
    const groups = groupBy(items, (x) => seriesName(x, keys));
    const datasets = [];
    [...groups.entries()].forEach(([name, xs], i) => {
      const pts = xs.map((x) => ({ x: Number(x.c.params[xKey]), y: yOf(x) })).filter((q) => isFinite(q.x) && isFinite(q.y));
      pts.sort((a, b) => a.x - b.x);
      const st = new Set(xs.map(state)).size === 1 ? state(xs[0]) : '';
      datasets.push(Object.assign({ label: name, data: pts }, styleFor(i, st)));
    });
    const xs = new Set(items.map((x) => Number(x.c.params[xKey])).filter(isFinite));
    draw(canvas, {
      type: 'line',
      data: { datasets: datasets.concat(reference ? reference(items) : []) },
      options: {
        parsing: true,
        plugins: { title: { display: true, text: title },
                   tooltip: { callbacks: { label: (c) => c.dataset.label + ': ' + Number(c.parsed.y).toFixed(1) + ' at ' + xTitle.split(' (')[0].toLowerCase() + ' ' + c.parsed.x } } },
        scales: {
          x: axis(xTitle, { type: 'linear', ticks: { precision: 0 }, afterBuildTicks: (s) => { if (xs.size && xs.size < 12) s.ticks = [...xs].sort((a, b) => a - b).map((v) => ({ value: v })); } }),
          y: axis(yTitle, Object.assign({ beginAtZero: true }, yScale === 'span' ? spanScale(items.map(yOf), yTitle) : yScale || {})),
        },
      },
    });
  };
  const always = ['family', 'runtime', 'max_bytes', 'ramp_time', 'steady_state'];

  // ---- reads: throughput vs workers, per pattern and page-cache state
  const reads = casesOf('file_read').filter((x) => x.c.counters.bytes_per_second !== undefined);
  if (reads.length) {
    const into = section('throughput', 'Read throughput', 'Median of the achieved repetitions. One chart per access pattern and page-cache state, at most ' + MAX_SERIES + ' lines each' + (multi ? ', one per result file and path' : '') + '; where a sweep has more, a block size or engine gets a chart (or a selector) of its own.');
    facet(into, reads, {
      fixed: ['pattern', 'cache_state'], exclude: always.concat(['workers']), title: 'Throughput vs workers',
      caption: (g) => 'Throughput of ' + join([p(g[0], 'pattern'), 'reads'], ' ') + (state(g[0]) ? ', ' + state(g[0]) : '') + ', as workers are added. A line that flattens early means the device (or the CPU), not the worker count, limits reads.',
      build: lineBuilder('workers', (x) => mib(x.c.counters.bytes_per_second), 'Workers (threads)', 'Throughput (MiB/s)', 'span'),
    });

    // Cold vs warm vs direct, per pattern: the best case of each path (and file).
    const bars = section('states', 'Cold vs warm, source vs cache', 'Best throughput of each path' + (multi ? ' and file' : '') + ' over the worker counts and other parameters, by page-cache state. Warm far above cold: the page cache, not the device, served the second round.');
    groupBy(reads, (x) => p(x, 'pattern')).forEach((list, pattern) => {
      const states = ['cold', 'warm', 'direct'].filter((s) => list.some((x) => state(x) === s));
      const catKeys = ['path'].concat(multi ? ['file'] : []).filter((k) => k === 'file' || list.some((x) => p(x, k) !== ''));
      const catOf = (x) => catKeys.map((k) => valueOf(x, k)).join('\u0001');
      const cats = [...groupBy(list, catOf).values()];
      const datasets = states.map((s) => ({
        label: s,
        data: cats.map((items) => {
          const v = items.filter((x) => state(x) === s).map((x) => mib(x.c.counters.bytes_per_second));
          return v.length ? Math.max(...v) : null;
        }),
        backgroundColor: stateColours[s], borderColor: stateColours[s], borderWidth: 1,
      }));
      const c = figure(bars, 'Best throughput of ' + join([pattern, 'reads'], ' ') + ' on each path' + (multi ? ' in each file' : '') + ', by page-cache state.');
      draw(c, {
        type: 'bar',
        data: { labels: cats.map((items) => catKeys.map((k) => text(items[0], k) || 'the path')), datasets },
        options: {
          plugins: { title: { display: true, text: join(['Best throughput', pattern], ' — ') } },
          scales: { x: axis(multi ? 'Path · file' : 'Path', { ticks: { maxRotation: 0, autoSkip: false } }),
                    y: axis('Throughput (MiB/s)', Object.assign({ beginAtZero: true }, spanScale([].concat(...datasets.map((d) => d.data)), 'Throughput (MiB/s)'))) },
        },
      });
    });

    // Latency CDF per pattern and state, at the smallest worker count (the device's own latency).
    const withLat = reads.filter((x) => x.c.latency && x.c.latency.cdf.length);
    if (withLat.length) {
      const lat = section('latency', 'Read latency', 'Cumulative distribution of per-read latency from the recorded histograms (within 1%), at the smallest worker count. Further left is faster; a long flat tail at the top means rare slow reads.');
      const atFewest = [];
      groupBy(withLat, (x) => p(x, 'pattern')).forEach((list) => {
        const w = Math.min(...list.map((x) => Number(x.c.params.workers)).filter(isFinite));
        atFewest.push(...(isFinite(w) ? list.filter((x) => Number(x.c.params.workers) === w) : list));
      });
      facet(lat, atFewest, {
        fixed: ['pattern', 'cache_state', 'workers'], exclude: always, title: 'Read latency CDF',
        caption: (g) => 'Latency of ' + join([p(g[0], 'pattern'), 'reads'], ' ') + (state(g[0]) ? ', ' + state(g[0]) : '') + (p(g[0], 'workers') ? ', ' + p(g[0], 'workers') + (p(g[0], 'workers') === '1' ? ' worker' : ' workers') : '') + '.',
        build: (canvas, items, keys, title) => {
          const datasets = items.map((x, i) => Object.assign({ label: seriesName(x, keys), data: x.c.latency.cdf.map((q) => ({ x: q[0], y: q[1] * 100 })), tension: 0 },
                                                             styleFor(i, state(x)), { pointRadius: 0 }));
          draw(canvas, {
            type: 'line',
            data: { datasets },
            options: {
              plugins: { title: { display: true, text: title },
                         tooltip: { callbacks: { label: (c) => c.dataset.label + ': ' + c.parsed.y.toFixed(1) + '% ≤ ' + Number(c.parsed.x).toPrecision(3) + ' µs' } } },
              scales: { x: axis('Read latency (µs, log scale)', { type: 'logarithmic', ticks: logTicks }), y: axis('Reads completed (%)', { min: 0, max: 100 }) },
            },
          });
        },
      });
    }
  }

  // ---- checkpoints: each case's write and cold restore, the node's rate beside the slowest rank's.
  const ckpts = casesOf('checkpoint').filter((x) => x.c.counters.bytes_per_second !== undefined);
  if (ckpts.length) {
    const into = section('checkpoint', 'Checkpoints', 'Median of the achieved repetitions: each checkpoint written by its ranks (fsync\'d) and read back cold. The node\'s rate is all ranks\' bytes over the checkpoint\'s time; the slowest rank\'s, its own shard over its own time, is what every rank of a checkpoint this size must reach.');
    const name = (x) => (multi ? 'file ' + (x.file + 1) + ' · ' : '') + x.c.case.replace(/^checkpoint\//, '').split('/').slice(0, 3).join(' ');
    const bars = [['write, node', 'bytes_per_second', '#1f6fb2'], ['write, slowest rank', 'write_slowest_rank_bytes_per_second', '#8fb8de'],
                  ['restore, node', 'restore_bytes_per_second', '#2e8540'], ['restore, slowest rank', 'restore_slowest_rank_bytes_per_second', '#9fd3a8']];
    const c = figure(into, 'Write and cold restore of each checkpoint case.');
    draw(c, {
      type: 'bar',
      data: { labels: ckpts.map(name),
              datasets: bars.map(([label, key, colour]) => ({ label, data: ckpts.map((x) => (x.c.counters[key] === undefined ? null : mib(x.c.counters[key]))), backgroundColor: colour, borderColor: colour, borderWidth: 1 })) },
      options: {
        plugins: { title: { display: true, text: 'Checkpoint write and restore' } },
        scales: { x: axis('Checkpoint', { ticks: { maxRotation: 0, autoSkip: false } }), y: axis('Throughput (MiB/s)', { beginAtZero: true }) },
      },
    });
  }

  // ---- loader: AU vs workers (and vs accelerators when swept), with the target line.
  const loader = casesOf('loader').filter((x) => x.c.counters.au !== undefined && !x.c.calibration);  // calibration: no storage
  if (loader.length) {
    const into = section('loader', 'Simulated training loop', 'Accelerator utilisation (AU): the share of each training step the simulated accelerator computes rather than waits for data. The dashed grey line is the target.');
    const target = 100 * (Number(loader[0].c.params.target_au) || Number(loader[0].c.extra.target_au) || 0.9);
    const targetLine = (key) => (items) => {
      const xs = items.map((x) => Number(x.c.params[key])).filter(isFinite);
      if (!xs.length) return [];
      return [{ label: 'target ' + target.toFixed(0) + '%', reference: true, data: [{ x: Math.min(...xs), y: target }, { x: Math.max(...xs), y: target }],
                borderColor: '#7a828f', borderDash: [6, 4], borderWidth: 1.5, pointRadius: 0, backgroundColor: '#7a828f' }];
    };
    const au = (x) => 100 * x.c.counters.au;
    const auScale = { min: 0, max: 100 };
    const hasWorkers = loader.some((x) => p(x, 'workers') !== '');
    if (hasWorkers) {
      facet(into, loader, {
        fixed: ['cache_state'], exclude: always.concat(['workers', 'target_au']), title: 'AU vs loader workers',
        caption: () => 'AU as loader workers are added. The first point at or above the target is the smallest worker count that keeps the accelerator fed.',
        build: lineBuilder('workers', au, 'Loader workers (threads per trainer)', 'Accelerator utilisation (%)', auScale, targetLine('workers')),
      });
    }
    if (new Set(loader.map((x) => p(x, 'accelerators'))).size > 1) {
      facet(into, loader, {
        fixed: ['cache_state'], exclude: always.concat(['accelerators', 'target_au']), title: 'AU vs simulated accelerators',
        caption: () => 'AU as simulated accelerators (trainers, each with its own workers) share the storage. The last point above the target is how many accelerators this storage feeds.',
        build: lineBuilder('accelerators', au, 'Simulated accelerators', 'Accelerator utilisation (%)', auScale, targetLine('accelerators')),
      });
    }
  }

  // ---- watched jobs (feedbench watch): per job, its batches in time (wait and step, each pass's
  // start marked), its wait's distribution, and its processes' CPU and reads over time.
  const jobs = casesOf('job').filter((x) => x.c.extra && x.c.extra.timeline);
  if (jobs.length) {
    const into = section('jobs', 'Watched jobs', 'A real training job run under feedbench watch: the time its trainer waited for each batch (asking to getting it) and the step after it (getting it to asking for the next), the wait\'s distribution, and what its processes did.');
    // Dashed lines where a pass (an epoch of a DataLoader) began.
    const passLines = (starts) => ({
      id: 'passLines',
      afterDatasetsDraw(chart) {
        const { ctx, chartArea: a, scales: { x } } = chart;
        ctx.save();
        ctx.strokeStyle = '#7a828f';
        ctx.setLineDash([4, 4]);
        starts.forEach((t) => { const px = x.getPixelForValue(t); if (px >= a.left && px <= a.right) { ctx.beginPath(); ctx.moveTo(px, a.top); ctx.lineTo(px, a.bottom); ctx.stroke(); } });
        ctx.restore();
      },
    });
    const line = (label, data, i, extra) => Object.assign({ label, data, borderColor: palette[i], backgroundColor: palette[i], pointRadius: 0, borderWidth: 1.5, spanGaps: false }, extra || {});
    jobs.forEach((x) => {
      const e = x.c.extra;
      const name = x.c.case + (multi ? ' — ' + D.files[x.file].name : '');
      const tl = e.timeline;
      const starts = tl.pass.map((pid, i) => (i === 0 || tl.pass[i - 1] !== pid ? tl.t_s[i] : null)).filter((t) => t !== null);
      const pts = (ys) => tl.t_s.map((t, i) => ({ x: t, y: ys[i] }));
      const per = tl.batches_per_point > 1 ? ' (each point the mean of ' + tl.batches_per_point + ' batches)' : '';
      const canvas = figure(into, 'Each batch' + per + ': how long the trainer waited for it and the step after it. Dashed lines mark where a pass began: its first batch carries the workers\' start-up.');
      draw(canvas, {
        type: 'line',
        data: { datasets: [line('data wait (ms)', pts(tl.wait_ms), 3), line('step (ms)', pts(tl.step_ms), 0)] },
        options: { parsing: false, plugins: { title: { display: true, text: [name, e.verdict ? e.verdict.split(':')[0] : ''] } },
                   scales: { x: axis('Time since the job started (s)', { type: 'linear' }), y: axis('Milliseconds', { beginAtZero: true }) } },
        plugins: [passLines(starts)],
      });
      if (x.c.latency && x.c.latency.cdf) {
        const cdf = figure(into, 'The share of batches whose wait was at most a given time (every batch, first batches included).');
        draw(cdf, {
          type: 'line',
          data: { datasets: [line('wait', x.c.latency.cdf.map(([us, q]) => ({ x: us / 1000, y: 100 * q })), 1, { stepped: true })] },
          options: { parsing: false, plugins: { title: { display: true, text: [name, 'Data wait per batch'] } },
                     scales: { x: axis('Wait (ms)', { type: 'linear', beginAtZero: true }), y: axis('Batches (%)', { min: 0, max: 100 }) } },
        });
      }
      const pr = e.processes;
      if (pr && pr.t_s && pr.t_s.length) {
        const at = (ys) => pr.t_s.map((t, i) => ({ x: t, y: ys[i] }));
        const sets = [line('trainer (cores)', at(pr.trainer_cores), 0, { yAxisID: 'y' }), line('workers (cores)', at(pr.worker_cores), 1, { yAxisID: 'y' }),
                      line('read (MiB/s)', at(pr.read_mib_s), 2, { yAxisID: 'rate', borderDash: [6, 3] }),
                      line('from storage (MiB/s)', at(pr.storage_read_mib_s), 4, { yAxisID: 'rate', borderDash: [2, 2] })];
        if (pr.device_read_mib_s) sets.push(line('device ' + pr.device + ' (MiB/s)', at(pr.device_read_mib_s), 5, { yAxisID: 'rate', borderDash: [8, 2, 2, 2] }));
        draw(figure(into, 'Every ' + pr.interval_s + ' s: the CPU the trainer and the DataLoader workers used, what their reads returned, what storage served them' + (pr.device_read_mib_s ? ', and what the data device read (every reader of it).' : ' (the data device not counted: ' + pr.device + ').')), {
          type: 'line',
          data: { datasets: sets },
          options: { parsing: false, plugins: { title: { display: true, text: [name, 'CPU and reads over time'] } },
                     scales: { x: axis('Time since the job started (s)', { type: 'linear' }), y: axis('Cores', { beginAtZero: true, position: 'left' }),
                               rate: axis('MiB/s', { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false } }) } },
        });
      }
    });
  }

  // ---- across ranks: per case run under MPI, each rank's rate (file_read) or the lowest AU of
  // its accelerators (loader), coloured by host; a straggler's bar is outlined; the caption
  // carries the straggler line.
  const ranked = [];
  D.files.forEach((f, fi) => f.cases.forEach((c) => {
    if (c.extra && Array.isArray(c.extra.ranks) && c.extra.ranks.length > 1 && Object.keys(c.counters).length) ranked.push({ file: fi, c });
  }));
  if (ranked.length) {
    const into = section('ranks', 'Across ranks', 'Each rank of a case run under MPI, coloured by host: a read\'s rate, or the lowest AU of a trainer node\'s accelerators. A rank below 0.8 of the median rank\'s rate is a straggler (outlined): the round ends with the last rank, so it holds the aggregate down.');
    ranked.forEach((x) => {
      const ranks = x.c.extra.ranks;
      const isLoader = x.c.family === 'loader';
      const val = isLoader ? (r) => 100 * (r.min_au !== undefined ? r.min_au : r.au) : (r) => mib(r.bytes_per_second);
      const slow = new Set((x.c.extra.stragglers || []).map((s) => s.rank));
      const hosts = [...new Set(ranks.map((r) => r.host))];
      const colourOf = (h) => palette[hosts.indexOf(h) % palette.length];
      const outline = (r) => (slow.has(r.rank) ? '#d1495b' : colourOf(r.host));
      const width = (r) => (slow.has(r.rank) ? 3 : 1);
      // One series per host while they fit a legend; beyond that one series, coloured per bar.
      const datasets = hosts.length <= MAX_SERIES
        ? hosts.map((h) => ({ label: 'host ' + h, grouped: false, data: ranks.map((r) => (r.host === h ? val(r) : null)),
                              backgroundColor: colourOf(h), borderColor: ranks.map(outline), borderWidth: ranks.map(width) }))
        : [{ label: 'ranks (' + hosts.length + ' hosts)', data: ranks.map(val), backgroundColor: ranks.map((r) => colourOf(r.host)),
             borderColor: ranks.map(outline), borderWidth: ranks.map(width) }];
      const st = x.c.extra.stragglers || [];
      const line = isLoader
        ? (x.c.extra.min_au_rank !== undefined ? 'Lowest AU ' + (100 * x.c.extra.min_au).toFixed(1) + '% on rank ' + x.c.extra.min_au_rank + ' (host ' + x.c.extra.min_au_host + ').' : '')
        : st.length ? 'Straggler' + (st.length > 1 ? 's' : '') + ': ' + st.map((s) => 'rank ' + s.rank + ' (host ' + s.host + ') at ' + mib(s.bytes_per_second).toPrecision(3) + ' MiB/s, ' + s.vs_median.toFixed(2) + ' of the median rank').join('; ') + '.'
          : 'No straggler.';
      const name = x.c.case + (multi ? ' — ' + D.files[x.file].name : '');
      const canvas = figure(into, ranks.length + ' ranks on ' + hosts.length + (hosts.length === 1 ? ' host' : ' hosts') + '. ' + line);
      canvas.closest('figure').classList.add('ranks');
      draw(canvas, {
        type: 'bar',
        data: { labels: ranks.map((r) => 'rank ' + r.rank), datasets },
        options: {
          plugins: { title: { display: true, text: name } },
          scales: { x: axis('Rank', { ticks: { maxRotation: 0, autoSkip: true } }),
                    y: axis(isLoader ? 'Lowest AU of its accelerators (%)' : 'Throughput (MiB/s)', isLoader ? { min: 0, max: 100 } : { beginAtZero: true }) },
        },
      });
    });
  }

  // Chart.js does not follow the page into print layout by itself.
  window.addEventListener('beforeprint', () => charts.forEach((ch) => ch.resize()));
  window.addEventListener('afterprint', () => charts.forEach((ch) => ch.resize()));
  if (!charts.length) {
    document.getElementById('charts').innerHTML = '<p class="muted">No successful case to chart: see the tables below.</p>';
  }
  // Each canvas must hold drawn pixels.
  const drawnPixels = (ch) => {
    const cv = ch.canvas;
    const px = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
    for (let i = 3; i < px.length; i += 4) if (px[i]) return true;
    return false;
  };
  const drawn = charts.filter(drawnPixels).length;
  if (!errors.length) {
    root.dataset.reportStatus = drawn === charts.length ? 'ok ' + drawn + ' charts' : 'error: ' + (charts.length - drawn) + ' of ' + charts.length + ' charts empty';
  }

  // ---- self-check (#selfcheck): the page measures itself and writes what it found.
  if (!/selfcheck/.test(location.hash)) return;
  const missing = /undefined|NaN|\bnull\b|\(\s*\)|\(\s|\s\)|,\s*[,.)]|\s,|\S {2,}\S/;
  const texts = [];
  const chartsFound = charts.map((ch) => {
    const ctx = ch.ctx;
    // The legend's entries, in the canvas's coordinates: each must lie within the chart's width.
    const { left: origin, width: cssWidth } = ch.canvas.closest('.box').getBoundingClientRect();
    const boxes = [...ch.canvas.closest('figure').querySelectorAll('ul.legend li')].map((li) => {
      const r = li.getBoundingClientRect();
      return { left: r.left - origin, width: Math.max(r.width, li.scrollWidth) };
    });
    const titleText = [].concat(ch.options.plugins.title.text || []);
    texts.push(...titleText, ...ch.data.datasets.map((d) => d.label));
    const scales = Object.values(ch.scales).filter((s) => s.options.title && s.options.title.display).map((s) => {
      ctx.save();
      ctx.font = Chart.helpers.toFont(s.options.title.font).string;
      const need = ctx.measureText(s.options.title.text).width;
      ctx.restore();
      texts.push(s.options.title.text);
      const room = s.isHorizontal() ? ch.width : ch.height;
      return { axis: s.id, title: s.options.title.text, fits: need <= room && s.left >= 0 && s.top >= 0 && s.right <= ch.width + 1 && s.bottom <= ch.height + 1 };
    });
    ctx.save();
    ctx.font = Chart.helpers.toFont(ch.options.plugins.title.font).string;
    const titleFits = titleText.every((t) => ctx.measureText(t).width <= ch.width);
    ctx.restore();
    return {
      title: titleText.join(' / '),
      series: ch.data.datasets.filter((d) => !d.reference).length,
      drawn: drawnPixels(ch),
      width: cssWidth, height: ch.height, plotHeight: Math.round(ch.chartArea.bottom - ch.chartArea.top),
      legendEntries: boxes.length,
      legendLeft: boxes.length ? Math.min(...boxes.map((b) => b.left)) : 0,
      legendRight: boxes.length ? Math.max(...boxes.map((b) => b.left + b.width)) : 0,
      titleFits, axes: scales,
    };
  });
  // Columns a reader needs (the case label, the key figures, the verdict) visible at this width
  // without scrolling; the label column stays put when the table scrolls.
  const tables = [...document.querySelectorAll('table.cases')].map((t) => {
    const box = t.closest('.scroll') || t.parentElement;
    const right = Math.min(box.getBoundingClientRect().right, document.documentElement.clientWidth);
    const hidden = [...t.querySelectorAll('thead th.label, thead th.key')].filter((th) => th.getBoundingClientRect().right > right + 1).map((th) => th.textContent);
    let sticky = true;
    if (box.scrollWidth > box.clientWidth) {
      const label = t.querySelector('tbody th.label');
      const before = label.getBoundingClientRect().left;
      box.scrollLeft = 120;
      sticky = Math.abs(label.getBoundingClientRect().left - before) < 1;
      box.scrollLeft = 0;
    }
    const h = t.closest('section').querySelector('h2');
    let heading = t.closest('.scroll').previousElementSibling;
    while (heading && !/^H[23]$/.test(heading.tagName)) heading = heading.previousElementSibling;
    // Column headers wrap between words: a word that would fit the widest the column may grow
    // (its max-width) but is wider than its cell was broken inside it. Longer words (a file's
    // label) must break somewhere.
    const brokenWords = [];
    const ctx = document.createElement('canvas').getContext('2d');
    t.querySelectorAll('thead th').forEach((th) => {
      const cs = getComputedStyle(th);
      const padding = parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight);
      const room = th.clientWidth - padding;
      const most = cs.maxWidth === 'none' ? Infinity : parseFloat(cs.maxWidth) - padding;
      ctx.font = cs.font;
      for (const w of th.textContent.split(/\s+/)) {
        const need = w ? ctx.measureText(w).width : 0;
        if (need > room + 0.5 && need <= most) brokenWords.push(w);
      }
    });
    return { table: (heading || h).textContent, hidden, scrolls: box.scrollWidth > box.clientWidth, sticky, brokenWords };
  });
  document.querySelectorAll('main h1, main h2, main h3, main p, main li, figcaption, option, label, th, td').forEach((e) => texts.push(e.textContent));
  const report = {
    viewport: document.documentElement.clientWidth,
    errors: errors.slice(),
    status: root.dataset.reportStatus || '',
    charts: chartsFound,
    tables,
    text_defects: texts.map((s) => String(s)).filter((s) => missing.test(s)).slice(0, 20),
  };
  const out = document.createElement('pre');
  out.id = 'selfcheck';
  out.hidden = true;
  out.textContent = JSON.stringify(report);
  document.body.appendChild(out);
})();
