// report.html for `strata compare`: one trace's section. Its figures, the results table,
// memory over time (each allocator's heap and the program's live bytes, by trace event),
// what was live at a picked moment and where the memory goes (with sites), the size and
// lifetime histograms and the fragmentation per allocator.
(function () {
  "use strict";
  var S = window.Strata;

  function traceFigures(t) {
    var st = t.stats || {};
    return S.figures([
      ["events", S.fmtCount(st.events)],
      ["objects", S.fmtCount(st.total_objects), "at most " + S.fmtCount(st.max_live_objects) + " live at once"],
      ["bytes allocated", S.fmtBytes(st.total_bytes)],
      ["peak live", S.fmtBytes(st.peak_live_bytes), "the program's own peak, the same for every allocator"],
      ["threads", S.fmtCount(st.threads)],
      ["recorded run", S.fmtNs(st.duration_ns)],
      t.program ? ["process", (t.program.split("/").pop() || t.program) + (t.pid ? " " + t.pid : ""), t.program] : null
    ]);
  }

  function resultsTable(parent, t) {
    var w = S.traceWinners(t) || {};
    var rows = (t.results || []).map(function (r) {
      return Object.assign({}, r, { rank_ms: r.status === "ok" ? S.replayMs(r) : null });
    });
    var allocTime = rows.some(function (r) { return r.ratio_basis === "allocator"; });
    var ok = function (r) { return r.status === "ok" || r.status === "heap-limit"; };
    var cols = [
      { key: "allocator", label: "allocator" },
      { key: "time_ms", label: "time", num: true, fmt: function (v, r) { return ok(r) ? S.fmtMs(v) : S.DASH; }, title: "wall time of the replay (median run)" }
    ];
    if (allocTime) cols.push({ key: "allocator_ms", label: "in allocator", num: true, fmt: function (v, r) { return r.ratio_basis === "allocator" ? S.fmtMs(v) : S.DASH; }, title: "time inside allocator calls, summed over the replay threads" });
    cols.push(
      { key: "ratio", label: "ratio", num: true, fmt: S.fmtRatio, title: "time over the fastest's" },
      { key: "peak_heap_bytes", label: "peak heap", num: true, fmt: function (v, r) { return ok(r) ? S.fmtBytes(v) : S.DASH; } },
      { key: "peak_live_bytes", label: "peak live", num: true, fmt: function (v, r) { return ok(r) ? S.fmtBytes(v) : S.DASH; } },
      { key: "fragmentation_percent", label: "fragmentation", num: true, fmt: function (v, r) { return ok(r) ? S.fmtPct(v) : S.DASH; }, title: "peak heap over peak live, minus 1" },
      { key: "cpu_ms", label: "CPU", num: true, fmt: function (v, r) { return ok(r) ? S.fmtMs(v) : S.DASH; } },
      { key: "status", label: "status", cls: function (r) { return r.status === "ok" ? "" : "up"; } },
      { key: "detail", label: "detail", cls: "wrap" }
    );
    parent.appendChild(S.table({
      columns: cols, rows: rows, id: "results-" + S.slug(t.name), csvName: "results-" + t.name,
      sort: { key: "ratio", dir: "asc" }, caption: "Results by allocator" + runsNote(rows),
      rowClass: function (r) {
        return r.status !== "ok" ? "failed" : (r === w.fastest || r.allocator === (w.fastest || {}).allocator) ? "best" : null;
      }
    }).el);
  }

  function runsNote(rows) {
    var n = rows[0] && rows[0].wall_seconds_runs ? rows[0].wall_seconds_runs.length : 0;
    return n > 1 ? " (medians of " + n + " runs)" : n === 1 ? " (one run each)" : "";
  }

  // Memory over time: heap per allocator, and the program's live bytes from the first curve.
  function memorySeries(t) {
    var series = [], csvs = [], live = null, problems = [];
    (t.results || []).forEach(function (r) {
      if (!r.series_file) return;
      try {
        var c = S.csv(r.series_file, ["event", "heap_bytes"]);
        csvs.push(c);
        series.push({ label: r.allocator, xs: c.col.event, ys: c.col.heap_bytes });
        if (!live && c.col.live_bytes) live = { label: "live (the program)", xs: c.col.event, ys: c.col.live_bytes, color: "#1d2330", dash: [6, 3], width: 2 };
      } catch (err) {
        problems.push(S.fail("memory curve of " + r.allocator + " on " + t.name, err));
      }
    });
    if (live) series.push(live);
    return { series: series, csvs: csvs, problems: problems };
  }

  function sitesDoc(t) {
    if (!t.sites_file) return null;
    var doc = S.file(t.sites_file);
    if (!doc || !/^strata-sites-/.test(doc.format || "")) throw new Error(t.sites_file + " is not a strata-sites document");
    return doc;
  }

  function memoryChart(parent, t, doc) {
    var m = memorySeries(t);
    var box = S.chartFigure(parent, "memory:" + t.name, "Memory over time",
      "each allocator's heap and the program's live bytes, by trace event; drag or wheel to zoom, Shift+drag to pan, double-click to reset" +
      (doc ? ", click to see what was live" : ""));
    m.problems.forEach(function (p) { box.fig.appendChild(S.errorBox(p)); });
    if (!m.series.length) {
      box.plot.appendChild(S.el("p", { class: "message" }, "No allocator's curve is in this result."));
      return null;
    }
    var note = S.downsampleNote(m.csvs);
    if (note) box.note.textContent += "; " + note;
    function make(pick) {
      return S.lineChart(box, {
        series: m.series, xLabel: "event", yLabel: "bytes", xFmt: S.fmtCompact, yFmt: S.fmtBytes, height: 360,
        pick: pick, momentLabel: function (x) { return "event " + S.fmtCount(x); }
      });
    }
    if (!doc) return make(null);
    return S.momentChart(parent, t.name, doc, make);
  }

  function fragmentationChart(parent, t) {
    var rows = (t.results || []).filter(function (r) { return r.status === "ok"; });
    var box = S.chartFigure(parent, "fragmentation:" + t.name, "Fragmentation", "peak heap over the program's peak live bytes, minus 1");
    S.guard(box.plot, "fragmentation of " + t.name, function () {
      if (!rows.length) throw new Error("no allocator finished this trace");
      S.barChart(box, {
        labels: rows.map(function (r) { return r.allocator; }), values: rows.map(function (r) { return r.fragmentation_percent; }),
        colors: rows.map(function (r) { return S.colorFor(r.allocator); }), label: "fragmentation", xLabel: "allocator",
        yLabel: "% over peak live", yFmt: function (v) { return S.fmtPct(v, v < 10 ? 1 : 0); }, valueLabels: true, height: 240,
        csvHead: ["allocator", "fragmentation_percent", "peak_heap_bytes", "peak_live_bytes"],
        csvRow: function (i) { return [rows[i].allocator, rows[i].fragmentation_percent, rows[i].peak_heap_bytes, rows[i].peak_live_bytes]; }
      });
    });
  }

  function statsOf(t) {
    if (t.stats_file && S.hasFile(t.stats_file)) return S.file(t.stats_file);
    return t.stats;
  }

  S.compareTrace = function (body, t) {
    if (t.description) body.appendChild(S.el("p", { class: "note" }, t.description));
    if (t.path) body.appendChild(S.el("p", { class: "note mono" }, t.path));
    S.guard(body, "figures of " + t.name, function () { body.appendChild(traceFigures(t)); });
    S.guard(body, "results of " + t.name, function () { resultsTable(body, t); });
    var doc = null;
    S.guard(body, "sites of " + t.name, function () { doc = sitesDoc(t); });
    S.guard(body, "memory of " + t.name, function () { memoryChart(body, t, doc); });
    if (doc) {
      S.guard(body, "icicle of " + t.name, function () { S.flameChart(body, t.name, doc); });
      S.guard(body, "sites of " + t.name, function () { S.sitesTable(body, t.name, doc); });
    } else {
      body.appendChild(S.el("p", { class: "note" }, "Allocation sites were not recorded for this trace " +
        "(record with `strata record --sites` and compare with --sites to see where the memory goes)."));
    }
    S.guard(body, "histograms of " + t.name, function () {
      var stats = statsOf(t);
      if (!stats) throw new Error("no statistics for this trace");
      S.histogramFigures(body, t.name, stats);
    });
    fragmentationChart(body, t);
  };
})();
