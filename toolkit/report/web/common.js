// report.html: formatting, DOM helpers, the embedded data, CSV downloads and per-section
// error catching. Every other file adds to the one namespace window.Strata (S).
(function () {
  "use strict";
  var S = (window.Strata = window.Strata || {});
  S.errors = [];

  // ---- numbers as people read them ----
  function finite(v) { return typeof v === "number" && isFinite(v); }
  S.finite = finite;
  S.DASH = "\u2013";

  // Three significant digits: 1.23, 12.3, 123, 1234.
  function sig3(x) {
    var a = Math.abs(x);
    if (a >= 1000 || a === 0) return Math.round(x).toLocaleString("en-US");
    return x.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
  }
  S.sig3 = sig3;

  var UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  S.fmtBytes = function (b) {
    if (!finite(b)) return S.DASH;
    var a = Math.abs(b), u = 0;
    while (a >= 1024 && u < UNITS.length - 1) { a /= 1024; u++; }
    if (u === 0) return Math.round(b) + " B";
    return (b < 0 ? "-" : "") + sig3(a) + " " + UNITS[u];
  };
  // Axis labels: "16 MiB", "1.5 GiB" (no trailing zeros).
  S.fmtBytesShort = function (b) {
    if (!finite(b)) return "";
    var a = Math.abs(b), u = 0;
    while (a >= 1024 && u < UNITS.length - 1) { a /= 1024; u++; }
    return (b < 0 ? "-" : "") + parseFloat(a.toPrecision(3)) + " " + UNITS[u];
  };
  S.fmtBytesSigned = function (b) {
    if (!finite(b)) return S.DASH;
    return (b > 0 ? "+" : b < 0 ? "\u2212" : "\u00b1") + S.fmtBytes(Math.abs(b));
  };
  S.fmtCount = function (n) {
    if (!finite(n)) return S.DASH;
    return Math.abs(n) >= 1e4 || Number.isInteger(n) ? Math.round(n).toLocaleString("en-US") : sig3(n);
  };
  S.fmtCountSigned = function (n) {
    if (!finite(n)) return S.DASH;
    return (n > 0 ? "+" : n < 0 ? "\u2212" : "\u00b1") + S.fmtCount(Math.abs(n));
  };
  S.fmtMs = function (ms) {
    if (!finite(ms)) return S.DASH;
    var a = Math.abs(ms);
    if (a >= 60000) return (ms / 60000).toFixed(1) + " min";
    if (a >= 1000) return sig3(ms / 1000) + " s";
    if (a >= 1 || a === 0) return sig3(ms) + " ms";
    return sig3(ms * 1000) + " \u00b5s";
  };
  S.fmtSeconds = function (s) { return finite(s) ? S.fmtMs(s * 1000) : S.DASH; };
  S.fmtNs = function (ns) {
    if (!finite(ns)) return S.DASH;
    if (Math.abs(ns) < 1000) return Math.round(ns) + " ns";
    return S.fmtMs(ns / 1e6);
  };
  S.fmtRatio = function (r) { return finite(r) && r > 0 ? r.toFixed(r >= 10 ? 1 : 2) + "x" : S.DASH; };
  S.fmtPct = function (p, digits) { return finite(p) ? p.toFixed(typeof digits === "number" ? digits : 1) + "%" : S.DASH; };
  S.fmtPctSigned = function (p) { return finite(p) ? (p > 0 ? "+" : p < 0 ? "\u2212" : "\u00b1") + Math.abs(p).toFixed(1) + "%" : S.DASH; };
  S.fmtShare = function (part, whole) { return finite(part) && finite(whole) && whole > 0 ? S.fmtPct(100 * part / whole) : S.DASH; };
  // Log2 histogram bucket i holds [2^i, 2^(i+1)): its lower bound, in the given unit.
  S.fmtPow2 = function (i, fmt) { return fmt(Math.pow(2, i)); };

  // ---- DOM ----
  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { append(node, c); }); return; }
    node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  function setAttrs(node, attrs) {
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === "text") node.textContent = v;
      else if (k === "class") node.setAttribute("class", v);
      else if (k.slice(0, 2) === "on" && typeof v === "function") node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    });
  }
  S.el = function (tag, attrs) {
    var node = document.createElement(tag);
    setAttrs(node, attrs);
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  };
  S.svg = function (tag, attrs) {
    var node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    setAttrs(node, attrs);
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  };
  S.append = append;
  S.clear = function (node) { while (node.firstChild) node.removeChild(node.firstChild); return node; };
  // A stable DOM id fragment from any name.
  S.slug = function (s) { return String(s).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "x"; };
  // The last path component without its extension ("/a/b/app.trace" -> "app").
  S.stem = function (p) {
    var base = String(p || "").split(/[\\/]/).pop();
    var dot = base.lastIndexOf(".");
    return dot > 0 ? base.slice(0, dot) : base;
  };

  // ---- errors: a section that fails shows why, the rest of the page still draws ----
  S.fail = function (where, err) {
    var msg = where + ": " + (err && err.message ? err.message : String(err));
    S.errors.push(msg);
    console.error("strata report: " + msg, err);
    return msg;
  };
  S.errorBox = function (text) { return S.el("div", { class: "error", role: "alert" }, text); };
  // Runs fn(container); on an exception puts a message in the container instead.
  S.guard = function (container, what, fn) {
    try {
      return fn(container);
    } catch (err) {
      var msg = S.fail(what, err);
      append(container, S.errorBox("Could not show " + msg));
      return null;
    }
  };
  // A card section with a heading, listed in the page's table of contents.
  S.section = function (parent, title, id, fn) {
    var body = S.el("section", { class: "card", id: id || "s-" + S.slug(title) });
    body.appendChild(S.el("h2", {}, title));
    parent.appendChild(body);
    var toc = document.getElementById("toc");
    if (toc) toc.appendChild(S.el("a", { href: "#" + body.id }, title));
    S.guard(body, title, fn);
    return body;
  };

  // ---- the embedded data ----
  S.file = function (rel) {
    var files = (S.data && S.data.files) || {};
    if (!rel) throw new Error("no file named");
    if (!Object.prototype.hasOwnProperty.call(files, rel))
      throw new Error("the file " + rel + " is not embedded in the page");
    return files[rel];
  };
  S.hasFile = function (rel) {
    return !!rel && !!S.data && !!S.data.files && Object.prototype.hasOwnProperty.call(S.data.files, rel);
  };
  // A CSV file as embedded: {csv, columns, data: one array per column, rows, downsampled_from}.
  S.csv = function (rel, needed) {
    var f = S.file(rel);
    if (!f || f.csv !== true || !Array.isArray(f.columns) || !Array.isArray(f.data))
      throw new Error(rel + " is not an embedded CSV file");
    var cols = {};
    f.columns.forEach(function (name, i) {
      var col = f.data[i];
      if (!Array.isArray(col)) throw new Error(rel + ": column " + name + " has no values");
      cols[name] = col;
    });
    (needed || []).forEach(function (name) {
      if (!cols[name]) throw new Error(rel + " has no column " + name + " (columns: " + f.columns.join(", ") + ")");
    });
    var rows = f.data.length ? f.data[0].length : 0;
    var from = finite(f.downsampled_from) ? f.downsampled_from : rows;
    return { name: rel, columns: f.columns, col: cols, rows: rows, from: from, downsampled: from > rows };
  };
  // "downsampled from 20,000 rows (extremes kept)" or "".
  S.downsampleNote = function (csvs) {
    var shown = 0, from = 0, any = false;
    csvs.forEach(function (c) { shown += c.rows; from += c.from; any = any || c.downsampled; });
    return any ? "drawn from " + S.fmtCount(shown) + " of " + S.fmtCount(from) + " rows (each bucket's extremes kept)" : "";
  };

  // ---- CSV out ----
  function csvCell(v) {
    if (v === null || v === undefined) return "";
    var s = typeof v === "number" ? (isFinite(v) ? String(v) : "") : String(v);
    return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  S.toCsv = function (header, rows) {
    var lines = [header.map(csvCell).join(",")];
    rows.forEach(function (r) { lines.push(r.map(csvCell).join(",")); });
    return lines.join("\n") + "\n";
  };
  S.download = function (name, text) {
    var blob = new Blob([text], { type: "text/csv;charset=utf-8" });
    var url = URL.createObjectURL(blob);
    var a = S.el("a", { href: url, download: name });
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(url); a.remove(); }, 1000);
  };
  // A button that downloads getCsv() (a string) as `name`.
  S.csvButton = function (name, getCsv, label) {
    var fileName = S.slug(name.replace(/\.csv$/, "")) + ".csv";
    return S.el("button", {
      type: "button", class: "csv", title: "download these figures as " + fileName,
      onclick: function () {
        try { S.download(fileName, getCsv()); } catch (err) { S.fail("CSV " + fileName, err); }
      }
    }, label || "CSV");
  };

  // ---- the floating tooltip ----
  S.showTip = function (content, clientX, clientY) {
    var tip = document.getElementById("tooltip");
    if (!tip) return;
    S.clear(tip);
    append(tip, content);
    tip.hidden = false;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    var x = clientX + 14, y = clientY + 14;
    if (x + w > window.innerWidth - 4) x = Math.max(4, clientX - w - 14);
    if (y + h > window.innerHeight - 4) y = Math.max(4, clientY - h - 14);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  };
  S.hideTip = function () {
    var tip = document.getElementById("tooltip");
    if (tip) tip.hidden = true;
  };

  // A frame as "function (file:line)" pieces; frames from the sites file or inline ones.
  S.frameName = function (f) {
    if (!f) return "(unknown)";
    if (f.function) return f.function;
    if (f.module) return f.module + (finite(f.offset) ? "+0x" + f.offset.toString(16) : "");
    return "(unknown)";
  };
  // "dir/file.c:12" (the last two components), remembered on the frame: thousands of
  // sites share a few hundred frames.
  S.frameWhere = function (f) {
    if (!f) return "";
    if (f.where_ !== undefined) return f.where_;
    var w = f.file ? f.file.split("/").slice(-2).join("/") + (f.line ? ":" + f.line : "") : (f.module || "");
    try { Object.defineProperty(f, "where_", { value: w, enumerable: false }); } catch (e) { /* frozen */ }
    return w;
  };
  S.frameFull = function (f) {
    if (!f) return "";
    return f.file ? f.file + (f.line ? ":" + f.line : "") : (f.module || "");
  };

  // A frame's identity for telling stacks apart: its index in a sites file, or its fields.
  function frameKey(f) {
    if (typeof f === "number") return "#" + f;
    f = f || {};
    return [f.function || "", f.file || "", f.line || "", f.module || "", f.offset || ""].join("|");
  }
  // For each stack (innermost frame first), how many frames tell it apart from the other
  // stacks: the shortest prefix no other stack shares (the whole stack when none is unique),
  // and whether that prefix's function names alone are shared (then its last frame needs its
  // line). nameOf(ref) gives a frame's function name.
  S.stackDepths = function (stacks, nameOf) {
    function trie(keyOf) {
      var root = { n: 0, kids: new Map() };
      return stacks.map(function (st) {
        var node = root, path = [];
        (st || []).forEach(function (ref) {
          var k = keyOf(ref), next = node.kids.get(k);
          if (!next) node.kids.set(k, next = { n: 0, kids: new Map() });
          next.n++;
          path.push(next);
          node = next;
        });
        return path;
      });
    }
    var byFrame = trie(frameKey), byName = trie(nameOf);
    return byFrame.map(function (path, s) {
      var d = path.length;
      for (var i = 0; i < path.length; i++) if (path[i].n === 1) { d = i + 1; break; }
      var names = byName[s];
      return { depth: d, line: d > 1 && d <= names.length && names[d - 1].n > 1 && path[d - 1].n === 1 };
    });
  };
  // A stack's label: the allocating function, then its callers down to the frame that tells
  // the stack apart from the other listed ones (at least two callers, with that frame's line
  // when names alone do not). frames: resolved frames, innermost first. Returns {fn, callers}.
  S.stackLabel = function (frames, info) {
    if (!frames.length) return { fn: "(stack unknown)", callers: "" };
    var depth = info ? info.depth : 1;
    var shown = Math.min(frames.length, Math.max(depth, 3));
    var callers = frames.slice(1, shown).map(function (f, i) {
      var line = info && info.line && i + 1 === depth - 1 && f.line ? ":" + f.line : "";
      return S.frameName(f) + line;
    });
    return { fn: S.frameName(frames[0]),
      callers: callers.length ? " \u2190 " + callers.join(" \u2190 ") + (frames.length > shown ? "\u00a0\u2190\u00a0\u2026" : "") : "" };
  };
  S.stackLabelText = function (frames, info) { var l = S.stackLabel(frames, info); return l.fn + l.callers; };
  S.stackLabelCell = function (frames, info) {
    var l = S.stackLabel(frames, info);
    return S.el("span", {}, l.fn, l.callers ? S.el("span", { class: "callers" }, l.callers) : "");
  };
  // A stack as a tooltip: one frame a line, "function  file:line", innermost first.
  S.stackTip = function (frames) {
    if (!frames.length) return "(stack unknown)";
    return frames.map(function (f, i) {
      var where = S.frameFull(f);
      return (i ? "\u2190 " : "") + S.frameName(f) + (where ? "  " + where : "");
    }).join("\n");
  };
  // A file:line cell that never breaks: cut with an ellipsis, the full path in its tooltip.
  S.whereCell = function (f) {
    var w = S.frameWhere(f);
    return w ? S.el("span", { class: "where", title: S.frameFull(f) || w }, w) : S.DASH;
  };

  // A definition list of headline figures: [[label, value, title?], ...].
  S.figures = function (pairs) {
    return S.el("dl", { class: "figures" }, pairs.filter(Boolean).map(function (p) {
      return S.el("div", { title: p[2] || null }, S.el("dt", {}, p[0]), S.el("dd", {}, p[1]));
    }));
  };
})();
