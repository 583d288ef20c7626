// report.html: sortable data tables (click a header; aria-sort says the order), the first
// rows only with a "show all" control, and a CSV button with every row.
(function () {
  "use strict";
  var S = window.Strata;
  var LIMIT = 200;

  function compare(a, b) {
    var an = a === null || a === undefined || (typeof a === "number" && !isFinite(a));
    var bn = b === null || b === undefined || (typeof b === "number" && !isFinite(b));
    if (an || bn) return an === bn ? 0 : an ? 1 : -1;
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b), "en", { numeric: true });
  }

  // The value a column sorts and exports by.
  function rawValue(col, row) {
    return col.value ? col.value(row) : row[col.key];
  }

  // spec: {columns: [{key, label, num, fmt(v, row), value(row), cls, title, tip(row),
  //                   csv: false (not in the CSV), hidden (only in the CSV)}],
  //        rows, sort: {key, dir: "asc"|"desc"}, limit, caption, csvName, id, attrs,
  //        rowAttrs(row, i), rowClass(row), empty, scroll (a box of its own even when short)}
  // Returns {el, table, update(rows, caption)}.
  S.table = function (spec) {
    var state = { rows: (spec.rows || []).slice(), sort: spec.sort || null, all: false };
    var limit = spec.limit || LIMIT;
    var attrs = { class: "data" + (spec.className ? " " + spec.className : "") };
    if (spec.id) attrs.id = spec.id;
    Object.keys(spec.attrs || {}).forEach(function (k) { attrs[k] = spec.attrs[k]; });
    var table = S.el("table", attrs);
    var caption = S.el("caption", {});
    var thead = S.el("thead", {});
    var tbody = S.el("tbody", {});
    table.appendChild(caption);
    table.appendChild(thead);
    table.appendChild(tbody);
    var more = S.el("div", { class: "more" });
    var csvName = spec.csvName || spec.id || "table";
    var tools = S.el("div", { class: "toolbar" }, S.csvButton(csvName, function () { return toCsv(); }));
    // Long tables scroll in a box of their own (the header stays in view).
    var long = (spec.rows || []).length > 30 || spec.scroll;
    var wrap = S.el("div", { class: "table-wrap" + (spec.caption ? " captioned" : "") + (long ? " scroll" : "") }, tools, table, more);

    var shownCols = spec.columns.filter(function (c) { return !c.hidden; });
    var headRow = S.el("tr", {});
    var ths = shownCols.map(function (col) {
      var th = S.el("th", {
        scope: "col", tabindex: "0", class: col.num ? "num" : null, title: col.title || "sort by " + col.label,
        "aria-sort": "none", "data-key": col.key
      }, col.label);
      function click() {
        var dir = state.sort && state.sort.key === col.key
          ? (state.sort.dir === "asc" ? "desc" : "asc") : (col.num ? "desc" : "asc");
        state.sort = { key: col.key, dir: dir };
        render();
      }
      th.addEventListener("click", click);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); click(); } });
      headRow.appendChild(th);
      return th;
    });
    thead.appendChild(headRow);

    function sorted() {
      var rows = state.rows.slice();
      if (!state.sort) return rows;
      var col = spec.columns.filter(function (c) { return c.key === state.sort.key; })[0];
      if (!col) return rows;
      var sign = state.sort.dir === "desc" ? -1 : 1;
      var keyed = rows.map(function (r, i) { return { r: r, v: rawValue(col, r), i: i }; });
      keyed.sort(function (a, b) {
        var c = compare(a.v, b.v);
        // Missing values stay last whichever the direction.
        var missing = a.v === null || a.v === undefined || b.v === null || b.v === undefined;
        return (missing ? c : sign * c) || a.i - b.i;
      });
      return keyed.map(function (k) { return k.r; });
    }

    function cell(col, row) {
      var v = rawValue(col, row);
      var shown = col.fmt ? col.fmt(v, row) : v === null || v === undefined ? S.DASH : v;
      var cls = [col.num ? "num" : "", typeof col.cls === "function" ? col.cls(row) : col.cls || ""].join(" ").trim();
      return S.el("td", { class: cls || null, title: col.tip ? col.tip(row) : null }, shown);
    }

    function render() {
      ths.forEach(function (th, i) {
        var key = shownCols[i].key;
        th.setAttribute("aria-sort", state.sort && state.sort.key === key
          ? (state.sort.dir === "asc" ? "ascending" : "descending") : "none");
      });
      var rows = sorted();
      var n = state.all ? rows.length : Math.min(rows.length, limit);
      var frag = document.createDocumentFragment();
      for (var i = 0; i < n; i++) {
        var row = rows[i];
        var tr = S.el("tr", spec.rowAttrs ? spec.rowAttrs(row, i) : {});
        var rc = spec.rowClass ? spec.rowClass(row) : null;
        if (rc) tr.className = rc;
        shownCols.forEach(function (col) { tr.appendChild(cell(col, row)); });
        frag.appendChild(tr);
      }
      S.clear(tbody).appendChild(frag);
      if (!rows.length)
        tbody.appendChild(S.el("tr", {}, S.el("td", { colspan: shownCols.length, class: "message" }, spec.empty || "nothing to show")));
      S.clear(more);
      if (rows.length > limit) {
        more.appendChild(S.el("span", { class: "note" }, state.all
          ? "all " + S.fmtCount(rows.length) + " rows shown "
          : "the first " + S.fmtCount(n) + " of " + S.fmtCount(rows.length) + " rows shown (the CSV has every row) "));
        more.appendChild(S.el("button", {
          type: "button", class: "show-all",
          onclick: function () { state.all = !state.all; render(); }
        }, state.all ? "show the first " + limit : "show all " + S.fmtCount(rows.length)));
      }
    }

    function toCsv() {
      var cols = spec.columns.filter(function (c) { return c.csv !== false; });
      var head = cols.map(function (c) { return c.csvLabel || c.key; });
      return S.toCsv(head, sorted().map(function (r) {
        return cols.map(function (c) { var v = rawValue(c, r); return c.csvValue ? c.csvValue(v, r) : v; });
      }));
    }

    function setCaption(text) {
      S.clear(caption);
      S.append(caption, text);
      caption.hidden = !text;
    }
    setCaption(spec.caption || "");
    render();
    return {
      el: wrap, table: table,
      update: function (rows, captionText) {
        state.rows = rows.slice();
        if (captionText !== undefined) setCaption(captionText);
        render();
      }
    };
  };

  // A small horizontal bar in a cell: share of the largest value (0..1).
  S.barCell = function (text, fraction) {
    var w = Math.max(0, Math.min(1, fraction || 0)) * 60;
    return S.el("span", {}, S.el("span", { class: "bar-cell", style: "width:" + w.toFixed(1) + "px" }), text);
  };
})();
