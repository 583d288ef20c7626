// report.html: "what was live then". A click on a memory chart picks a moment: the nearest
// entry of the sites file's timeline. The chart draws a vertical marker there and the table
// table.live-by-site lists the sites by the bytes they held live at that moment. The page
// starts at the trace's peak.
(function () {
  "use strict";
  var S = window.Strata;

  function nearest(sortedXs, x) {
    var lo = 0, hi = sortedXs.length - 1;
    if (hi < 0) return -1;
    while (hi - lo > 1) {
      var mid = (lo + hi) >> 1;
      if (sortedXs[mid] <= x) lo = mid; else hi = mid;
    }
    return Math.abs(sortedXs[hi] - x) < Math.abs(sortedXs[lo] - x) ? hi : lo;
  }
  S.nearestIndex = nearest;

  // Checks the timeline's shape against the sites: K moments, K values per listed site.
  function checkTimeline(doc) {
    var t = doc.timeline;
    if (!t || !Array.isArray(t.events) || !Array.isArray(t.live_bytes))
      throw new Error("the sites file has no timeline (events, live_bytes)");
    if (!t.events.length) throw new Error("the sites file's timeline has no moments");
    if (t.live_bytes.length !== doc.sites.length)
      throw new Error("the sites file's timeline has " + t.live_bytes.length + " rows of live bytes for " +
        doc.sites.length + " sites");
    return t;
  }

  // The program's live bytes at an event, from the sites file's curve (nearest point).
  function curveAt(doc, event) {
    var c = doc.curve;
    if (!c || !Array.isArray(c.events) || !Array.isArray(c.live_bytes) || !c.events.length) return null;
    var i = nearest(c.events, event);
    return i < 0 ? null : c.live_bytes[i];
  }

  // The table and its picker. opts.chart: a line chart ({setMoment}) to mark the moment on.
  // Returns {pick(x), index}.
  S.liveBySite = function (parent, name, doc, opts) {
    var t = checkTimeline(doc);
    opts = opts || {};
    var wrap = S.el("div", { class: "live-then" });
    parent.appendChild(S.el("h3", {}, "What was live then"));
    parent.appendChild(S.el("p", { class: "note" },
      "Click the memory chart to pick a moment; this table lists the sites by the bytes they held live then. " +
      "It starts at the peak."));
    parent.appendChild(wrap);
    var maxPeak = 0;
    doc.sites.forEach(function (s) { maxPeak = Math.max(maxPeak, s.peak_live_bytes || 0); });
    var state = { index: -1, total: 0 };
    var table = S.table({
      className: "live-by-site", csvName: "live-by-site-" + name, scroll: true,
      attrs: { "data-trace": name },
      columns: [
        { key: "fn", label: "allocating function \u2190 callers", cls: "fn", value: function (r) { return S.frameName(r.top); },
          fmt: function (v, r) { return S.siteCell(doc, r.site); }, tip: function (r) { return S.siteTip(doc, r.site); } },
        { key: "where", label: "file:line", cls: "where", value: function (r) { return S.frameWhere(r.top); },
          fmt: function (v, r) { return S.whereCell(r.top); } },
        { key: "live", label: "live then", num: true, fmt: function (v) { return S.barCell(S.fmtBytes(v), state.max ? v / state.max : 0); } },
        { key: "share", label: "share", num: true, title: "of the program's live bytes then",
          value: function (r) { return state.total > 0 ? 100 * r.live / state.total : null; }, fmt: function (v) { return S.fmtPct(v); } },
        { key: "peak_live_bytes", label: "live at the peak", num: true, fmt: S.fmtBytes },
        { key: "allocations", label: "allocations", num: true, fmt: S.fmtCount },
        { key: "id", label: "site", num: true, title: "the site's id in the sites file" }
      ],
      sort: { key: "live", dir: "desc" },
      rowAttrs: function (r) { return { "data-site": r.id, title: S.siteTip(doc, r.site) }; },
      empty: "no listed site held memory at this moment"
    });
    wrap.appendChild(table.el);

    function pickIndex(k) {
      if (k < 0 || k >= t.events.length) return;
      state.index = k;
      var event = t.events[k];
      var rows = [];
      state.max = 0;
      var listed = 0;
      doc.sites.forEach(function (s, i) {
        var v = (t.live_bytes[i] || [])[k];
        if (!(v > 0)) return;
        listed += v;
        state.max = Math.max(state.max, v);
        rows.push({ id: s.id, site: s, top: S.siteTop(doc, s), live: v, peak_live_bytes: s.peak_live_bytes, allocations: s.allocations });
      });
      var total = curveAt(doc, event);
      state.total = S.finite(total) && total > 0 ? total : listed;
      var when = Array.isArray(t.ns) && S.finite(t.ns[k]) ? ", " + S.fmtNs(t.ns[k]) + " into the run" : "";
      var peakNote = S.finite(doc.peak_event) && nearest(t.events, doc.peak_event) === k ? " (the peak)" : "";
      table.update(rows, "Sites by bytes live at event " + S.fmtCount(event) + when + peakNote + ": " +
        S.fmtBytes(state.total) + " live in all" +
        (Math.abs(listed - state.total) > 0.005 * state.total ? ", " + S.fmtBytes(listed) + " by the listed sites" : ""));
      table.table.setAttribute("data-event", String(event));
      if (opts.chart) opts.chart.setMoment(event);
    }

    var start = S.finite(doc.peak_event) ? nearest(t.events, doc.peak_event) : 0;
    pickIndex(start);
    return {
      pick: function (x) { pickIndex(nearest(t.events, x)); },
      attach: function (chart) { opts.chart = chart; chart.setMoment(t.events[state.index]); }
    };
  };

  // A memory chart with the moment picker wired to a sites file: the chart's click picks,
  // the table follows. makeChart(pick) draws the chart and returns it ({setMoment}).
  S.momentChart = function (parent, name, doc, makeChart) {
    var picker = null;
    var chart = makeChart(function (x) { if (picker) picker.pick(x); });
    S.guard(parent, "what was live then in " + name, function () {
      picker = S.liveBySite(parent, name, doc, { chart: chart });
    });
    return chart;
  };

  // A site's stack as text, innermost frame first.
  S.siteStackText = function (doc, site) {
    return (site.stack || []).map(function (f) {
      var fr = S.siteFrame(doc, f);
      return S.frameName(fr) + (S.frameWhere(fr) ? " (" + S.frameWhere(fr) + ")" : "");
    }).join(" \u2190 ");
  };
  // A site's frames, innermost first, resolved against the sites file.
  S.siteFrames = function (doc, site) {
    return (site.stack || []).map(function (f) { return S.siteFrame(doc, f); });
  };
  // How many frames tell each listed site apart (S.stackDepths), computed once per file.
  var depthsOf = new WeakMap();
  S.siteDepth = function (doc, site) {
    var m = depthsOf.get(doc);
    if (!m) {
      m = new Map();
      var infos = S.stackDepths(doc.sites.map(function (s) { return s.stack || []; }),
        function (ref) { return S.frameName(S.siteFrame(doc, ref)); });
      doc.sites.forEach(function (s, i) { m.set(s, infos[i]); });
      depthsOf.set(doc, m);
    }
    return m.get(site) || null;
  };
  // The allocating function and, muted, its callers down to the one that tells the site
  // apart from the other listed sites (at least two).
  S.siteCell = function (doc, site) {
    if (!(site.stack || []).length) return S.frameName(S.siteTop(doc, site));
    return S.stackLabelCell(S.siteFrames(doc, site), S.siteDepth(doc, site));
  };
  S.siteTip = function (doc, site) {
    return (site.stack || []).length ? S.stackTip(S.siteFrames(doc, site)) : S.frameName(S.siteTop(doc, site));
  };

  // The sites of a sites file as a sortable table (every figure).
  S.sitesTable = function (parent, name, doc) {
    // The stack's text only for the rows shown and the CSV: thousands of sites stay quick.
    function stackOf(r) { return r.stackText || (r.stackText = S.siteStackText(doc, r.site)); }
    var rows = doc.sites.map(function (s) {
      var r = { id: s.id, site: s, top: S.siteTop(doc, s), depth: (s.stack || []).length };
      S.SITE_METRICS.forEach(function (m) { r[m.key] = s[m.key]; });
      r.never_freed_objects = s.never_freed_objects;
      r.temporary_bytes = s.temporary_bytes;
      return r;
    });
    var cols = [
      { key: "fn", label: "allocating function \u2190 callers", cls: "fn", value: function (r) { return S.frameName(r.top); },
        fmt: function (v, r) { return S.siteCell(doc, r.site); }, tip: function (r) { return S.siteTip(doc, r.site); } },
      { key: "where", label: "file:line", cls: "where", value: function (r) { return S.frameWhere(r.top); },
        fmt: function (v, r) { return S.whereCell(r.top); } }
    ];
    S.SITE_METRICS.forEach(function (m) { cols.push({ key: m.key, label: m.short, title: m.label, num: true, fmt: m.fmt }); });
    cols.push({ key: "temporary_bytes", label: "temporary bytes", num: true, fmt: S.fmtBytes, hidden: true });
    cols.push({ key: "never_freed_objects", label: "never freed objects", num: true, hidden: true });
    cols.push({ key: "id", label: "site", num: true });
    cols.push({ key: "stack", label: "stack", csvLabel: "stack_innermost_first", hidden: true, value: stackOf });
    var t = S.table({
      id: "sites-" + S.slug(name), csvName: "sites-" + name, columns: cols, rows: rows,
      sort: { key: "bytes", dir: "desc" }, rowAttrs: function (r) { return { "data-site": r.id, title: S.siteTip(doc, r.site) }; },
      caption: S.fmtCount(rows.length) + " sites listed" +
        (S.finite(doc.total_sites) && doc.total_sites > rows.length ? " of " + S.fmtCount(doc.total_sites) + " (the rest summed as \u201cother\u201d)" : "")
    });
    parent.appendChild(t.el);
    return t;
  };
})();
