// report.html for `strata drag` (drag.json, strata-drag-1): how much memory the program held
// after its objects' last use (the drag: actual area over ideal area), the live bytes as they
// were and as they would be with every object freed at its last use, and the sites to blame.
(function () {
  "use strict";
  var S = window.Strata;
  S.kinds = S.kinds || {};

  function dragText(d) {
    if (!d) return S.DASH;
    return d.drag_unbounded ? "unbounded" : S.finite(d.drag) ? d.drag.toFixed(2) + "x" : S.DASH;
  }

  function verdict(main, el) {
    el.appendChild(S.el("h2", {}, "Verdict"));
    var s = main.shown;
    if (!s) {
      el.appendChild(S.el("p", { class: "headline" }, "No process was analysed" + (main.status ? ": " + main.status : ".")));
    } else {
      el.appendChild(S.el("p", { class: "headline" }, "Drag ", S.el("b", {}, dragText(s)),
        s.drag_unbounded ? " (the objects were never used, so any memory they held was drag)"
          : ": the program held " + dragText(s) + " the memory it needed over its run",
        S.finite(s.increase_percent) ? [", its peak ", S.el("b", {}, S.fmtPctSigned(s.increase_percent)),
          " over the peak with every object freed at its last use (" + S.fmtBytes(s.peak_actual_bytes) + " against " +
          S.fmtBytes(s.peak_ideal_bytes) + ")"] : ""));
      var top = (main.sites || [])[0];
      var topInfo = top ? S.stackDepths(main.sites.map(function (x) { return x.stack || []; }), S.frameName)[0] : null;
      if (top) el.appendChild(S.el("p", {}, "Most to blame: ", S.el("code", { title: S.stackTip(top.stack || []) }, frameText(top.stack, topInfo)), " ",
        S.el("b", {}, S.fmtPct(top.share_percent)), " of the drag (" + S.fmtBytes(top.bytes) + " in " + S.fmtCount(top.objects) + " objects)"));
      var notes = [];
      if (s.trace_complete === false) notes.push("the trace was cut short: objects still live at the end count as in use");
      if (s.last_use_complete === false) notes.push("the last uses were not all recorded");
      if (s.uncovered_objects > 0) notes.push(S.fmtCount(s.uncovered_objects) + " objects (" + S.fmtBytes(s.uncovered_bytes) + ") had no use recorded");
      notes.forEach(function (n) { el.appendChild(S.el("div", { class: "note" }, n)); });
    }
    el.appendChild(S.el("div", { class: "note" }, "Program: " + (main.command || S.DASH) + "; ran " + S.fmtSeconds(main.seconds) +
      (main.status ? " (" + main.status + ")" : "") + (main.succeeded === false ? " \u2014 it did not succeed" : "")));
    (main.notes || []).forEach(function (n) { el.appendChild(S.el("div", { class: "note" }, n)); });
  }

  function frameText(stack, info) { return S.stackLabelText(stack || [], info); }

  // A byte-by-byte area (bytes held x bytes allocated meanwhile): "1.73 T B\u00b7B", one
  // decimal prefix for every size so the column reads alike.
  var SI = ["", "k", "M", "G", "T", "P", "E", "Z"];
  S.fmtArea = function (v) {
    if (!S.finite(v)) return S.DASH;
    var a = Math.abs(v), p = 0;
    while (a >= 999.5 && p < SI.length - 1) { a /= 1000; p++; }
    var digits = p === 0 ? String(Math.round(a)) : a.toFixed(a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2);
    return (v < 0 ? "-" : "") + digits + " " + SI[p] + "B\u00b7B";
  };

  function figures(s) {
    return S.figures([
      ["drag", dragText(s), "actual area over ideal area (bytes held x bytes allocated)"],
      ["peak as run", S.fmtBytes(s.peak_actual_bytes)], ["peak if freed at last use", S.fmtBytes(s.peak_ideal_bytes)],
      ["peak increase", S.fmtPctSigned(s.increase_percent)], ["objects", S.fmtCount(s.objects)], ["events", S.fmtCount(s.events)],
      ["process", (s.program || "").split("/").pop() + (s.pid ? " " + s.pid : ""), s.program]
    ]);
  }

  function curves(parent, main) {
    var box = S.chartFigure(parent, "drag-curves", "Live bytes as run and if freed at last use",
      "by bytes allocated so far; the area between the two is the drag");
    S.guard(box.plot, "drag curves", function () {
      if (!main.curves_file) throw new Error("drag.json names no curves_file");
      var c = S.csv(main.curves_file, ["allocated_bytes", "live_bytes", "ideal_live_bytes"]);
      var note = S.downsampleNote([c]);
      if (note) box.note.textContent += "; " + note;
      S.lineChart(box, {
        series: [
          { label: "live as run", xs: c.col.allocated_bytes, ys: c.col.live_bytes, color: "#b3261e", width: 2 },
          { label: "if freed at last use", xs: c.col.allocated_bytes, ys: c.col.ideal_live_bytes, color: "#17803d", width: 2, dash: [6, 3] }
        ],
        xLabel: "allocated", yLabel: "live", xFmt: S.fmtBytes, yFmt: S.fmtBytes, height: 340
      });
    });
  }

  function sitesTable(parent, main) {
    var infos = S.stackDepths((main.sites || []).map(function (s) { return s.stack || []; }), S.frameName);
    var rows = (main.sites || []).map(function (s, i) {
      var top = (s.stack || [])[0] || {};
      return { rank: i + 1, site: s.site, share: s.share_percent, drag: s.drag, bytes: s.bytes, objects: s.objects, top: top, stack: s.stack || [], info: infos[i],
        text: (s.stack || []).map(function (f) { return S.frameName(f) + (S.frameWhere(f) ? " (" + S.frameWhere(f) + ")" : ""); }).join(" \u2190 ") };
    });
    if (!rows.length) {
      parent.appendChild(S.el("p", { class: "note" }, "Allocation sites were not recorded (strata drag --sites records them)."));
      return;
    }
    var max = Math.max.apply(null, rows.map(function (r) { return r.share || 0; }));
    parent.appendChild(S.table({
      id: "drag-sites", csvName: "drag-sites", rows: rows, sort: { key: "share", dir: "desc" },
      caption: "Sites by their share of the drag (memory held after last use)",
      rowAttrs: function (r) { return { "data-site": r.site, title: S.stackTip(r.stack) }; },
      columns: [
        { key: "fn", label: "allocating function \u2190 callers", cls: "fn", value: function (r) { return S.frameName(r.top); },
          fmt: function (v, r) { return S.stackLabelCell(r.stack, r.info); }, tip: function (r) { return S.stackTip(r.stack); } },
        { key: "where", label: "file:line", cls: "where", value: function (r) { return S.frameWhere(r.top); }, fmt: function (v, r) { return S.whereCell(r.top); } },
        { key: "share", label: "share of drag", num: true, fmt: function (v) { return S.barCell(S.fmtPct(v), max ? v / max : 0); } },
        { key: "drag", label: "drag area (B\u00b7B)", num: true, fmt: S.fmtArea,
          title: "bytes held after last use \u00d7 bytes allocated meanwhile (decimal prefixes: T = 10\u00b9\u00b2)" },
        { key: "bytes", label: "bytes", num: true, fmt: S.fmtBytes }, { key: "objects", label: "objects", num: true, fmt: S.fmtCount },
        { key: "site", label: "site", num: true }, { key: "text", label: "stack", csvLabel: "stack_innermost_first", hidden: true }
      ]
    }).el);
  }

  function processes(parent, main) {
    var ps = main.processes || [];
    if (ps.length < 2) return;
    parent.appendChild(S.table({
      id: "drag-processes", csvName: "drag-processes", rows: ps, sort: { key: "peak_actual_bytes", dir: "desc" },
      caption: "Processes (the one shown above is marked)", rowClass: function (r) { return r.shown ? "best" : null; },
      columns: [
        { key: "pid", label: "pid", num: true }, { key: "program", label: "program", cls: "wrap" },
        { key: "drag", label: "drag", num: true, value: function (r) { return r.drag_unbounded ? Infinity : r.drag; }, fmt: function (v, r) { return r.analysed === false ? "not analysed" : dragText(r); } },
        { key: "peak_actual_bytes", label: "peak", num: true, fmt: S.fmtBytes }, { key: "peak_ideal_bytes", label: "peak if freed", num: true, fmt: S.fmtBytes },
        { key: "increase_percent", label: "increase", num: true, fmt: S.fmtPctSigned }
      ]
    }).el);
  }

  S.kinds.drag = function (main, verdictEl, content) {
    if (main.format && !/^strata-drag-/.test(main.format)) throw new Error("drag.json is not strata-drag (format " + main.format + ")");
    S.guard(verdictEl, "verdict", function () { verdict(main, verdictEl); });
    S.section(content, "Memory held after last use", "s-drag", function (body) {
      if (main.shown) body.appendChild(figures(main.shown));
      curves(body, main);
    });
    S.section(content, "Sites to blame", "s-sites", function (body) { sitesTable(body, main); });
    if ((main.processes || []).length > 1) S.section(content, "Processes", "s-processes", function (body) { processes(body, main); });
  };
})();
