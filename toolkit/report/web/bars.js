// report.html: bar charts on uPlot's bars path: log2 histograms (object sizes, lifetimes)
// and one bar per allocator (fragmentation). Categories sit at x = 0..n-1.
(function () {
  "use strict";
  var S = window.Strata;

  // opts: {labels: [S], values: [N], label (the series), xLabel, yLabel, yFmt, color, colors
  //        (one per bar), height, valueLabels (write each bar's value over it), csvHead}
  S.barChart = function (box, opts) {
    var n = opts.labels.length;
    if (!n) throw new Error("no bars to draw");
    var xs = opts.labels.map(function (_, i) { return i; });
    var values = opts.values.map(function (v) { return S.finite(v) ? v : null; });
    var yFmt = opts.yFmt || S.fmtCount;
    var width = Math.max(320, box.plot.clientWidth || 1100);
    var step = Math.max(1, Math.ceil(n * 64 / width));  // at most one label per 64 px
    var color = opts.color || "#4a78c2";
    var barOpts = { size: [0.8, 80], align: 0 };
    if (opts.colors) barOpts.disp = { fill: { unit: 3, values: function () { return opts.colors; } } };
    var height = opts.height || 240;
    var u = new uPlot({
      width: width, height: height,
      series: [
        { label: opts.xLabel, value: function (u, v) { return v === null ? S.DASH : opts.labels[v]; } },
        {
          label: opts.label, stroke: color, fill: color + "cc", width: 0, paths: uPlot.paths.bars(barOpts),
          points: { show: false }, value: function (u, v) { return v === null ? S.DASH : yFmt(v); }
        }
      ],
      scales: {
        x: { time: false, range: function () { return [-0.6, n - 0.4]; } },
        y: { range: function (u, min, max) { return [0, max > 0 ? max * 1.12 : 1]; } }
      },
      axes: [
        Object.assign(S.axis(opts.xLabel, String, 40), {
          splits: function () { return xs.filter(function (i) { return i % step === 0; }); },
          values: function (u, splits) { return splits.map(function (i) { return opts.labels[i] || ""; }); },
          grid: { show: false }
        }),
        S.axis(opts.yLabel, yFmt, 64)
      ],
      cursor: { drag: { x: false, y: false }, points: { show: false } },
      legend: { live: true },
      hooks: { draw: opts.valueLabels ? [function (u) { drawValues(u, values, yFmt); }] : [] }
    }, [xs, values], box.plot);
    function csv() {
      return S.toCsv(opts.csvHead || [opts.xLabel, opts.label], opts.labels.map(function (l, i) {
        return opts.csvRow ? opts.csvRow(i) : [l, values[i]];
      }));
    }
    box.tools.appendChild(S.csvButton(box.fig.dataset.chart, csv));
    S.charts.push({ box: box, u: u, height: height });
    return { u: u, csv: csv };
  };

  function drawValues(u, values, fmt) {
    var ctx = u.ctx, dpr = window.devicePixelRatio || 1;
    ctx.save();
    ctx.font = Math.round(11 * dpr) + "px system-ui, sans-serif";
    ctx.fillStyle = "#1d2330";
    ctx.textAlign = "center";
    values.forEach(function (v, i) {
      if (v === null) return;
      ctx.fillText(fmt(v), u.valToPos(i, "x", true), u.valToPos(v, "y", true) - 4 * dpr);
    });
    ctx.restore();
  }

  // The three log2 histograms of a trace's statistics, under either spelling of their keys
  // (results.json's "stats" and stats_file: sizes_log2...; `strata stats --json`:
  // size_histogram_log2...).
  S.histograms = function (stats) {
    function pick(a, b) {
      var v = stats[a] !== undefined ? stats[a] : stats[b];
      return Array.isArray(v) ? v : null;
    }
    return {
      sizes: pick("sizes_log2", "size_histogram_log2"),
      lifetimeBytes: pick("lifetime_bytes_log2", "lifetime_bytes_histogram_log2"),
      lifetimeNs: pick("lifetime_ns_log2", "lifetime_ns_histogram_log2")
    };
  };

  // Trailing empty buckets dropped; leading ones too, keeping the first bucket's index.
  function trimmed(counts) {
    var lo = 0, hi = counts.length - 1;
    while (lo < hi && !counts[lo]) lo++;
    while (hi > lo && !counts[hi]) hi--;
    return { lo: lo, counts: counts.slice(lo, hi + 1) };
  }

  function log2Chart(box, counts, unitFmt, what, xLabel) {
    var t = trimmed(counts);
    var total = counts.reduce(function (a, b) { return a + (b || 0); }, 0);
    return S.barChart(box, {
      labels: t.counts.map(function (_, i) { return t.lo + i === 0 ? "0" : unitFmt(Math.pow(2, t.lo + i)); }),
      values: t.counts, label: what, xLabel: xLabel, yLabel: "objects", yFmt: S.fmtCompact,
      csvHead: ["bucket_log2", "from", "to", "objects", "share_percent"],
      csvRow: function (i) {
        var b = t.lo + i;
        return [b, b === 0 ? 0 : Math.pow(2, b), Math.pow(2, b + 1), t.counts[i], total ? 100 * t.counts[i] / total : 0];
      }
    });
  }

  // Figures sizes:NAME and lifetimes:NAME for a trace's statistics.
  S.histogramFigures = function (parent, name, stats) {
    var h = S.histograms(stats || {});
    var row = S.el("div", { class: "row2" });
    parent.appendChild(row);
    var sizes = S.chartFigure(row, "sizes:" + name, "Object sizes", "objects per power-of-two size class");
    S.guard(sizes.plot, "sizes of " + name, function () {
      if (!h.sizes) throw new Error("the statistics have no size histogram");
      log2Chart(sizes, h.sizes, S.fmtBytesShort, "objects", "size from");
    });
    var life = S.chartFigure(row, "lifetimes:" + name, "Object lifetimes", "");
    S.guard(life.plot, "lifetimes of " + name, function () {
      var select = S.el("select", { class: "lifetime-unit", "aria-label": "lifetime measured in" },
        S.el("option", { value: "bytes" }, "in bytes allocated meanwhile"),
        S.el("option", { value: "ns" }, "in time"));
      life.tools.insertBefore(select, life.tools.firstChild);
      function draw() {
        var ns = select.value === "ns";
        var counts = ns ? h.lifetimeNs : h.lifetimeBytes;
        if (!counts) throw new Error("the statistics have no lifetime histogram " + (ns ? "in time" : "in bytes"));
        S.charts = S.charts.filter(function (c) { return c.box !== life; });
        S.clear(life.plot);
        Array.prototype.slice.call(life.tools.querySelectorAll("button.csv")).forEach(function (b) { b.remove(); });
        life.note.textContent = ns ? "objects per power-of-two lifetime in nanoseconds"
          : "objects per power-of-two bytes allocated while they lived";
        log2Chart(life, counts, ns ? S.fmtNs : S.fmtBytesShort, "objects", "lifetime from");
      }
      select.addEventListener("change", function () { S.guard(life.plot, "lifetimes of " + name, draw); });
      draw();
    });
  };
})();
