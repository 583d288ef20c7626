// report.html for `strata tune` (tune.json, strata-tune-1): the setting to use for the goal
// with its command lines, per allocator its best and the live check; the Pareto front of
// time against peak heap over every setting tried; every candidate in a table.
(function () {
  "use strict";
  var S = window.Strata;
  S.kinds = S.kinds || {};

  function score(goal, t, h) {
    if (goal === "time") return t;
    if (goal === "memory") return h;
    return Math.sqrt(t * h);
  }

  // The reference every ratio is taken to: glibc's default when it ran, else each allocator's.
  function reference(main, run) {
    var g = main.glibc_default;
    if (g && g.ok) return { m: g, name: "glibc's default" };
    var d = (run.candidates || [])[0];
    return d && d.measure && d.measure.ok ? { m: d.measure, name: "its own default" } : null;
  }

  // Every setting that ran, as a point: its ratios, and whether it is on the Pareto front.
  function points(main) {
    var out = [];
    (main.allocators || []).forEach(function (run) {
      var ref = reference(main, run);
      if (!ref) return;
      (run.candidates || []).forEach(function (c) {
        var m = c.measure || {};
        if (!m.ok) return;
        out.push({ run: run, c: c, x: m.time_seconds / ref.m.time_seconds,
          y: ref.m.peak_heap_bytes > 0 ? m.peak_heap_bytes / ref.m.peak_heap_bytes : 1 });
      });
    });
    out.forEach(function (p) {
      p.front = !out.some(function (q) { return q.x <= p.x && q.y <= p.y && (q.x < p.x || q.y < p.y); });
    });
    return out;
  }

  function commandLine(main, c) {
    if (c.strata_run_line) return c.strata_run_line;
    return "strata run --allocator " + c.spec + " -- " + (main.app || "COMMAND");
  }

  // Per allocator: the setting the search keeps (its best when the gain is beyond the noise,
  // else its default) and that setting's ratios to glibc's default.
  function choices(main) {
    var g = main.glibc_default;
    return (main.allocators || []).map(function (run) {
      var def = (run.candidates || [])[0];
      if (!def || !def.measure || !def.measure.ok) return { run: run, failed: true };
      var b = run.best && run.best.significant ? run.best : null;
      var t = def.measure.time_seconds * (b ? b.time_ratio : 1);
      var h = def.measure.peak_heap_bytes * (b ? b.heap_ratio : 1);
      var tg = g && g.ok ? t / g.time_seconds : null, hg = g && g.ok && g.peak_heap_bytes > 0 ? h / g.peak_heap_bytes : null;
      return { run: run, best: b, def: def, t: t, h: h, tg: tg, hg: hg,
        score: tg !== null && hg !== null ? score(main.goal, tg, hg) : null };
    });
  }

  function lines(best, def) {
    var env = best ? best.environment_line : def && def.environment_line;
    var run = best ? best.strata_run_line : def && def.strata_run_line;
    return [env ? S.el("code", { class: "cmdline" }, env) : null, run ? S.el("code", { class: "cmdline" }, run) : null];
  }

  function verdict(main, el) {
    el.appendChild(S.el("h2", {}, "Verdict"));
    var cs = choices(main);
    var ranked = cs.filter(function (c) { return S.finite(c.score); }).sort(function (a, b) { return a.score - b.score; });
    el.appendChild(S.el("p", { class: "note" }, "Goal: " + (main.goal || "balanced") +
      (main.goal === "balanced" || !main.goal ? " (geometric mean of the time and peak heap ratios)" : "") +
      "; budget " + (main.budget || S.DASH) + ", " + (main.repeat || 1) + " replay" + (main.repeat === 1 ? "" : "s") + " per setting" +
      (main.app ? "; program: " + main.app : "")));
    if (ranked.length) {
      var w = ranked[0];
      var what = w.best ? [S.el("b", {}, w.run.name), " with ", S.el("b", {}, w.best.setting)] : [S.el("b", {}, w.run.name), " as it is (its default)"];
      el.appendChild(S.el("p", { class: "headline" }, "Use ", what, ": time ", S.el("b", {}, S.fmtRatio(w.tg)),
        ", peak heap ", S.el("b", {}, S.fmtRatio(w.hg)), S.el("span", { class: "muted" }, " of glibc's default")));
      S.append(el, lines(w.best, w.def));
    } else {
      el.appendChild(S.el("p", { class: "headline" }, "No allocator could be ranked against glibc's default."));
    }
    var list = S.el("ul", {});
    cs.forEach(function (c) {
      if (c.failed) { list.appendChild(S.el("li", { class: "up" }, c.run.name + ": its default failed on this trace")); return; }
      var b = c.run.best;
      var text = b && b.significant
        ? [S.el("b", {}, c.run.name), " best " + b.setting + ": time " + S.fmtRatio(b.time_ratio) + " (noise " + S.fmtPct(100 * b.time_noise) +
           "), peak heap " + S.fmtRatio(b.heap_ratio) + " (noise " + S.fmtPct(100 * b.heap_noise) + ") of its default"]
        : [S.el("b", {}, c.run.name), " keep the default", S.el("span", { class: "muted" }, b ? " (best tried, " + b.setting + ", gains no more than its noise)" : " (no setting scored better)")];
      if (c.score !== null) text.push(S.el("span", { class: "muted" }, "; against glibc's default: time " + S.fmtRatio(c.tg) + ", heap " + S.fmtRatio(c.hg)));
      list.appendChild(S.el("li", {}, text));
    });
    el.appendChild(list);
    (main.skipped || []).forEach(function (s) { el.appendChild(S.el("div", { class: "note" }, "skipped: " + s)); });
  }

  function liveTable(parent, main) {
    if (!(main.live || []).length) {
      parent.appendChild(S.el("p", { class: "note" }, "No live check: " + (main.app ? "no setting beat its default." : "tuned on traces, not on a command.")));
      return;
    }
    var pred = {};
    (main.allocators || []).forEach(function (r) { pred[r.name] = r.best; });
    var rows = main.live.map(function (l) {
      var b = pred[l.allocator] || {};
      return { allocator: l.allocator, ok: l.ok, detail: l.detail, pt: b.time_ratio, lt: l.ok && l.default_seconds > 0 ? l.best_seconds / l.default_seconds : null,
        ph: b.heap_ratio, lh: l.ok && l.default_rss_bytes > 0 ? l.best_rss_bytes / l.default_rss_bytes : null,
        ds: l.default_seconds, bs: l.best_seconds, dr: l.default_rss_bytes, br: l.best_rss_bytes };
    });
    parent.appendChild(S.table({
      id: "tune-live", csvName: "tune-live", rows: rows, caption: "Live check: the program run on each allocator's default and best setting",
      rowClass: function (r) { return r.ok ? null : "failed"; },
      columns: [
        { key: "allocator", label: "allocator" },
        { key: "pt", label: "time predicted", num: true, fmt: S.fmtRatio }, { key: "lt", label: "time live", num: true, fmt: S.fmtRatio },
        { key: "ph", label: "heap predicted", num: true, fmt: S.fmtRatio }, { key: "lh", label: "peak RSS live", num: true, fmt: S.fmtRatio },
        { key: "ds", label: "default time", num: true, fmt: S.fmtSeconds }, { key: "bs", label: "best time", num: true, fmt: S.fmtSeconds },
        { key: "dr", label: "default RSS", num: true, fmt: S.fmtBytes }, { key: "br", label: "best RSS", num: true, fmt: S.fmtBytes },
        { key: "detail", label: "detail", cls: "wrap" }
      ]
    }).el);
  }

  function pareto(parent, main, pts) {
    var glibc = main.glibc_default && main.glibc_default.ok;
    var box = S.chartFigure(parent, "pareto", "Time against peak heap, every setting tried",
      "ratios to " + (glibc ? "glibc's default" : "each allocator's default") + " (lower is better on both); the front circled");
    var byRun = {};
    pts.forEach(function (p) { (byRun[p.run.name] = byRun[p.run.name] || []).push(p); });
    var groups = Object.keys(byRun).map(function (n) { return { label: n, points: byRun[n] }; });
    var front = pts.filter(function (p) { return p.front; });
    S.scatterChart(box, {
      groups: groups, line: { label: "Pareto front", points: front }, xLabel: "time ratio", yLabel: "peak heap ratio",
      xFmt: function (v) { return v.toFixed(2) + "x"; }, yFmt: function (v) { return v.toFixed(3) + "x"; }, height: 420,
      tip: function (p) {
        var m = p.c.measure;
        return [S.el("b", {}, p.run.name), " ", p.c.setting + (p.c.default ? " (default)" : ""), p.front ? " \u2014 on the front" : "", S.el("br"),
          "time " + S.fmtRatio(p.x) + " (" + S.fmtSeconds(m.time_seconds) + "), peak heap " + S.fmtRatio(p.y) + " (" + S.fmtBytes(m.peak_heap_bytes) + ")",
          S.el("br"), S.el("code", {}, commandLine(main, p.c))];
      },
      csvHead: ["allocator", "setting", "spec", "time_ratio", "heap_ratio", "front", "command_line"],
      csvRow: function (p) { return [p.run.name, p.c.setting, p.c.spec, p.x, p.y, p.front ? 1 : 0, commandLine(main, p.c)]; }
    });
  }

  function candidatesTable(parent, main, pts) {
    var rows = [];
    var onPts = new Map();
    pts.forEach(function (p) { onPts.set(p.c, p); });
    (main.allocators || []).forEach(function (run) {
      (run.candidates || []).forEach(function (c) {
        var p = onPts.get(c) || {}, m = c.measure || {};
        var best = run.best && run.best.spec === c.spec;
        rows.push({ allocator: run.name, setting: c.setting, spec: c.spec, ok: m.ok, time: m.time_seconds, heap: m.peak_heap_bytes,
          tr: p.x, hr: p.y, isDefault: c.default ? "default" : "", best: best ? (run.best.significant ? "best" : "best (noise)") : "",
          front: p.front ? "front" : "", failure: m.failure || "", line: commandLine(main, c) });
      });
    });
    parent.appendChild(S.table({
      id: "tune-candidates", csvName: "tune-candidates", rows: rows, sort: { key: "tr", dir: "asc" },
      caption: S.fmtCount(rows.length) + " settings tried",
      rowClass: function (r) { return !r.ok ? "failed" : r.best === "best" ? "best" : null; },
      columns: [
        { key: "allocator", label: "allocator" }, { key: "setting", label: "setting", cls: "wrap", tip: function (r) { return r.line; } },
        { key: "time", label: "time", num: true, fmt: S.fmtSeconds }, { key: "tr", label: "time ratio", num: true, fmt: S.fmtRatio },
        { key: "heap", label: "peak heap", num: true, fmt: S.fmtBytes }, { key: "hr", label: "heap ratio", num: true, fmt: S.fmtRatio },
        { key: "isDefault", label: "default" }, { key: "best", label: "best" }, { key: "front", label: "front" },
        { key: "failure", label: "failure", cls: "wrap" }, { key: "spec", label: "spec", hidden: true }, { key: "line", label: "command line", hidden: true }
      ]
    }).el);
  }

  S.kinds.tune = function (main, verdictEl, content) {
    if (main.format && !/^strata-tune-/.test(main.format)) throw new Error("tune.json is not strata-tune (format " + main.format + ")");
    if (!Array.isArray(main.allocators)) throw new Error("tune.json has no allocators");
    (main.allocators || []).forEach(function (r) { S.colorFor(r.name); });
    S.guard(verdictEl, "verdict", function () { verdict(main, verdictEl); });
    S.section(content, "Live check", "s-live", function (body) { liveTable(body, main); });
    var pts = [];
    S.section(content, "Pareto front", "s-pareto", function (body) {
      pts = points(main);
      if (!pts.length) throw new Error("no setting ran to the end");
      pareto(body, main, pts);
    });
    S.section(content, "Every setting tried", "s-candidates", function (body) { candidatesTable(body, main, pts); });
  };
})();
