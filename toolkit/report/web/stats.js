// report.html for `strata stats --sites` (stats.json, strata-stats-1: the trace's statistics
// and its sites_file): the peak and who holds it first, then the live bytes over the run
// with what was live at a picked moment, the icicle, the histograms and every site.
(function () {
  "use strict";
  var S = window.Strata;
  S.kinds = S.kinds || {};

  function sitesOf(main) {
    if (!main.sites_file) return null;
    var doc = S.file(main.sites_file);
    if (!doc || !/^strata-sites-/.test(doc.format || "")) throw new Error(main.sites_file + " is not a strata-sites document");
    if (!Array.isArray(doc.sites)) throw new Error(main.sites_file + " has no sites");
    return doc;
  }

  // The site with the largest value of `key`.
  function topSite(doc, key) {
    var best = null;
    doc.sites.forEach(function (s) { if (S.finite(s[key]) && (!best || s[key] > best[key])) best = s; });
    return best && best[key] > 0 ? best : null;
  }

  function verdict(main, doc, el, name) {
    el.appendChild(S.el("h2", {}, "Verdict"));
    var peak = S.finite(main.peak_live_bytes) ? main.peak_live_bytes : doc && doc.peak_live_bytes;
    var line = S.el("p", { class: "headline" }, "Peak live ", S.el("b", {}, S.fmtBytes(peak)));
    if (doc && S.finite(doc.peak_event)) {
      line.appendChild(document.createTextNode(" at event " + S.fmtCount(doc.peak_event)));
      var t = doc.curve && doc.curve.events ? S.nearestIndex(doc.curve.events, doc.peak_event) : -1;
      if (t >= 0 && doc.curve.ns && S.finite(doc.curve.ns[t])) line.appendChild(document.createTextNode(" (" + S.fmtNs(doc.curve.ns[t]) + " into the run)"));
    }
    line.appendChild(document.createTextNode("; " + S.fmtBytes(main.total_bytes) + " allocated in " + S.fmtCount(main.total_objects) + " objects"));
    if (S.finite(main.total_over_peak)) line.appendChild(S.el("span", { class: "muted" }, " (" + S.fmtRatio(main.total_over_peak) + " the peak)"));
    el.appendChild(line);
    if (!doc) {
      el.appendChild(S.el("p", { class: "note" }, "No sites file: record with `strata record --sites` to see where the memory goes."));
      return;
    }
    var list = S.el("ul", {});
    var all = {};
    S.SITE_METRICS.forEach(function (m) {
      all[m.key] = doc.sites.reduce(function (a, s) { return a + (s[m.key] || 0); }, 0) + ((doc.other || {})[m.key] || 0);
    });
    [["peak_live_bytes", "Most bytes live at the peak: "], ["bytes", "Most bytes allocated: "],
     ["never_freed_bytes", "Most bytes never freed: "], ["temporary_allocations", "Most temporary allocations: "]].forEach(function (p) {
      var s = topSite(doc, p[0]);
      if (!s) return;
      var m = S.SITE_METRICS.filter(function (x) { return x.key === p[0]; })[0];
      list.appendChild(S.el("li", {}, p[1], S.el("code", {}, S.siteCell(doc, s)), " ", S.el("b", {}, m.fmt(s[p[0]])),
        S.el("span", { class: "muted" }, " (" + S.fmtShare(s[p[0]], all[p[0]]) + " of all, " + S.frameWhere(S.siteTop(doc, s)) + ")")));
    });
    el.appendChild(list);
    if (S.finite(main.never_freed) && main.never_freed > 0)
      el.appendChild(S.el("p", { class: "note" }, S.fmtCount(main.never_freed) + " objects were never freed (" + S.fmtBytes(all.never_freed_bytes) + ")."));
  }

  function summary(main) {
    return S.figures([
      ["events", S.fmtCount(main.events)],
      ["objects", S.fmtCount(main.total_objects), "at most " + S.fmtCount(main.max_live_objects) + " live at once"],
      ["bytes allocated", S.fmtBytes(main.total_bytes)],
      ["peak live", S.fmtBytes(main.peak_live_bytes)],
      ["average object", S.fmtBytes(main.average_object_size)],
      ["allocated / peak", S.fmtRatio(main.total_over_peak)],
      ["threads", S.fmtCount(main.threads)],
      ["recorded run", S.fmtNs(main.duration_ns)],
      ["never freed", S.fmtCount(main.never_freed), "objects still live at the end"],
      ["failed allocations", S.fmtCount(main.failed_allocations)],
      main.bad_frees ? ["bad frees", S.fmtCount(main.bad_frees)] : null,
      main.program ? ["process", (main.program.split("/").pop()) + (main.pid ? " " + main.pid : ""), main.program] : null,
      main.complete === false ? ["trace", "incomplete", "the recording was cut short"] : null
    ]);
  }

  function liveCurve(body, name, doc) {
    var c = doc.curve;
    if (!c || !Array.isArray(c.events) || !Array.isArray(c.live_bytes)) throw new Error("the sites file has no curve");
    var box = S.chartFigure(body, "memory:" + name, "The program's live bytes",
      "the program's live bytes by trace event, the peak marked; click to see what was live; drag or wheel to zoom, Shift+drag to pan, double-click to reset");
    S.momentChart(body, name, doc, function (pick) {
      return S.lineChart(box, {
        series: [{ label: "live bytes", xs: c.events, ys: c.live_bytes, color: "#2458b3", width: 2 }],
        xLabel: "event", yLabel: "bytes", xFmt: S.fmtCompact, yFmt: S.fmtBytes, height: 340, pick: pick,
        momentLabel: function (x) { return "event " + S.fmtCount(x); }
      });
    });
  }

  S.kinds.stats = function (main, verdictEl, content) {
    if (main.format && !/^strata-stats-/.test(main.format)) throw new Error("stats.json is not strata-stats (format " + main.format + ")");
    var doc = null, docError = null;
    try { doc = sitesOf(main); } catch (err) { docError = err; }
    var name = S.stem(main.trace || main.path || (doc && doc.trace) || "trace");
    S.guard(verdictEl, "verdict", function () { verdict(main, doc, verdictEl, name); });
    if (docError) verdictEl.appendChild(S.errorBox("The sites file: " + S.fail("sites", docError)));
    S.section(content, "The trace", "s-summary", function (body) {
      if (main.trace || main.path) body.appendChild(S.el("p", { class: "note mono" }, main.trace || main.path));
      body.appendChild(summary(main));
    });
    if (doc) {
      S.section(content, "Live bytes over the run", "s-live", function (body) { liveCurve(body, name, doc); });
      S.section(content, "Where the memory goes", "s-flame", function (body) { S.flameChart(body, name, doc, "Allocation sites by stack"); });
    }
    S.section(content, "Sizes and lifetimes", "s-histograms", function (body) { S.histogramFigures(body, name, main); });
    if (doc) S.section(content, "Allocation sites", "s-sites", function (body) { S.sitesTable(body, name, doc); });
  };
})();
