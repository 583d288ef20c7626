// report.html: charts on uPlot. Every chart is <figure class="chart" data-chart=NAME> with a
// caption, a CSV button and the plot. Line charts mark each curve's peak and can carry a
// "moment" marker (a vertical line) picked by a click in the plot area.
(function () {
  "use strict";
  var S = window.Strata;
  var PALETTE = ["#2458b3", "#d9480f", "#2b8a3e", "#ae3ec9", "#e8a400", "#0c8599", "#c2255c",
                 "#5c940d", "#7048e8", "#495057", "#f08c00", "#1098ad"];
  var assigned = {};
  var next = 0;
  // One colour per name (allocator, run) on the whole page.
  S.colorFor = function (name) {
    if (!assigned[name]) assigned[name] = PALETTE[next++ % PALETTE.length];
    return assigned[name];
  };
  S.charts = [];

  S.fmtCompact = function (n) {
    if (!S.finite(n)) return "";
    var a = Math.abs(n);
    if (a >= 1e9) return S.sig3(n / 1e9) + "G";
    if (a >= 1e6) return S.sig3(n / 1e6) + "M";
    if (a >= 1e4) return S.sig3(n / 1e3) + "k";
    return S.sig3(n);
  };

  // <figure class="chart" data-chart=NAME>: caption (title, note, tools) and the plot box.
  S.chartFigure = function (parent, name, title, note) {
    var tools = S.el("span", { class: "tools" });
    var noteEl = S.el("span", { class: "note" }, note || "");
    var fig = S.el("figure", { class: "chart", "data-chart": name },
      S.el("figcaption", {}, S.el("span", {}, title), noteEl, tools));
    var plot = S.el("div", { class: "plot" });
    fig.appendChild(plot);
    parent.appendChild(fig);
    return { fig: fig, plot: plot, tools: tools, note: noteEl };
  };

  function plotWidth(box) {
    var w = box.plot.clientWidth || box.fig.clientWidth || 0;
    return Math.max(320, w || 1100);
  }

  // Sorts one curve by x; NaN and missing points dropped.
  function cleanCurve(xs, ys) {
    var pts = [];
    for (var i = 0; i < xs.length && i < ys.length; i++)
      if (S.finite(xs[i]) && S.finite(ys[i])) pts.push([xs[i], ys[i]]);
    var sortedAlready = true;
    for (var j = 1; j < pts.length; j++) if (pts[j][0] < pts[j - 1][0]) { sortedAlready = false; break; }
    if (!sortedAlready) pts.sort(function (a, b) { return a[0] - b[0]; });
    return pts;
  }

  // Curves with their own xs, on one x axis: the union of the xs, nulls where a curve has no
  // point (uPlot draws across them with spanGaps).
  S.alignCurves = function (curves) {
    var cleaned = curves.map(function (c) { return cleanCurve(c.xs, c.ys); });
    var all = [];
    cleaned.forEach(function (pts) { pts.forEach(function (p) { all.push(p[0]); }); });
    all.sort(function (a, b) { return a - b; });
    var xs = [];
    for (var i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) xs.push(all[i]);
    var ys = cleaned.map(function (pts) {
      var out = new Array(xs.length).fill(null), k = 0;
      pts.forEach(function (p) {
        while (xs[k] < p[0]) k++;
        out[k] = p[1];
      });
      return out;
    });
    return { xs: xs, ys: ys };
  };

  function argmax(arr) {
    var best = -1;
    for (var i = 0; i < arr.length; i++) if (arr[i] !== null && (best < 0 || arr[i] > arr[best])) best = i;
    return best;
  }

  function clipToPlot(u, ctx) {
    ctx.save();
    ctx.beginPath();
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    ctx.clip();
  }

  // The peaks to show: each shown series' peak inside the x range, [{x, y, cx, cy, color, label}].
  function visiblePeaks(u, peaks) {
    var out = [];
    peaks.forEach(function (idx, s) {
      var series = u.series[s + 1];
      if (idx < 0 || !series.show) return;
      var x = u.data[0][idx], y = u.data[s + 1][idx];
      if (x < u.scales.x.min || x > u.scales.x.max) return;
      out.push({ x: x, y: y, cx: u.valToPos(x, "x", true), cy: u.valToPos(y, "y", true),
        color: series._stroke || "#000", label: String(series.label || "") });
    });
    return out;
  }

  function triangle(ctx, cx, tipY, r) {
    ctx.beginPath();
    ctx.moveTo(cx, tipY);
    ctx.lineTo(cx - r, tipY - 1.6 * r);
    ctx.lineTo(cx + r, tipY - 1.6 * r);
    ctx.closePath();
  }

  // How much of a box the curves and peak markers cover (points sampled, markers weigh more).
  function crowding(u, box, marks, dpr) {
    var hits = 0, n = u.data[0].length, step = Math.max(1, Math.floor(n / 400));
    function inside(px, py) { return px >= box.x && px <= box.x + box.w && py >= box.y && py <= box.y + box.h; }
    for (var s = 1; s < u.data.length; s++) {
      if (!u.series[s].show) continue;
      for (var i = 0; i < n; i += step) {
        var v = u.data[s][i];
        if (v !== null && inside(u.valToPos(u.data[0][i], "x", true), u.valToPos(v, "y", true))) hits++;
      }
    }
    marks.forEach(function (m) { if (inside(m.cx, m.cy - 8 * dpr)) hits += 1000; });
    return hits;
  }

  var MAX_PEAK_LINES = 8;
  // Each shown series' peak: a triangle over the point in the series' colour, and a small
  // legend of the peaks' values in whichever top corner the curves leave freer, so labels never
  // sit on one another, on the markers or under the moment line.
  function drawPeaks(u, peaks, yFmt) {
    var ctx = u.ctx, dpr = window.devicePixelRatio || 1, r = 5 * dpr;
    var marks = visiblePeaks(u, peaks);
    if (!marks.length) return;
    clipToPlot(u, ctx);
    marks.forEach(function (m) {
      ctx.fillStyle = m.color;
      ctx.strokeStyle = "#fff";
      ctx.lineWidth = 1.5 * dpr;
      triangle(ctx, m.cx, m.cy - 2 * dpr, r);
      ctx.fill();
      ctx.stroke();
    });
    ctx.font = Math.round(11 * dpr) + "px system-ui, sans-serif";
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    var named = marks.length > 1;
    var lines = marks.slice(0, MAX_PEAK_LINES).map(function (m) {
      var name = m.label.length > 24 ? m.label.slice(0, 23) + "\u2026" : m.label;
      return { color: m.color, text: (named ? name + ": " : "") + "peak " + yFmt(m.y) };
    });
    if (marks.length > MAX_PEAK_LINES) lines.push({ color: null, text: "+" + (marks.length - MAX_PEAK_LINES) + " more peaks" });
    var lineH = 15 * dpr, pad = 5 * dpr, glyph = 14 * dpr, w = 0;
    lines.forEach(function (l) { w = Math.max(w, ctx.measureText(l.text).width); });
    var box = { w: w + glyph + 2 * pad, h: lines.length * lineH + pad, y: u.bbox.top + 6 * dpr };
    var left = u.bbox.left + 8 * dpr, right = u.bbox.left + u.bbox.width - box.w - 8 * dpr;
    box.x = left;
    if (right > left && crowding(u, { x: right, y: box.y, w: box.w, h: box.h }, marks, dpr) <
        crowding(u, box, marks, dpr)) box.x = right;
    ctx.fillStyle = "rgba(255,255,255,0.9)";
    ctx.strokeStyle = "#d0d4db";
    ctx.lineWidth = dpr;
    ctx.fillRect(box.x, box.y, box.w, box.h);
    ctx.strokeRect(box.x, box.y, box.w, box.h);
    lines.forEach(function (l, i) {
      var cy = box.y + pad / 2 + (i + 0.5) * lineH;
      if (l.color) {
        ctx.fillStyle = l.color;
        triangle(ctx, box.x + pad + 5 * dpr, cy + 3.5 * dpr, 4 * dpr);
        ctx.fill();
      }
      ctx.fillStyle = "#1d2330";
      ctx.fillText(l.text, box.x + pad + glyph, cy);
    });
    ctx.restore();
  }

  function drawMoment(u, x, label) {
    if (x === null || x === undefined || x < u.scales.x.min || x > u.scales.x.max) return;
    var ctx = u.ctx, dpr = window.devicePixelRatio || 1;
    var cx = Math.round(u.valToPos(x, "x", true));
    clipToPlot(u, ctx);
    ctx.strokeStyle = "#b3261e";
    ctx.lineWidth = 2 * dpr;
    ctx.setLineDash([6 * dpr, 4 * dpr]);
    ctx.beginPath();
    ctx.moveTo(cx, u.bbox.top);
    ctx.lineTo(cx, u.bbox.top + u.bbox.height);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.font = Math.round(11 * dpr) + "px system-ui, sans-serif";
    ctx.fillStyle = "#b3261e";
    var right = cx > u.bbox.left + u.bbox.width - 160 * dpr;
    ctx.textAlign = right ? "right" : "left";
    ctx.fillText(label, cx + (right ? -5 : 5) * dpr, u.bbox.top + u.bbox.height - 6 * dpr);
    ctx.restore();
  }

  function register(box, u, height) {
    S.charts.push({ box: box, u: u, height: height });
    return u;
  }
  var resizeTimer = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      S.charts.forEach(function (c) {
        if (c.box.fig.isConnected) c.u.setSize({ width: plotWidth(c.box), height: c.height });
      });
    }, 150);
  });

  // Byte axes tick at binary steps (16 MiB, 32 MiB...), not decimal ones.
  var BYTE_INCRS = [];
  for (var k = 0; k < 6; k++)
    [1, 2, 4, 8, 16, 32, 64, 128, 256, 512].forEach(function (m) { BYTE_INCRS.push(m * Math.pow(1024, k)); });

  // Tick labels in one format for the whole axis ("5k, 10k, 15k", "0.5 MiB, 1 MiB"): the unit
  // is the one of the largest tick, so neighbouring ticks never switch style.
  function trim(v) { return String(parseFloat(v.toPrecision(4))); }
  function maxAbs(splits) {
    var m = 0;
    splits.forEach(function (v) { if (v !== null && isFinite(v)) m = Math.max(m, Math.abs(v)); });
    return m;
  }
  var TICKS = {
    bytes: function (splits) {
      var u = 0, m = maxAbs(splits);
      while (m >= 1024 && u < UNITS.length - 1) { m /= 1024; u++; }
      var d = Math.pow(1024, u);
      return function (v) { return trim(v / d) + " " + UNITS[u]; };
    },
    count: function (splits) {
      var m = maxAbs(splits);
      var p = m >= 1e9 ? [1e9, "G"] : m >= 1e6 ? [1e6, "M"] : m >= 1e4 ? [1e3, "k"] : null;
      if (!p) return function (v) { return Math.round(v) === v ? v.toLocaleString("en-US") : trim(v); };
      return function (v) { return v === 0 ? "0" : trim(v / p[0]) + p[1]; };
    },
    seconds: function (splits) {
      var m = maxAbs(splits);
      var p = m >= 1 ? [1, " s"] : m >= 1e-3 ? [1e3, " ms"] : [1e6, " \u00b5s"];
      return function (v) { return trim(v * p[0]) + p[1]; };
    }
  };
  var UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

  function axis(label, fmt, size) {
    var bytes = fmt === S.fmtBytes || fmt === S.fmtBytesShort;
    var ticks = bytes ? TICKS.bytes : fmt === S.fmtCompact ? TICKS.count : fmt === S.fmtSeconds ? TICKS.seconds : null;
    var a = {
      label: label, size: size || 56, labelSize: 18, font: "11px system-ui, sans-serif",
      values: function (u, splits) {
        var show = ticks ? ticks(splits) : fmt;
        return splits.map(function (v) { return v === null ? "" : show(v); });
      },
      grid: { stroke: "#eceef2", width: 1 }, ticks: { stroke: "#d0d4db", width: 1 }
    };
    if (bytes) a.incrs = BYTE_INCRS;
    return a;
  }
  S.axis = axis;

  // The wheel zooms the x axis around the pointer; Shift+drag (or a drag with the middle
  // button) pans it; both stay within [lo, hi]. Listened for on uPlot's root in the capture
  // phase, so a pan never starts uPlot's drag-select nor ends in a click that picks a moment.
  function panAndWheel(u, lo, hi) {
    var panned = false;
    function show(min, max) {
      var w = Math.min(max - min, hi - lo);
      if (min < lo) { min = lo; max = lo + w; }
      if (max > hi) { max = hi; min = hi - w; }
      if (max > min) u.setScale("x", { min: min, max: max });
    }
    u.over.addEventListener("wheel", function (e) {
      e.preventDefault();
      var at = u.posToVal(e.clientX - u.over.getBoundingClientRect().left, "x");
      var f = e.deltaY < 0 ? 0.8 : 1.25, min = u.scales.x.min, max = u.scales.x.max;
      show(at - (at - min) * f, at + (max - at) * f);
    }, { passive: false });
    u.root.addEventListener("mousedown", function (e) {
      if (e.target !== u.over || (!e.shiftKey && e.button !== 1)) return;
      e.preventDefault();
      e.stopPropagation();
      panned = true;
      var x0 = e.clientX, min0 = u.scales.x.min, max0 = u.scales.x.max;
      var perPx = (max0 - min0) / Math.max(1, u.over.getBoundingClientRect().width);
      function move(ev) { var d = (ev.clientX - x0) * perPx; show(min0 - d, max0 - d); }
      function up() {
        document.removeEventListener("mousemove", move);
        document.removeEventListener("mouseup", up);
      }
      document.addEventListener("mousemove", move);
      document.addEventListener("mouseup", up);
    }, true);
    u.root.addEventListener("click", function (e) {
      if (panned) { panned = false; e.stopPropagation(); }
    }, true);
  }

  // Curves over one x axis. opts: {series: [{label, xs, ys, color, dash, width}], xLabel,
  // yLabel, xFmt, yFmt, height, peaks (default true), pick(x) (a click in the plot),
  // momentLabel(x)}. Returns {u, setMoment(x), csv()}.
  S.lineChart = function (box, opts) {
    var aligned = S.alignCurves(opts.series);
    if (!aligned.xs.length) throw new Error("no points to draw");
    var xFmt = opts.xFmt || S.fmtCompact, yFmt = opts.yFmt || S.fmtBytes;
    var peaks = opts.peaks === false ? [] : aligned.ys.map(argmax);
    var state = { moment: null };
    var height = opts.height || 320;
    var series = [{ label: opts.xLabel, value: function (u, v) { return v === null ? S.DASH : xFmt(v); } }];
    opts.series.forEach(function (s) {
      series.push({
        label: s.label, stroke: s.color || S.colorFor(s.label), width: s.width || 1.5, dash: s.dash,
        spanGaps: true, points: { show: false },
        value: function (u, v) { return v === null ? S.DASH : yFmt(v); }
      });
    });
    var u = new uPlot({
      width: plotWidth(box), height: height, series: series,
      scales: { x: { time: false }, y: { range: function (u, min, max) { return [Math.min(0, min), max > 0 ? max * 1.08 : 1]; } } },
      axes: [axis(opts.xLabel, xFmt, 44), axis(opts.yLabel, yFmt, 76)],
      cursor: { drag: { x: true, y: false, setScale: true }, points: { size: 6 } },
      legend: { live: true },
      hooks: {
        // The x range shown, on the figure: for the tests, and for a reader of the DOM.
        setScale: [function (u, key) {
          if (key !== "x") return;
          box.fig.dataset.xMin = u.scales.x.min;
          box.fig.dataset.xMax = u.scales.x.max;
        }],
        draw: [function (u) {
          if (state.moment !== null) drawMoment(u, state.moment, opts.momentLabel ? opts.momentLabel(state.moment) : "");
          drawPeaks(u, peaks, yFmt);
        }]
      }
    }, [aligned.xs].concat(aligned.ys), box.plot);
    panAndWheel(u, aligned.xs[0], aligned.xs[aligned.xs.length - 1]);
    if (opts.pick) {
      var down = null;
      u.over.style.cursor = "crosshair";
      u.over.addEventListener("mousedown", function (e) { down = [e.clientX, e.clientY]; });
      u.over.addEventListener("click", function (e) {
        if (down && Math.abs(e.clientX - down[0]) > 4) return;  // a drag-select zooms instead
        var rect = u.over.getBoundingClientRect();
        opts.pick(u.posToVal(e.clientX - rect.left, "x"));
      });
    }
    function csv() {
      var head = [opts.xLabel].concat(opts.series.map(function (s) { return s.label; }));
      return S.toCsv(head, aligned.xs.map(function (x, i) {
        return [x].concat(aligned.ys.map(function (ys) { return ys[i]; }));
      }));
    }
    box.tools.appendChild(S.csvButton(opts.csvName || box.fig.dataset.chart, csv));
    box.fig.title = "drag or wheel to zoom, Shift+drag to pan, double-click to reset" +
      (opts.pick ? ", click to pick a moment" : "");
    register(box, u, height);
    return {
      u: u, csv: csv,
      setMoment: function (x) { state.moment = x; u.redraw(false, false); }
    };
  };
})();
