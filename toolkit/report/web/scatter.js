// report.html: scatter charts on uPlot (agreement of replay and live runs, tune's Pareto
// front). One row per point, so points may share an x; each group is a series with values
// only on its own rows, drawn as points without lines. Hover shows the nearest point's
// details in the tooltip.
(function () {
  "use strict";
  var S = window.Strata;

  // opts: {groups: [{label, color, points: [{x, y, info}]}], xLabel, yLabel, xFmt, yFmt,
  //        line: {label, color, points: [{x, y}]} (drawn joined, e.g. the Pareto front),
  //        diagonal (draw y = x), labels (write each point's group by it), tip(point, group),
  //        csvHead, csvRow(point, group), height}
  S.scatterChart = function (box, opts) {
    var rows = [];
    opts.groups.forEach(function (g, gi) {
      g.points.forEach(function (p) {
        if (S.finite(p.x) && S.finite(p.y)) rows.push({ x: p.x, y: p.y, g: gi, p: p });
      });
    });
    if (!rows.length) throw new Error("no points to draw");
    rows.sort(function (a, b) { return a.x - b.x || a.y - b.y; });
    var xs = rows.map(function (r) { return r.x; });
    var data = [xs];
    var xFmt = opts.xFmt || S.sig3, yFmt = opts.yFmt || S.sig3;
    var series = [{ label: opts.xLabel, value: function (u, v) { return v === null ? S.DASH : xFmt(v); } }];
    opts.groups.forEach(function (g, gi) {
      data.push(rows.map(function (r) { return r.g === gi ? r.y : null; }));
      var color = g.color || S.colorFor(g.label);
      series.push({
        label: g.label, stroke: color, fill: color + "55", width: 1.5, paths: function () { return null; },
        points: { show: true, size: g.size || 9, stroke: color, fill: color + "99", width: 1.5 },
        value: function (u, v) { return v === null ? S.DASH : yFmt(v); }
      });
    });
    if (opts.line) {
      var onLine = {};
      opts.line.points.forEach(function (p) { onLine[p.x + "," + p.y] = true; });
      data.push(rows.map(function (r) { return onLine[r.x + "," + r.y] ? r.y : null; }));
      series.push({
        label: opts.line.label, stroke: opts.line.color || "#1d2330", width: 2, dash: [5, 4], spanGaps: true,
        points: { show: true, size: 15, stroke: opts.line.color || "#1d2330", fill: "rgba(0,0,0,0)", width: 2 },
        value: function (u, v) { return v === null ? S.DASH : yFmt(v); }
      });
    }
    var pad = function (u, min, max) {
      if (min === max) { min = min * 0.9; max = max * 1.1 || 1; }
      var d = (max - min) * 0.08;
      return [min - d, max + d];
    };
    var height = opts.height || 380;
    var hooks = {
      draw: [function (u) { if (opts.diagonal) drawDiagonal(u); if (opts.labels) drawLabels(u, rows, opts.groups); }],
      setCursor: [function (u) { hover(u, rows, opts); }]
    };
    var u = new uPlot({
      width: Math.max(320, box.plot.clientWidth || 1100), height: height, series: series,
      scales: { x: { time: false, range: pad }, y: { range: pad } },
      axes: [S.axis(opts.xLabel, xFmt, 44), S.axis(opts.yLabel, yFmt, 70)],
      cursor: { drag: { x: true, y: true, uni: 30, setScale: true }, points: { show: false } },
      legend: { live: false },
      hooks: hooks
    }, data, box.plot);
    u.over.addEventListener("mouseleave", S.hideTip);
    function csv() {
      return S.toCsv(opts.csvHead || ["group", "x", "y"], rows.map(function (r) {
        return opts.csvRow ? opts.csvRow(r.p, opts.groups[r.g]) : [opts.groups[r.g].label, r.x, r.y];
      }));
    }
    box.tools.appendChild(S.csvButton(box.fig.dataset.chart, csv));
    box.fig.title = "hover a point for its details; drag to zoom, double-click to reset";
    S.charts.push({ box: box, u: u, height: height });
    return { u: u, csv: csv };
  };

  // The nearest point within 14 px of the cursor, in the tooltip.
  function hover(u, rows, opts) {
    var left = u.cursor.left, top = u.cursor.top;
    if (left === null || left < 0 || top < 0) { S.hideTip(); return; }
    var best = null, bestD = 14 * 14;
    rows.forEach(function (r) {
      if (!u.series[r.g + 1].show) return;
      var dx = u.valToPos(r.x, "x") - left, dy = u.valToPos(r.y, "y") - top;
      var d = dx * dx + dy * dy;
      if (d < bestD) { bestD = d; best = r; }
    });
    if (!best) { S.hideTip(); return; }
    var rect = u.over.getBoundingClientRect();
    var group = opts.groups[best.g];
    var content = opts.tip ? opts.tip(best.p, group)
      : [S.el("b", {}, group.label), S.el("br"), opts.xLabel + ": " + (opts.xFmt || S.sig3)(best.x),
         S.el("br"), opts.yLabel + ": " + (opts.yFmt || S.sig3)(best.y)];
    S.showTip(content, rect.left + u.valToPos(best.x, "x"), rect.top + u.valToPos(best.y, "y"));
  }

  function drawDiagonal(u) {
    var ctx = u.ctx, dpr = window.devicePixelRatio || 1;
    var lo = Math.max(u.scales.x.min, u.scales.y.min), hi = Math.min(u.scales.x.max, u.scales.y.max);
    if (!(hi > lo)) return;
    ctx.save();
    ctx.strokeStyle = "#9aa3b2";
    ctx.setLineDash([4 * dpr, 4 * dpr]);
    ctx.lineWidth = dpr;
    ctx.beginPath();
    ctx.moveTo(u.valToPos(lo, "x", true), u.valToPos(lo, "y", true));
    ctx.lineTo(u.valToPos(hi, "x", true), u.valToPos(hi, "y", true));
    ctx.stroke();
    ctx.font = Math.round(11 * dpr) + "px system-ui, sans-serif";
    ctx.fillStyle = "#7a8394";
    ctx.fillText("live = predicted", u.valToPos(hi, "x", true) - 95 * dpr, u.valToPos(hi, "y", true) + 14 * dpr);
    ctx.restore();
  }

  function drawLabels(u, rows, groups) {
    var ctx = u.ctx, dpr = window.devicePixelRatio || 1;
    ctx.save();
    ctx.font = Math.round(11 * dpr) + "px system-ui, sans-serif";
    ctx.fillStyle = "#1d2330";
    var placed = [];
    function free(b) {
      return placed.every(function (p) { return b[0] >= p[2] || b[2] <= p[0] || b[1] >= p[3] || b[3] <= p[1]; });
    }
    rows.forEach(function (r) {
      if (!u.series[r.g + 1].show) return;
      var text = groups[r.g].label, w = ctx.measureText(text).width, h = 12 * dpr;
      var cx = u.valToPos(r.x, "x", true), cy = u.valToPos(r.y, "y", true), d = 7 * dpr;
      // Right-above, right-below, left-above, left-below, then further out: the first free.
      var tries = [[d, -d], [d, d + h], [-d - w, -d], [-d - w, d + h], [d, -d - h], [d, 2 * d + 2 * h], [-d - w, -d - h], [-d - w, 2 * d + 2 * h]];
      var at = tries[0];
      for (var i = 0; i < tries.length; i++) {
        var b = [cx + tries[i][0], cy + tries[i][1] - h, cx + tries[i][0] + w, cy + tries[i][1]];
        if (free(b)) { at = tries[i]; break; }
      }
      placed.push([cx + at[0], cy + at[1] - h, cx + at[0] + w, cy + at[1]]);
      ctx.fillText(text, cx + at[0], cy + at[1]);
    });
    ctx.restore();
  }
})();
