// The review page: one drive on synchronised uPlot charts, and label correction.
// Data comes from the local server (/api/...); sample charts are refetched for every view, at
// most two points per pixel (min/max), all samples once zoomed in far enough.
"use strict";

(function () {
  // Every colour the timelines draw, with what it means: the on-page legend is built from this.
  const PALETTE = {
    distracted: ["#d62728", "distracted"], attentive: ["#2ca02c", "attentive"],
    unlabelled: ["#f2f2f2", "unknown: no label"], undecided: ["#cccccc", "unknown: no decision"],
    reviewed: ["#3b6fb6", "reviewed (next skips it)"], low: ["#ff7f0e", "low confidence"],
    segment1: [segmentColour([0, 0, 0, 1]), "segment: distracted (shade: cluster)"],
    segment0: [segmentColour([0, 0, 0, 0]), "segment: attentive"],
    cluster1: ["#8c564b", "cluster: distracted"], cluster0: ["#c49c94", "cluster: attentive"],
    off_road: ["#9467bd", "glance off road"], mirror: ["#e377c2", "glance mirror"],
    instrument: ["#bcbd22", "glance instrument"], track_loss: ["#7f7f7f", "track loss"],
    saccade: ["#1f77b4", "saccade"], blink: ["#17becf", "blink"],
    long_distraction: ["#a01010", "long-glance alert"],
    time_sharing: ["#e6a100", "time-sharing alert"],
  };
  const colour = (key) => PALETTE[key][0];
  const labelKey = (v) => (v === 1 ? "distracted" : v === 0 ? "attentive" : "undecided");
  const SERIES_COLOURS = ["#1f77b4", "#ff7f0e", "#9467bd", "#8c564b"];
  const LEFT_AXIS_PX = 112, RIGHT_AXIS_PX = 56, ROW_PX = 15;
  const $ = (id) => document.getElementById(id);

  const app = {
    drive: null, view: [0, 1], selection: null, labels: [], reviewed: [], history: [],
    dirty: false, runs: {}, cursorT: null, feature: null, featureValues: null,
    sampleCharts: [], windowChart: null, labelChart: null, timeline: null, fetchTimer: null,
    fetchSeq: 0,
  };

  // ---------- formatting and small helpers ----------
  function clock(s, step) {
    const sign = s < 0 ? "-" : "";
    const digits = step !== undefined && step < 1 ? Math.min(3, Math.ceil(-Math.log10(step))) : 0;
    s = Math.round(Math.abs(s) * 10 ** digits) / 10 ** digits;
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    const secText = sec.toFixed(digits).padStart(digits ? 3 + digits : 2, "0");
    return sign + (h ? `${h}:${String(m).padStart(2, "0")}:${secText}` : `${m}:${secText}`);
  }
  const round3 = (v) => Math.round(v * 1000) / 1000;

  function status(text, bad) {
    const el = $("status");
    el.textContent = text;
    el.className = bad ? "bad" : "";
  }

  function showErrors(errors) {
    const el = $("errors");
    el.hidden = !errors.length;
    el.textContent = errors.join("\n");
  }

  function sessionToken() {
    // the server writes its per-session token into the page; every save presents it
    return document.querySelector('meta[name="distractd-token"]').content;
  }

  async function getJSON(url, options) {
    const response = await fetch(url, options);
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }

  function runsOf(t0s, t1s, values, wanted) {
    // runs of equal values among consecutive windows, over their owned stretches
    const out = [];
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (v === null || v === undefined || (wanted && !wanted(v))) continue;
      const last = out[out.length - 1];
      if (last && last[2] === v && last[3] === i - 1) { last[1] = t1s[i]; last[3] = i; }
      else out.push([t0s[i], t1s[i], v, i]);
    }
    return out;
  }

  // The stretch each window owns: half-way to its neighbours' centres (as the label intervals).
  function ownedEdges(w) {
    const n = w.t_end.length, lo = new Array(n), hi = new Array(n);
    const centre = (i) => 0.5 * (w.t_start[i] + w.t_end[i]);
    for (let i = 0; i < n; i++) {
      lo[i] = i === 0 ? w.t_start[0] : 0.5 * (centre(i - 1) + centre(i));
      hi[i] = i === n - 1 ? w.t_end[n - 1] : 0.5 * (centre(i) + centre(i + 1));
    }
    return [lo, hi];
  }

  // ---------- labels: the edit, undo, save ----------
  function relabel(intervals, a, b, label) {
    const out = [];
    for (const [s, e, l] of intervals) {
      if (e <= a || s >= b) { out.push([s, e, l]); continue; }
      if (s < a) out.push([s, a, l]);
      if (e > b) out.push([b, e, l]);
    }
    if (label !== null) out.push([a, b, label]);
    out.sort((p, q) => p[0] - q[0]);
    const merged = [];
    for (const iv of out) {
      const last = merged[merged.length - 1];
      if (last && last[2] === iv[2] && iv[0] <= last[1] + 1e-9) last[1] = Math.max(last[1], iv[1]);
      else merged.push(iv.slice());
    }
    return merged;
  }

  function setDirty(dirty) {
    app.dirty = dirty;
    document.body.classList.toggle("dirty", dirty);
    $("undo").disabled = !app.history.length;
  }

  function applyLabel(label) {
    if (!app.selection) { status("select a stretch first: drag across a chart", true); return; }
    const [a, b] = app.selection;
    app.history.push([app.labels, app.reviewed]);
    app.labels = relabel(app.labels, a, b, label);
    app.reviewed = markReviewed(app.reviewed, a, b);   // a corrected stretch has been looked at
    setDirty(true);
    const name = label === 1 ? "distracted" : label === 0 ? "attentive" : "unknown";
    status(`${clock(a, 0.1)} – ${clock(b, 0.1)} set ${name}`);
    redrawAll();
  }

  // Reviewed stretches: [start, end] pairs, merged; "next low-confidence" skips them.
  function markReviewed(reviewed, a, b) {
    const out = [...reviewed.map((r) => r.slice()), [a, b]].sort((p, q) => p[0] - q[0]);
    const merged = [];
    for (const r of out) {
      const last = merged[merged.length - 1];
      if (last && r[0] <= last[1] + 1e-9) last[1] = Math.max(last[1], r[1]);
      else merged.push(r);
    }
    return merged;
  }

  const isReviewed = (t) => app.reviewed.some(([a, b]) => a <= t && t <= b);

  function setReviewed() {
    if (!app.selection) { status("select a stretch first: drag across a chart", true); return; }
    const [a, b] = app.selection;
    app.history.push([app.labels, app.reviewed]);
    app.reviewed = markReviewed(app.reviewed, a, b);
    setDirty(true);
    status(`${clock(a, 0.1)} – ${clock(b, 0.1)} marked reviewed`);
    redrawAll();
  }

  function undo() {
    if (!app.history.length) return;
    [app.labels, app.reviewed] = app.history.pop();
    setDirty(true);
    status("undone");
    redrawAll();
  }

  async function save() {
    if (!app.drive.save_to) { status("saving is off (see the message above)", true); return; }
    try {
      const report = await getJSON("/api/labels", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Distractd-Token": sessionToken() },
        // the digest of the labels this tab loaded: a save over another tab's is refused
        body: JSON.stringify({ intervals: app.labels, reviewed: app.reviewed,
                               digest: app.drive.digest }),
      });
      app.drive.digest = report.digest;
      setDirty(false);
      status(`saved ${report.intervals} intervals and ${report.reviewed} reviewed stretches ` +
             `to ${report.path}` +
             (report.backup ? ` (previous file kept as ${report.backup})` : ""));
    } catch (err) {
      status(`not saved: ${err.message}`, true);
    }
  }

  // ---------- selection ----------
  function select(a, b) {
    const d = app.drive;
    a = Math.max(d.t0, Math.min(a, b)); b = Math.min(d.t1, Math.max(a, b));
    if (!(b > a)) { app.selection = null; }
    else app.selection = [round3(a), round3(b)];
    const el = $("selection");
    if (app.selection) {
      el.textContent = `selected ${clock(app.selection[0], 0.1)} – ${clock(app.selection[1], 0.1)} ` +
                       `(${(app.selection[1] - app.selection[0]).toFixed(1)} s)`;
      el.dataset.t0 = app.selection[0]; el.dataset.t1 = app.selection[1];
    } else {
      el.textContent = "drag across a chart to select a stretch";
      delete el.dataset.t0; delete el.dataset.t1;
    }
    redrawAll();
  }

  function nextLowConfidence() {
    const d = app.drive, w = d.windows, conf = w.confidence;
    const bound = parseFloat($("low-bound").value);
    if (!conf || !isFinite(bound)) return;
    const [lo, hi] = ownedEdges(w);
    // a window counts once it is reviewed: its owned stretch's middle lies in a reviewed one
    const low = (i) => conf[i] !== null && conf[i] < bound && !isReviewed(0.5 * (lo[i] + hi[i]));
    // the first run to start whose first window ends after the view's start (windows may
    // start before the first sample) or after the last stretch shown
    const from = app.cursorT === null ? app.view[0] : app.cursorT;
    let i = w.t_end.findIndex((_, k) => hi[k] > from && low(k) && (k === 0 || !low(k - 1)));
    let wrapped = false;
    if (i < 0) { i = w.t_end.findIndex((_, k) => low(k)); wrapped = true; }
    if (i < 0) {
      status(`no window with ${d.confidence_kind} below ${bound} left unreviewed`);
      return;
    }
    let j = i;
    while (j + 1 < w.t_end.length && low(j + 1)) j++;
    app.cursorT = hi[j];
    const pad = Math.max(30, hi[j] - lo[i]);
    setView(lo[i] - pad, hi[j] + pad);
    select(lo[i], hi[j]);
    const values = conf.slice(i, j + 1);
    status(`${wrapped ? "from the start: " : ""}windows ${i + 1}–${j + 1} of ${w.t_end.length}, ` +
           `${d.confidence_kind} ${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`);
  }

  // ---------- the view: zoom, pan, fetch ----------
  function setView(t0, t1) {
    const d = app.drive, span = d.t1 - d.t0;
    let width = Math.min(Math.max(t1 - t0, 0.5), span);
    t0 = Math.max(d.t0, Math.min(t0, d.t1 - width));
    app.view = [t0, t0 + width];
    for (const u of allCharts()) u.setScale("x", { min: app.view[0], max: app.view[1] });
    clearTimeout(app.fetchTimer);
    app.fetchTimer = setTimeout(fetchView, 80);
  }

  function zoom(factor, centre) {
    const [t0, t1] = app.view;
    if (centre === undefined) centre = 0.5 * (t0 + t1);
    setView(centre - (centre - t0) * factor, centre + (t1 - centre) * factor);
  }

  function pan(fraction) {
    const [t0, t1] = app.view, dt = (t1 - t0) * fraction;
    setView(t0 + dt, t1 + dt);
  }

  async function fetchView() {
    const seq = ++app.fetchSeq;
    const [t0, t1] = app.view;
    const px = Math.max(100, Math.round(app.labelChart.bbox.width / devicePixelRatio));
    let data;
    try {
      data = await getJSON(`/api/view?t0=${t0}&t1=${t1}&px=${px}`);
    } catch (err) {
      status(`view not loaded: ${err.message}`, true);
      return;
    }
    if (seq !== app.fetchSeq) return;   // a newer view is on its way
    app.runs = data.runs;
    for (const chart of app.sampleCharts) {
      chart.u.setData([data.x, ...chart.fields.map((f) => data.series[f])], true);
      chart.u.setScale("x", { min: t0, max: t1 });
    }
    app.timeline.redraw(false);
    app.labelChart.redraw(false);
    document.body.dataset.detail = data.full ? "samples" : "envelope";
    document.body.dataset.ready = "1";
  }

  // ---------- charts ----------
  function allCharts() {
    return [app.labelChart, ...app.sampleCharts.map((c) => c.u), app.windowChart, app.timeline]
      .filter(Boolean);
  }

  function redrawAll() {
    for (const u of allCharts()) u.redraw(false);
  }

  function timeAxis(show) {
    return {
      show, size: show ? 36 : 0,
      values: (u, splits) => {
        const step = splits.length > 1 ? splits[1] - splits[0] : 1;
        return splits.map((s) => clock(s, step));
      },
    };
  }

  function rightAxis(show) {
    return show
      ? { scale: "r", side: 1, size: RIGHT_AXIS_PX, grid: { show: false } }
      : { scale: "r", side: 1, size: RIGHT_AXIS_PX, grid: { show: false }, ticks: { show: false },
          values: (u, splits) => splits.map(() => "") };
  }

  // Selection overlay and wheel zoom, shared by every chart.
  function commonHooks() {
    return {
      setSelect: [(u) => {
        if (u.select.width > 2) {
          select(u.posToVal(u.select.left, "x"), u.posToVal(u.select.left + u.select.width, "x"));
        }
        u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
      }],
      draw: [(u) => {
        if (!app.selection) return;
        const x0 = u.valToPos(app.selection[0], "x", true), x1 = u.valToPos(app.selection[1], "x", true);
        u.ctx.save();
        u.ctx.fillStyle = "rgba(30, 110, 220, 0.14)";
        u.ctx.strokeStyle = "rgba(30, 110, 220, 0.7)";
        u.ctx.fillRect(x0, u.bbox.top, x1 - x0, u.bbox.height);
        u.ctx.strokeRect(x0, u.bbox.top, x1 - x0, u.bbox.height);
        u.ctx.restore();
      }],
      ready: [(u) => {
        u.over.addEventListener("wheel", (e) => {
          e.preventDefault();
          const rect = u.over.getBoundingClientRect();
          const centre = u.posToVal(e.clientX - rect.left, "x");
          if (e.shiftKey) pan(e.deltaY > 0 ? 0.2 : -0.2);
          else zoom(e.deltaY > 0 ? 1.25 : 0.8, centre);
        }, { passive: false });
      }],
    };
  }

  function baseOptions(width, height, extra) {
    return Object.assign({
      width, height,
      scales: { x: { time: false, auto: false, range: () => app.view } },
      cursor: {
        sync: { key: "review" },
        drag: { x: true, y: false, setScale: false },
        bind: { dblclick: () => () => null },
      },
      hooks: commonHooks(),
    }, extra);
  }

  function chartBox(title) {
    const box = document.createElement("section");
    box.className = "chart";
    const h = document.createElement("h2");
    h.textContent = title;
    box.appendChild(h);
    $("charts").appendChild(box);
    return box;
  }

  function buildSampleCharts(width) {
    for (const panel of app.drive.panels) {
      const box = chartBox(panel.title);
      box.id = `chart-${panel.id}`;
      const series = [{ label: "t", value: (u, v) => (v === null ? "–" : clock(v, 0.01)) }];
      panel.fields.forEach((f, i) => series.push({
        label: f, stroke: SERIES_COLOURS[i % SERIES_COLOURS.length], width: 1,
        value: (u, v) => (v === null ? "–" : v.toFixed(2)),
      }));
      const opts = baseOptions(width, 120, {
        series,
        axes: [timeAxis(false), { size: LEFT_AXIS_PX }, rightAxis(false)],
      });
      opts.scales.r = { range: [0, 1] };
      const empty = [[], ...panel.fields.map(() => [])];
      app.sampleCharts.push({ u: new uPlot(opts, empty, box), fields: panel.fields });
    }
  }

  function buildWindowChart(width) {
    const d = app.drive, w = d.windows;
    if (app.windowChart) { app.windowChart.destroy(); app.windowChart = null; }
    let box = $("chart-windows");
    if (!box) { box = chartBox(""); box.id = "chart-windows"; }
    const hasScore = w.score !== null, hasFeature = app.featureValues !== null;
    if (!hasScore && !hasFeature) { box.hidden = true; return; }
    box.hidden = false;
    const parts = [];
    if (hasScore) parts.push(`detector score (model ${d.model.id}; threshold ${d.threshold})`);
    if (hasFeature) {
      const against = d.features_baseline ? " (against the running baseline)" : "";
      parts.push(`${app.feature}${against}, right axis`);
    }
    box.querySelector("h2").textContent = parts.join(" · ");
    const series = [{ label: "t", value: (u, v) => (v === null ? "–" : clock(v, 0.01)) }];
    const data = [w.t_end];
    if (hasScore) {
      series.push({ label: "score", stroke: "#1f77b4", width: 1 });
      series.push({
        label: "threshold", stroke: "#555", dash: [4, 4], width: 1, points: { show: false },
      });
      data.push(w.score, w.t_end.map(() => d.threshold));
    }
    if (hasFeature) {
      series.push({ label: app.feature, stroke: "#e377c2", width: 1, scale: "r" });
      data.push(app.featureValues);
    }
    const opts = baseOptions(width, 120, {
      series,
      axes: [timeAxis(false), { size: LEFT_AXIS_PX }, rightAxis(hasFeature)],
    });
    if (!hasFeature) opts.scales.r = { range: [0, 1] };
    app.windowChart = new uPlot(opts, data, box);
    app.windowChart.setScale("x", { min: app.view[0], max: app.view[1] });
  }

  // The timelines: one row per kind of interval, drawn on the canvas. The label rows sit on
  // top, under the toolbar, and stay in view while the signals scroll (sticky); the event rows
  // close the page. Each row names the PALETTE keys it draws, for the legend.
  function labelRows() {
    const d = app.drive, w = d.windows, rows = [];
    const [lo, hi] = ownedEdges(w);
    rows.push({ name: "labels (edit)", spans: () => app.labels, colour: (s) => colour(labelKey(s[2])),
                keys: ["distracted", "attentive", "unlabelled"] });
    rows.push({ name: "reviewed", spans: () => app.reviewed, colour: () => colour("reviewed"),
                keys: ["reviewed"] });
    if (w.confidence) {
      rows.push({
        name: "low confidence",
        spans: () => {
          const bound = parseFloat($("low-bound").value);
          return runsOf(lo, hi, w.confidence.map((c) => (c !== null && c < bound ? 1 : null)));
        },
        colour: () => colour("low"), keys: ["low"],
      });
    }
    if (d.truth.length) {
      rows.push({ name: "truth", spans: () => d.truth, colour: (s) => colour(labelKey(s[2])),
                  keys: ["distracted", "attentive", "unlabelled"] });
    }
    if (w.state) {
      const state = runsOf(lo, hi, w.state);
      rows.push({ name: "state", spans: () => state, colour: (s) => colour(labelKey(s[2])),
                  keys: ["distracted", "attentive", "undecided"] });
    }
    return rows;
  }

  function eventRows() {
    const d = app.drive, w = d.windows, rows = [];
    const [lo, hi] = ownedEdges(w);
    if (d.segments.length) {
      rows.push({ name: "segments", spans: () => d.segments, colour: (s) => segmentColour(s),
                  keys: ["segment1", "segment0"] });
    }
    if (w.cluster) {
      const clusters = runsOf(lo, hi, w.cluster, (v) => v >= 0);
      rows.push({ name: "clusters", spans: () => clusters,
                  colour: (s) => colour(s[2] ? "cluster1" : "cluster0"), keys: ["cluster1", "cluster0"] });
    }
    for (const g of d.glances_away) {
      rows.push({ name: `glance ${g.replace("_", " ")}`, spans: () => app.runs[g] || [],
                  colour: () => colour(g), keys: [g] });
    }
    for (const [key, name] of [["track_loss", "track loss"], ["saccade", "saccades"], ["blink", "blinks"]]) {
      rows.push({ name, spans: () => app.runs[key] || [], colour: () => colour(key), keys: [key] });
    }
    rows.push({ name: "alerts", spans: () => d.alerts.map(([t, kind]) => [t, t, kind]),
                colour: (s) => colour(s[2]), marks: true, keys: ["long_distraction", "time_sharing"] });
    return rows;
  }

  function segmentColour(s) {
    // the segment's label colour, lighter for even clusters so neighbours stay apart
    const base = s[3] === 1 ? [214, 39, 40] : s[3] === 0 ? [44, 160, 44] : [150, 150, 150];
    const k = s[2] % 3;
    const mix = (c) => Math.round(c + (255 - c) * (0.15 + 0.25 * k));
    return `rgb(${base.map(mix).join(",")})`;
  }

  function buildTimeline(rows, id, title, showAxis) {
    const box = chartBox(title);
    box.id = id;
    box.dataset.keys = [...new Set(rows.flatMap((r) => r.keys))].join(" ");
    const height = rows.length * ROW_PX + (showAxis ? 46 : 12);
    const opts = baseOptions(chartWidth(), height, {
      legend: { show: false },
      series: [{}, { label: "", stroke: "transparent", scale: "rows" }],
      axes: [
        timeAxis(showAxis),
        {
          scale: "rows", size: LEFT_AXIS_PX, gap: 2, grid: { show: false }, ticks: { show: false },
          splits: () => rows.map((_, i) => i + 0.5),
          values: () => rows.map((r) => r.name), font: "11px system-ui, sans-serif",
        },
        rightAxis(false),
      ],
    });
    opts.scales.rows = { auto: false, range: [0, rows.length], dir: -1 };
    opts.scales.r = { range: [0, 1] };
    opts.hooks.draw.unshift((u) => {
      const ctx = u.ctx, top = u.bbox.top, rowH = u.bbox.height / rows.length;
      const [t0, t1] = app.view;
      ctx.save();
      ctx.beginPath();
      ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
      ctx.clip();
      rows.forEach((row, i) => {
        const y = top + i * rowH + rowH * 0.12, h = rowH * 0.76;
        ctx.fillStyle = i % 2 ? "#fafafa" : "#f2f2f2";
        ctx.fillRect(u.bbox.left, top + i * rowH, u.bbox.width, rowH);
        for (const s of row.spans()) {
          if (s[1] < t0 || s[0] > t1) continue;
          const x0 = u.valToPos(s[0], "x", true);
          const x1 = row.marks ? x0 + 2 * devicePixelRatio : u.valToPos(s[1], "x", true);
          ctx.fillStyle = row.colour(s);
          ctx.fillRect(x0, y, Math.max(x1 - x0, devicePixelRatio), h);
        }
      });
      ctx.restore();
    });
    const u = new uPlot(opts, [[app.drive.t0, app.drive.t1], [null, null]], box);
    u.setScale("x", { min: app.view[0], max: app.view[1] });
    return [u, box];
  }

  // The legend: a swatch and a meaning for every colour the page's timelines draw.
  function buildLegend(rowSets) {
    const el = $("legend");
    const keys = [...new Set(rowSets.flat().flatMap((r) => r.keys))];
    for (const key of keys) {
      const item = document.createElement("span");
      item.className = "legend-item";
      item.dataset.key = key;
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = colour(key);
      item.append(swatch, PALETTE[key][1]);
      el.appendChild(item);
    }
    el.hidden = false;
  }

  async function chooseFeature(name) {
    app.feature = name || null;
    app.featureValues = null;
    if (name) {
      try {
        app.featureValues = (await getJSON(`/api/feature?name=${encodeURIComponent(name)}`)).values;
      } catch (err) {
        status(err.message, true);
        app.feature = null;
      }
    }
    buildWindowChart(chartWidth());
    const timeline = $("timeline");
    timeline.parentNode.appendChild(timeline);   // keep the timeline last
  }

  function stickBelowToolbar() {
    // the label rows stick just below the (wrapping, so measured) toolbar
    document.documentElement.style.setProperty("--toolbar-h", `${$("toolbar").offsetHeight}px`);
  }

  function chartWidth() {
    return Math.max(600, $("charts").clientWidth - 4);
  }

  // ---------- start ----------
  function facts(d) {
    const parts = [`${clock(d.t1 - d.t0)} (${d.n_samples.toLocaleString()} samples)`];
    parts.push(d.model ? `model ${d.model.id} (${d.model.kind})` : "no model (--model adds the detector)");
    parts.push(`labels: ${d.labels_source}`);
    return parts.join(" · ");
  }

  function bindControls() {
    $("zoom-in").onclick = () => zoom(0.5);
    $("zoom-out").onclick = () => zoom(2);
    $("pan-left").onclick = () => pan(-0.5);
    $("pan-right").onclick = () => pan(0.5);
    $("zoom-all").onclick = () => setView(app.drive.t0, app.drive.t1);
    $("zoom-selection").onclick = () => app.selection && setView(...app.selection);
    $("set-distracted").onclick = () => applyLabel(1);
    $("set-attentive").onclick = () => applyLabel(0);
    $("set-unknown").onclick = () => applyLabel(null);
    $("undo").onclick = undo;
    $("set-reviewed").onclick = setReviewed;
    $("save").onclick = save;
    $("next-low").onclick = nextLowConfidence;
    $("low-bound").onchange = redrawAll;
    $("feature").onchange = (e) => chooseFeature(e.target.value);
    document.addEventListener("keydown", (e) => {
      if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
      const keys = {
        d: () => applyLabel(1), a: () => applyLabel(0), u: () => applyLabel(null), z: undo,
        r: setReviewed,
        n: nextLowConfidence, s: save, "+": () => zoom(0.5), "=": () => zoom(0.5),
        "-": () => zoom(2), ArrowLeft: () => pan(-0.5), ArrowRight: () => pan(0.5),
        0: () => setView(app.drive.t0, app.drive.t1), Escape: () => select(0, 0),
        Enter: () => app.selection && setView(...app.selection),
      };
      const action = keys[e.key];
      if (action && !e.altKey && !(e.metaKey && e.key !== "s" && e.key !== "z")) {
        e.preventDefault();
        action();
      }
    });
    window.addEventListener("beforeunload", (e) => {
      if (app.dirty) { e.preventDefault(); e.returnValue = ""; }
    });
    let resizeTimer = null;
    window.addEventListener("resize", () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => {
        const width = chartWidth();
        for (const u of allCharts()) u.setSize({ width, height: u.height });
        stickBelowToolbar();
        fetchView();
      }, 150);
    });
  }

  async function start() {
    let d;
    try {
      d = await getJSON("/api/drive");
    } catch (err) {
      showErrors([`the drive could not be loaded: ${err.message}`]);
      document.body.dataset.ready = "error";
      return;
    }
    app.drive = d;
    showErrors(d.errors);
    $("title").textContent = `distractd review — ${d.name}`;
    if (d.windows === undefined) { document.body.dataset.ready = "error"; return; }
    $("facts").textContent = facts(d);
    $("toolbar").hidden = false;
    app.labels = d.labels.map((s) => s.slice());
    app.view = [d.t0, d.t1];
    $("save-to").textContent = d.save_to ? `→ ${d.save_to}` : "saving is off";
    $("save").disabled = !d.save_to;
    if (d.confidence_kind) {
      $("confidence-kind").textContent = d.confidence_kind;
      $("low-bound").value = d.low_confidence;
    } else {
      $("confidence-group").hidden = true;
    }
    for (const name of d.features) {
      const option = document.createElement("option");
      option.value = option.textContent = name;
      $("feature").appendChild(option);
    }
    const width = chartWidth();
    app.reviewed = (d.reviewed || []).map((r) => r.slice());
    const labels = labelRows(), events = eventRows();
    let box;
    [app.labelChart, box] = buildTimeline(labels, "labels-chart", "labels", true);
    box.appendChild($("legend"));
    buildLegend([labels, events]);
    buildSampleCharts(width);
    buildWindowChart(width);
    [app.timeline] = buildTimeline(events, "timeline", "eye events, glances, alerts", true);
    stickBelowToolbar();
    bindControls();
    setDirty(false);
    await fetchView();
  }

  start();
})();
