// report.html for `strata compare` (results.json, strata-compare-1): the verdict per trace
// and for the command (replay and live), the agreement of the two, the live runs' RSS over
// time; then a section per trace (compare_trace.js).
(function () {
  "use strict";
  var S = window.Strata;
  S.kinds = S.kinds || {};

  function ok(r) { return r && r.status === "ok"; }
  // The time the ranking uses: inside allocator calls for threaded replays, else wall time.
  S.replayMs = function (r) { return r.ratio_basis === "allocator" && r.allocator_ms > 0 ? r.allocator_ms : r.time_ms; };

  // The fastest and smallest finished rows of a trace, with the runner-up and glibc's row.
  S.traceWinners = function (trace) {
    var rows = (trace.results || []).filter(ok);
    if (!rows.length) return null;
    var byTime = rows.slice().sort(function (a, b) { return S.replayMs(a) - S.replayMs(b); });
    var byHeap = rows.slice().sort(function (a, b) { return a.peak_heap_bytes - b.peak_heap_bytes; });
    var glibc = rows.filter(function (r) { return r.allocator === "glibc"; })[0] || null;
    return { fastest: byTime[0], secondFastest: byTime[1] || null, smallest: byHeap[0], secondSmallest: byHeap[1] || null, glibc: glibc };
  }

  function vsGlibc(w, what) {
    var g = w.glibc;
    if (!g) return "";
    if (what === "time") {
      var f = w.fastest;
      return f === g ? ", glibc is the default" : ", " + S.fmtRatio(S.replayMs(g) / S.replayMs(f)) + " faster than glibc";
    }
    var s = w.smallest;
    return s === g ? ", glibc is the default" : ", " + S.fmtPct(100 * (1 - s.peak_heap_bytes / g.peak_heap_bytes)) + " under glibc";
  }

  function traceVerdict(trace) {
    var w = S.traceWinners(trace);
    var box = S.el("div", {}, S.el("div", { class: "label" }, "trace " + trace.name));
    if (!w) {
      box.appendChild(S.el("p", { class: "error" }, "no allocator finished this trace"));
      return box;
    }
    var f = w.fastest, s = w.smallest;
    box.appendChild(S.el("div", {}, "fastest ", S.el("b", {}, f.allocator), " ", S.fmtMs(S.replayMs(f)),
      f.ratio_basis === "allocator" ? " in allocator calls" : "",
      w.secondFastest ? S.el("span", { class: "muted" }, " (next: " + w.secondFastest.allocator + " " +
        S.fmtRatio(S.replayMs(w.secondFastest) / S.replayMs(f)) + ")") : "", S.el("span", { class: "muted" }, vsGlibc(w, "time"))));
    box.appendChild(S.el("div", {}, "smallest heap ", S.el("b", {}, s.allocator), " ", S.fmtBytes(s.peak_heap_bytes),
      S.el("span", { class: "muted" }, " (" + S.fmtPct(s.fragmentation_percent) + " over peak live" + vsGlibc(w, "heap") + ")")));
    (trace.results || []).filter(function (r) { return !ok(r); }).forEach(function (r) {
      box.appendChild(S.el("div", { class: "up" }, r.allocator + " " + r.status + (r.detail ? ": " + r.detail : "")));
    });
    return box;
  }

  // The live runs' winners: fastest wall time, smallest peak RSS, among runs that went well.
  function liveWinners(live) {
    var rows = ((live && live.results) || []).filter(function (r) { return r.status === "ok" && S.finite(r.time_ms); });
    if (!rows.length) return null;
    var byTime = rows.slice().sort(function (a, b) { return a.time_ms - b.time_ms; });
    var byRss = rows.slice().sort(function (a, b) { return a.max_rss_bytes - b.max_rss_bytes; });
    return { fastest: byTime[0], smallest: byRss[0], reference: live.reference };
  }

  function rho(v) { return S.finite(v) ? v.toFixed(2) : "n/a"; }

  function commandVerdict(cmd) {
    var out = [];
    var comb = cmd.combined || {};
    if (comb.fastest) {
      out.push(S.el("p", { class: "headline" }, "For the command: fastest ", S.el("b", {}, comb.fastest),
        ", smallest peak heap ", S.el("b", {}, comb.smallest_heap || S.DASH),
        S.el("span", { class: "muted" }, " (replay, " + ((cmd.processes || []).length) + " process" +
          ((cmd.processes || []).length === 1 ? "" : "es") + ": times summed, the largest peak heap)")));
    }
    var lw = liveWinners(cmd.live);
    if (lw) {
      out.push(S.el("p", { class: "headline" }, "Live runs: fastest ", S.el("b", {}, lw.fastest.allocator), " ",
        S.fmtMs(lw.fastest.time_ms), ", smallest peak RSS ", S.el("b", {}, lw.smallest.allocator), " ",
        S.fmtBytes(lw.smallest.max_rss_bytes)));
    }
    var a = cmd.agreement;
    if (a) {
      var list = S.el("ul", {});
      list.appendChild(S.el("li", {}, "Replay against live over " + a.allocators + " allocators: rank correlation (Spearman \u03c1) of peak heap with peak RSS ",
        S.el("b", {}, rho(a.heap_rank_correlation)), ", of replay time with live time ", S.el("b", {}, rho(a.time_rank_correlation)),
        " (1 = the same order, \u22121 = reversed)"));
      (a.differences || []).filter(function (d) { return d.disagrees; }).forEach(function (d) {
        list.appendChild(S.el("li", { class: "up" }, d.allocator + ": the replay predicts " +
          S.fmtBytesSigned(d.predicted_rss_difference_bytes) + " against " + (cmd.live && cmd.live.reference) +
          ", the live runs measured " + S.fmtBytesSigned(d.live_rss_difference_bytes)));
      });
      (a.notes || []).forEach(function (n) { list.appendChild(S.el("li", {}, n)); });
      out.push(list);
    }
    ((cmd.live && cmd.live.results) || []).filter(function (r) { return r.status !== "ok"; }).forEach(function (r) {
      out.push(S.el("div", { class: "up" }, r.allocator + " live " + r.status + (r.detail ? ": " + r.detail : "")));
    });
    if ((cmd.skipped_processes || []).length)
      out.push(S.el("p", { class: "note" }, cmd.skipped_processes.length + " more process" +
        (cmd.skipped_processes.length === 1 ? "" : "es") + " allocated too little to judge (--all-processes includes them)."));
    return out;
  }

  // Over several traces (no command): which allocator wins most often, for time and heap.
  function mostOften(traces) {
    var fast = {}, small = {}, n = 0;
    traces.forEach(function (t) {
      var w = S.traceWinners(t);
      if (!w) return;
      n++;
      fast[w.fastest.allocator] = (fast[w.fastest.allocator] || 0) + 1;
      small[w.smallest.allocator] = (small[w.smallest.allocator] || 0) + 1;
    });
    function top(counts) {
      var names = Object.keys(counts).sort(function (a, b) { return counts[b] - counts[a]; });
      if (!names.length) return S.DASH;
      if (counts[names[0]] < 2) return "a different allocator on each trace";
      return [S.el("b", {}, names[0]), " (" + counts[names[0]] + " of " + n + " traces)"];
    }
    return S.el("p", { class: "headline" }, "Fastest most often: ", top(fast), "; smallest heap most often: ", top(small));
  }

  function verdict(main, el) {
    el.appendChild(S.el("h2", {}, "Verdict"));
    var traces = main.traces || [];
    if (main.command) S.guard(el, "the command's verdict", function () { S.append(el, commandVerdict(main.command)); });
    if (!traces.length && !main.command) el.appendChild(S.el("p", { class: "message" }, "This result holds no trace."));
    if (traces.length > 1 && !main.command) S.guard(el, "the overall verdict", function () { el.appendChild(mostOften(traces)); });
    if (traces.length) {
      var grid = S.el("div", { class: "verdict-grid" });
      traces.forEach(function (t) { S.guard(grid, "verdict for " + t.name, function () { grid.appendChild(traceVerdict(t)); }); });
      el.appendChild(grid);
    }
  }

  // The command's table: replay over the processes beside the live runs.
  function commandTable(parent, cmd) {
    var live = {};
    ((cmd.live && cmd.live.results) || []).forEach(function (r) { live[r.allocator] = r; });
    var names = [];
    ((cmd.combined && cmd.combined.allocators) || []).forEach(function (r) { names.push(r.allocator); });
    Object.keys(live).forEach(function (n) { if (names.indexOf(n) < 0) names.push(n); });
    var comb = {};
    ((cmd.combined && cmd.combined.allocators) || []).forEach(function (r) { comb[r.allocator] = r; });
    var rows = names.map(function (n) {
      var c = comb[n] || {}, l = live[n] || {};
      return { allocator: n, replay_ms: c.time_ms, peak_heap: c.peak_heap_bytes, predicted_rss: c.predicted_rss_bytes,
        live_ms: l.time_ms, cpu_ms: l.cpu_ms, rss: l.max_rss_bytes, exit: l.exit,
        stdout: l.time_ms === undefined || l.time_ms === null ? null : n === (cmd.live || {}).reference ? "reference" : l.stdout_matches ? "same" : "DIFFERS",
        status: [c.finished === false ? "replay failed" : "", l.status && l.status !== "ok" ? "live " + l.status : ""].filter(Boolean).join(", ") || "ok" };
    });
    var cols = [{ key: "allocator", label: "allocator" }];
    if (cmd.combined && (cmd.combined.allocators || []).length)
      cols.push({ key: "replay_ms", label: "replay time", num: true, fmt: S.fmtMs },
        { key: "peak_heap", label: "peak heap", num: true, fmt: S.fmtBytes },
        { key: "predicted_rss", label: "predicted RSS", num: true, fmt: S.fmtBytes, title: "peak heap plus the library's own resident size" });
    if (cmd.live)
      cols.push({ key: "live_ms", label: "live time", num: true, fmt: S.fmtMs }, { key: "cpu_ms", label: "live CPU", num: true, fmt: S.fmtMs },
        { key: "rss", label: "live peak RSS", num: true, fmt: S.fmtBytes }, { key: "exit", label: "exit" }, { key: "stdout", label: "stdout" });
    cols.push({ key: "status", label: "status" });
    parent.appendChild(S.table({ columns: cols, rows: rows, id: "command-table", csvName: "command", sort: null,
      rowClass: function (r) { return r.status !== "ok" ? "failed" : null; } }).el);
  }

  function agreementChart(parent, cmd) {
    var comb = {};
    ((cmd.combined && cmd.combined.allocators) || []).forEach(function (r) { comb[r.allocator] = r; });
    var box = S.chartFigure(parent, "agreement", "Replay against live", "one point per allocator");
    var select = S.el("select", { class: "agreement-measure", "aria-label": "compare" },
      S.el("option", { value: "memory" }, "peak memory"), S.el("option", { value: "time" }, "time"));
    box.tools.appendChild(select);
    function draw() {
      var mem = select.value === "memory";
      S.charts = S.charts.filter(function (c) { return c.box !== box; });
      S.clear(box.plot);
      Array.prototype.slice.call(box.tools.querySelectorAll("button.csv")).forEach(function (b) { b.remove(); });
      var groups = (cmd.live.results || []).filter(function (l) { return comb[l.allocator] && comb[l.allocator].finished; }).map(function (l) {
        var c = comb[l.allocator];
        return { label: l.allocator, points: [{ x: mem ? c.predicted_rss_bytes : c.time_ms, y: mem ? l.max_rss_bytes : l.time_ms }] };
      });
      var fmt = mem ? S.fmtBytes : S.fmtMs;
      box.note.textContent = mem ? "x: peak RSS the replay predicts (peak heap + library), y: peak RSS measured live; dashed: equal"
        : "x: replay time (allocator work only), y: live wall time (the whole program)";
      S.scatterChart(box, { groups: groups, xLabel: mem ? "predicted peak RSS" : "replay time", yLabel: mem ? "live peak RSS" : "live time",
        xFmt: fmt, yFmt: fmt, diagonal: mem, labels: true, height: 360,
        csvHead: ["allocator", mem ? "predicted_rss_bytes" : "replay_ms", mem ? "live_rss_bytes" : "live_ms"],
        csvRow: function (p, g) { return [g.label, p.x, p.y]; } });
    }
    select.addEventListener("change", function () { S.guard(box.plot, "agreement", draw); });
    S.guard(box.plot, "agreement", draw);
  }

  function liveRssChart(parent, cmd) {
    var withSeries = (cmd.live.results || []).filter(function (r) { return r.rss_series_file; });
    if (!withSeries.length) return;
    var box = S.chartFigure(parent, "live-rss", "Live RSS over time", "the command's processes summed, sampled from /proc (the median run)");
    S.guard(box.plot, "live RSS", function () {
      var csvs = [], series = [];
      withSeries.forEach(function (r) {
        try {
          var c = S.csv(r.rss_series_file, ["seconds", "rss_bytes"]);
          csvs.push(c);
          // Samples of 0 B taken before the command had started are not part of its curve.
          var first = 0;
          while (first < c.col.rss_bytes.length && !(c.col.rss_bytes[first] > 0)) first++;
          series.push({ label: r.allocator, xs: c.col.seconds.slice(first), ys: c.col.rss_bytes.slice(first) });
        } catch (err) {
          box.fig.appendChild(S.errorBox(S.fail("live RSS of " + r.allocator, err)));
        }
      });
      if (!series.length) throw new Error("no live run's RSS curve could be read");
      var note = S.downsampleNote(csvs);
      if (note) box.note.textContent += "; " + note;
      S.lineChart(box, { series: series, xLabel: "seconds", yLabel: "RSS", xFmt: S.fmtSeconds, yFmt: S.fmtBytes, height: 300 });
    });
  }

  S.kinds.compare = function (main, verdictEl, content) {
    if (!/^strata-compare-/.test(main.format || "")) throw new Error("results.json is not strata-compare (format " + main.format + ")");
    (main.traces || []).forEach(function (t) { (t.results || []).forEach(function (r) { S.colorFor(r.allocator); }); });
    ((main.command && main.command.live && main.command.live.results) || []).forEach(function (r) { S.colorFor(r.allocator); });
    verdict(main, verdictEl);
    var cmd = main.command;
    if (cmd) {
      S.section(content, "The command as a whole", "s-command", function (body) {
        if (cmd.command_line) body.appendChild(S.el("code", { class: "cmdline" }, cmd.command_line));
        commandTable(body, cmd);
        if (cmd.live && (cmd.live.results || []).length) {
          if ((cmd.combined && cmd.combined.allocators || []).length) S.guard(body, "agreement", function () { agreementChart(body, cmd); });
          S.guard(body, "live RSS", function () { liveRssChart(body, cmd); });
        }
      });
    }
    (main.traces || []).forEach(function (t) {
      S.section(content, "Trace " + t.name, "s-trace-" + S.slug(t.name), function (body) { S.compareTrace(body, t, main); });
    });
  };
})();
