// report.html for `strata diff A B` (diff.json, strata-diff-1): whether the peak grew and
// the threshold's verdict, the two runs' curves overlaid, the sites that changed (sorted by
// the change in bytes live at the peak) and the allocators' figures side by side.
(function () {
  "use strict";
  var S = window.Strata;
  S.kinds = S.kinds || {};

  // The class of a change's cell: red when it grew, green when it shrank.
  function sign(key) { return function (r) { return r[key] > 0 ? "delta up" : r[key] < 0 ? "delta down" : "delta"; }; }
  function pct(a, b) { return S.finite(a) && S.finite(b) && a > 0 ? 100 * (b - a) / a : null; }
  function runName(r) { return r ? (r.program ? r.program.split("/").pop() + " " : "") + (r.path || "") : S.DASH; }

  function verdict(main, el) {
    el.appendChild(S.el("h2", {}, "Verdict"));
    var a = main.a || {}, b = main.b || {};
    var g = S.finite(main.peak_growth_percent) ? main.peak_growth_percent : pct(a.peak_live_bytes, b.peak_live_bytes);
    var word = !S.finite(g) ? "changed by an unknown amount" : g > 0 ? "grew" : g < 0 ? "shrank" : "did not change";
    el.appendChild(S.el("p", { class: "headline" }, "Peak live bytes ", S.el("b", { class: g > 0 ? "up" : g < 0 ? "down" : null }, word),
      S.finite(g) && g !== 0 ? [" by ", S.el("b", { class: g > 0 ? "up" : "down" }, S.fmtPctSigned(g))] : "",
      ": " + S.fmtBytes(a.peak_live_bytes) + " \u2192 " + S.fmtBytes(b.peak_live_bytes) +
      " (" + S.fmtBytesSigned((b.peak_live_bytes || 0) - (a.peak_live_bytes || 0)) + ")"));
    if (S.finite(main.threshold_percent)) {
      el.className = main.failed ? "failed" : "passed";
      el.appendChild(S.el("p", { class: main.failed ? "up" : "down" }, main.failed
        ? "FAILED: past the threshold of " + S.fmtPct(main.threshold_percent) + " growth"
        : "Passed: within the threshold of " + S.fmtPct(main.threshold_percent) + " growth"));
    } else if (main.failed) {
      el.className = "failed";
    }
    var list = S.el("ul", {});
    (main.failures || []).forEach(function (f) { list.appendChild(S.el("li", { class: "up" }, f)); });
    list.appendChild(S.el("li", {}, "bytes allocated " + S.fmtBytes(a.total_bytes) + " \u2192 " + S.fmtBytes(b.total_bytes) +
      " (" + S.fmtPctSigned(pct(a.total_bytes, b.total_bytes)) + "), allocations " + S.fmtCount(a.allocations) + " \u2192 " +
      S.fmtCount(b.allocations) + " (" + S.fmtPctSigned(pct(a.allocations, b.allocations)) + ")"));
    var top = siteRows(main).sort(function (x, y) { return Math.abs(y.dpeak) - Math.abs(x.dpeak); })[0];
    if (top && top.dpeak !== 0)
      list.appendChild(S.el("li", {}, "Largest change at the peak: ", S.el("code", { title: S.stackTip(top.stack) }, S.siteText(top.stack, top.info)), " ",
        S.el("b", { class: top.dpeak > 0 ? "up" : "down" }, S.fmtBytesSigned(top.dpeak))));
    el.appendChild(list);
    el.appendChild(S.el("div", { class: "note" }, "A: " + runName(a) + " (" + (a.kind || "?") + ")"));
    el.appendChild(S.el("div", { class: "note" }, "B: " + runName(b) + " (" + (b.kind || "?") + ")"));
  }

  // "fn \u2190 caller \u2190 caller" for an inline stack (innermost first); info: how many
  // frames tell it apart from the other listed stacks (S.stackDepths).
  S.siteText = function (stack, info) { return S.stackLabelText(stack || [], info); };

  function siteRows(main) {
    var sites = main.sites || [];
    var infos = S.stackDepths(sites.map(function (s) { return s.stack || []; }), S.frameName);
    return sites.map(function (s, i) {
      var a = s.a || {}, b = s.b || {};
      function d(k) { return (b[k] || 0) - (a[k] || 0); }
      return { i: i, trace: s.trace || "", stack: s.stack || [], top: (s.stack || [])[0] || {}, info: infos[i],
        dpeak: d("peak_live_bytes"), dbytes: d("bytes"), dallocs: d("allocations"),
        apeak: a.peak_live_bytes, bpeak: b.peak_live_bytes, abytes: a.bytes, bbytes: b.bytes, aallocs: a.allocations, ballocs: b.allocations };
    });
  }

  function sitesTable(parent, main) {
    var rows = siteRows(main);
    if (!rows.length) {
      parent.appendChild(S.el("p", { class: "note" }, "No sites to compare: record both runs with --sites."));
    }
    var hasTrace = rows.some(function (r) { return r.trace; });
    var delta = function (fmt) { return function (v) { return fmt(v); }; };
    var cols = [
      { key: "fn", label: "allocating function \u2190 callers", cls: "fn", value: function (r) { return S.frameName(r.top); },
        fmt: function (v, r) { return S.stackLabelCell(r.stack, r.info); }, tip: function (r) { return S.stackTip(r.stack); } },
      { key: "where", label: "file:line", cls: "where", value: function (r) { return S.frameWhere(r.top); },
        fmt: function (v, r) { return S.whereCell(r.top); } },
      { key: "dpeak", label: "\u0394 peak live", num: true, cls: sign("dpeak"), fmt: delta(S.fmtBytesSigned) },
      { key: "dbytes", label: "\u0394 bytes", num: true, cls: sign("dbytes"), fmt: delta(S.fmtBytesSigned) },
      { key: "dallocs", label: "\u0394 allocations", num: true, cls: sign("dallocs"), fmt: delta(S.fmtCountSigned) },
      { key: "apeak", label: "peak live A", num: true, fmt: S.fmtBytes }, { key: "bpeak", label: "peak live B", num: true, fmt: S.fmtBytes },
      { key: "abytes", label: "bytes A", num: true, fmt: S.fmtBytes }, { key: "bbytes", label: "bytes B", num: true, fmt: S.fmtBytes },
      { key: "aallocs", label: "allocations A", num: true, fmt: S.fmtCount, hidden: true },
      { key: "ballocs", label: "allocations B", num: true, fmt: S.fmtCount, hidden: true },
      { key: "absPeak", label: "|\u0394 peak live|", hidden: true, value: function (r) { return Math.abs(r.dpeak); } }
    ];
    if (hasTrace) cols.splice(2, 0, { key: "trace", label: "trace" });
    parent.appendChild(S.table({
      id: "diff-sites", csvName: "diff-sites", rows: rows, columns: cols, sort: { key: "absPeak", dir: "desc" },
      caption: S.fmtCount(rows.length) + " sites, by the size of their change in bytes live at the peak (red: grew, green: shrank)",
      rowAttrs: function (r) { return { "data-site": r.i, title: S.stackTip(r.stack) }; },
      rowClass: function (r) {
        var c = r.dpeak || r.dbytes || r.dallocs;
        return c > 0 ? "up" : c < 0 ? "down" : null;
      }
    }).el);
  }

  function curves(parent, main) {
    var all = main.curves || [];
    if (!all.length) return;
    var kinds = [];
    all.forEach(function (c) { if (kinds.indexOf(c.x) < 0) kinds.push(c.x); });
    var box = S.chartFigure(parent, "diff-curves", "A and B over the run", "A solid, B dashed");
    var select = null;
    if (kinds.length > 1) {
      select = S.el("select", { class: "diff-x", "aria-label": "x axis" }, kinds.map(function (k) { return S.el("option", { value: k }, "by " + k.replace(/_/g, " ")); }));
      box.tools.appendChild(select);
    }
    var X = { events: ["event", S.fmtCompact], allocated_bytes: ["allocated", S.fmtBytes], seconds: ["seconds", S.fmtSeconds] };
    function draw() {
      var kind = select ? select.value : kinds[0];
      S.charts = S.charts.filter(function (c) { return c.box !== box; });
      S.clear(box.plot);
      Array.prototype.slice.call(box.tools.querySelectorAll("button.csv")).forEach(function (b) { b.remove(); });
      var x = X[kind] || [kind, S.sig3];
      var series = all.filter(function (c) { return c.x === kind; }).map(function (c) {
        var b = c.run === "b";
        return { label: (b ? "B: " : "A: ") + c.label, xs: c.xs || [], ys: c.ys || [], color: S.colorFor("curve " + c.label),
          width: b ? 2 : 1.5, dash: b ? [7, 4] : null };
      });
      S.lineChart(box, { series: series, xLabel: x[0], yLabel: "bytes", xFmt: x[1], yFmt: S.fmtBytes, height: 340 });
    }
    if (select) select.addEventListener("change", function () { S.guard(box.plot, "diff curves", draw); });
    S.guard(box.plot, "diff curves", draw);
  }

  function allocators(parent, main) {
    var rows = (main.allocators || []).map(function (r) {
      var a = r.a || {}, b = r.b || {};
      return { trace: r.trace, allocator: r.allocator, ah: a.peak_heap_bytes, bh: b.peak_heap_bytes, dh: pct(a.peak_heap_bytes, b.peak_heap_bytes),
        af: a.fragmentation_percent, bf: b.fragmentation_percent, at: a.time_ms, bt: b.time_ms, dt: pct(a.time_ms, b.time_ms),
        status: [a.status && a.status !== "ok" ? "A " + a.status : "", b.status && b.status !== "ok" ? "B " + b.status : ""].filter(Boolean).join(", ") };
    });
    if (!rows.length) return;
    parent.appendChild(S.table({
      id: "diff-allocators", csvName: "diff-allocators", rows: rows, caption: "Each allocator's replay in A and B",
      rowClass: function (r) { return r.dh > 0.5 ? "up" : r.dh < -0.5 ? "down" : null; },
      columns: [
        { key: "trace", label: "trace" }, { key: "allocator", label: "allocator" },
        { key: "ah", label: "peak heap A", num: true, fmt: S.fmtBytes }, { key: "bh", label: "peak heap B", num: true, fmt: S.fmtBytes },
        { key: "dh", label: "\u0394 heap", num: true, cls: sign("dh"), fmt: S.fmtPctSigned },
        { key: "af", label: "frag A", num: true, fmt: S.fmtPct }, { key: "bf", label: "frag B", num: true, fmt: S.fmtPct },
        { key: "at", label: "time A", num: true, fmt: S.fmtMs }, { key: "bt", label: "time B", num: true, fmt: S.fmtMs },
        { key: "dt", label: "\u0394 time", num: true, fmt: S.fmtPctSigned }, { key: "status", label: "status" }
      ]
    }).el);
  }

  S.kinds.diff = function (main, verdictEl, content) {
    if (main.format && !/^strata-diff-/.test(main.format)) throw new Error("diff.json is not strata-diff (format " + main.format + ")");
    S.guard(verdictEl, "verdict", function () { verdict(main, verdictEl); });
    if ((main.curves || []).length) S.section(content, "Over the run", "s-curves", function (body) { curves(body, main); });
    S.section(content, "Sites that changed", "s-sites", function (body) { sitesTable(body, main); });
    if ((main.allocators || []).length) S.section(content, "Allocators side by side", "s-allocators", function (body) { allocators(body, main); });
  };
})();
