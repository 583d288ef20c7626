// report.html: "where the memory goes", an icicle of allocation sites drawn in SVG. The root
// (all) is at the top; each site's stack, read outermost frame first, goes down towards the
// allocating function. Widths follow the chosen metric; nodes under 1.5 px are summed into
// one grey "smaller" node per parent so thousands of sites stay responsive. Hover shows the
// frame and its figure, click zooms into a node, click the top bar (or "reset") to zoom out.
(function () {
  "use strict";
  var S = window.Strata;
  var ROW = 18, MIN_PX = 1.5, MAX_ROWS = 80;

  S.SITE_METRICS = [
    { key: "bytes", label: "bytes allocated", short: "allocated", fmt: S.fmtBytes },
    { key: "allocations", label: "allocations", short: "allocations", fmt: S.fmtCount },
    { key: "peak_live_bytes", label: "bytes live at the peak", short: "live at peak", fmt: S.fmtBytes },
    { key: "never_freed_bytes", label: "bytes never freed", short: "never freed", fmt: S.fmtBytes },
    { key: "temporary_allocations", label: "temporary allocations", short: "temporary", fmt: S.fmtCount }
  ];

  // A site's frame i of its stack: an index into the sites file's frames, or a frame itself.
  S.siteFrame = function (doc, ref) {
    if (typeof ref === "number") return (doc.frames || [])[ref] || { function: "(frame " + ref + " missing)" };
    return ref || {};
  };
  // The allocating function of a site: its innermost frame.
  S.siteTop = function (doc, site) {
    var st = site.stack || [];
    return st.length ? S.siteFrame(doc, st[0]) : { function: site.id === 0 ? "(stack unknown)" : "(no frames)" };
  };

  function newNode(name, frame, parent) {
    return { name: name, frame: frame, parent: parent, kids: {}, list: null, total: {}, self: {}, sites: 0 };
  }
  function add(into, site) {
    S.SITE_METRICS.forEach(function (m) { into[m.key] = (into[m.key] || 0) + (S.finite(site[m.key]) ? site[m.key] : 0); });
  }

  // The tree: one node per distinct frame under its caller.
  S.siteTree = function (doc) {
    if (!Array.isArray(doc.sites)) throw new Error("the sites file has no sites");
    var root = newNode("all", null, null);
    function place(site, path) {
      var node = root;
      add(root.total, site);
      path.forEach(function (ref) {
        var key = typeof ref === "number" ? "f" + ref : JSON.stringify(ref);
        if (!node.kids[key]) {
          var fr = S.siteFrame(doc, ref);
          node.kids[key] = newNode(S.frameName(fr), fr, node);
        }
        node = node.kids[key];
        add(node.total, site);
      });
      add(node.self, site);
      node.sites++;
    }
    doc.sites.forEach(function (site) {
      var st = (site.stack || []).slice().reverse();
      place(site, st.length ? st : [{ function: site.id === 0 ? "(stack unknown)" : "(no frames)" }]);
    });
    if (doc.other) place(doc.other, [{ function: "(other sites, not listed)" }]);
    (function finish(node) {
      node.list = Object.keys(node.kids).map(function (k) { return node.kids[k]; });
      node.list.forEach(finish);
    })(root);
    return root;
  };

  function hue(name) {
    var h = 0;
    for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return h;
  }
  function color(node) {
    if (!node.parent) return "#8da4c8";
    if (node.name.charAt(0) === "(") return "#b9bec7";
    var h = hue(node.name);
    return "hsl(" + (10 + h % 45) + "," + (62 + (h >> 8) % 25) + "%," + (58 + (h >> 16) % 14) + "%)";
  }

  function pathOf(node) {
    var out = [];
    for (var n = node; n; n = n.parent) out.unshift(n);
    return out;
  }

  // Lays out the nodes to draw for `metric` with `zoom` spanning the width: its ancestors as
  // full-width bars above it, its descendants in proportion below.
  function layout(root, zoom, metric, width) {
    var drawn = [];
    var above = pathOf(zoom);
    above.forEach(function (n, depth) {
      drawn.push({ node: n, x: 0, w: width, depth: depth, ancestor: n !== zoom });
    });
    var base = above.length - 1;
    var zv = zoom.total[metric] || 0;
    if (zv <= 0) return drawn;
    (function down(node, x, w, depth) {
      if (depth - base > MAX_ROWS) return;
      var kids = node.list.filter(function (k) { return (k.total[metric] || 0) > 0; });
      kids.sort(function (a, b) { return b.total[metric] - a.total[metric]; });
      var small = { n: 0, v: 0, w: 0, names: [] };
      kids.forEach(function (k) {
        var kw = w * k.total[metric] / (node.total[metric] || 1);
        if (kw < MIN_PX) {
          small.n++; small.v += k.total[metric]; small.w += kw;
          if (small.names.length < 5) small.names.push(k.name);
          return;
        }
        drawn.push({ node: k, x: x, w: kw, depth: depth + 1 });
        down(k, x, kw, depth + 1);
        x += kw;
      });
      if (small.w >= 0.5)
        drawn.push({ node: null, aggregate: small, parent: node, x: x, w: small.w, depth: depth + 1 });
    })(zoom, 0, width, base);
    return drawn;
  }

  // What a node is: its frame and figures (with its whole stack in the tooltip, withStack).
  function tipFor(d, metric, root, zoom, withStack) {
    var m = S.SITE_METRICS.filter(function (x) { return x.key === metric; })[0];
    var all = root.total[metric] || 0;
    if (d.aggregate)
      return [S.el("b", {}, S.fmtCount(d.aggregate.n) + " smaller callee" + (d.aggregate.n === 1 ? "" : "s") + " of " + d.parent.name),
        S.el("div", { class: "fn" }, d.aggregate.names.join(", ") + (d.aggregate.n > d.aggregate.names.length ? ", \u2026" : "")),
        m.label + ": " + m.fmt(d.aggregate.v) + " (" + S.fmtShare(d.aggregate.v, all) + " of all)"];
    var n = d.node, v = n.total[metric] || 0, f = n.frame || {};
    var out = [S.el("div", { class: "fn" }, n.name)];
    if (S.frameFull(f)) out.push(S.el("div", {}, S.frameFull(f) + (f.module && f.file ? "  [" + f.module + "]" : "")));
    out.push(S.el("div", {}, m.label + ": " + m.fmt(v) + " \u2014 " + S.fmtShare(v, all) + " of all" +
      (zoom !== root && zoom !== n && !d.ancestor ? ", " + S.fmtShare(v, zoom.total[metric]) + " of " + zoom.name : "")));
    if ((n.self[metric] || 0) > 0 && n.list.length)
      out.push(S.el("div", {}, "allocated here directly: " + m.fmt(n.self[metric])));
    if (withStack && n.parent && n.parent.parent) out.push(stackTip(n));
    return out;
  }

  var MAX_TIP_FRAMES = 24;
  // A node's full stack, itself first then its callers up to the outermost, with file:line.
  function stackTip(node) {
    var frames = [];
    for (var n = node; n && n.parent; n = n.parent) frames.push(n);
    var list = S.el("div", { class: "stack" }, S.el("div", { class: "muted" }, "stack, innermost first:"));
    frames.slice(0, MAX_TIP_FRAMES).forEach(function (k, i) {
      var where = S.frameFull(k.frame || {});
      list.appendChild(S.el("div", {}, (i ? "\u2190 " : "") + k.name, where ? S.el("span", { class: "at" }, " " + where) : ""));
    });
    if (frames.length > MAX_TIP_FRAMES) list.appendChild(S.el("div", {}, "\u2190 \u2026 " + (frames.length - MAX_TIP_FRAMES) + " more"));
    return list;
  }

  // The figure flame:NAME with its metric selector, info line and svg.flame.
  S.flameChart = function (parent, name, doc, title) {
    var box = S.chartFigure(parent, "flame:" + name, title || "Where the memory goes",
      "allocation sites, outermost caller at the top; width = the chosen figure");
    var root = S.siteTree(doc);
    var select = S.el("select", { class: "flame-metric", "aria-label": "size the icicle by" },
      S.SITE_METRICS.map(function (m) { return S.el("option", { value: m.key }, m.label); }));
    var reset = S.el("button", { type: "button", class: "flame-reset" }, "reset zoom");
    box.tools.appendChild(S.el("label", {}, "size by ", select));
    box.tools.appendChild(reset);
    var info = S.el("div", { class: "flame-info" }, "Hover a frame for its figures; click to zoom into it.");
    var svg = S.svg("svg", { class: "flame", "data-trace": name, role: "img", "aria-label": "icicle of allocation sites" });
    box.plot.appendChild(S.el("div", { class: "flame-box" }, info, svg));
    var state = { zoom: root, metric: "bytes", drawn: [] };
    var firstUseful = S.SITE_METRICS.filter(function (m) { return (root.total[m.key] || 0) > 0; })[0];
    if (firstUseful) state.metric = select.value = firstUseful.key;

    function draw() {
      var width = Math.max(320, box.plot.clientWidth || 1100);
      var drawn = layout(root, state.zoom, state.metric, width);
      state.drawn = drawn;
      var rows = 1;
      drawn.forEach(function (d) { rows = Math.max(rows, d.depth + 1); });
      S.clear(svg);
      svg.setAttribute("viewBox", "0 0 " + width + " " + rows * ROW);
      svg.setAttribute("height", rows * ROW);
      var frag = document.createDocumentFragment();
      var m = S.SITE_METRICS.filter(function (x) { return x.key === state.metric; })[0];
      drawn.forEach(function (d, i) {
        var g = S.svg("g", { class: d.aggregate ? "aggregate" : d.ancestor ? "ancestor" : null });
        g.appendChild(S.svg("rect", {
          x: d.x.toFixed(2), y: d.depth * ROW, width: Math.max(0.5, d.w - 0.5).toFixed(2), height: ROW - 1,
          fill: d.aggregate ? "#c9ced6" : color(d.node), "data-i": i
        }));
        var chars = Math.floor((d.w - 6) / 6.7);
        if (chars >= 3) {
          var label = d.aggregate ? d.aggregate.n + " smaller" : d.node.name;
          if (!d.parent && d.node && !d.node.parent) label = "all: " + m.fmt(root.total[state.metric] || 0);
          if (label.length > chars) label = label.slice(0, Math.max(1, chars - 1)) + "\u2026";
          g.appendChild(S.svg("text", { x: (d.x + 3).toFixed(1), y: d.depth * ROW + ROW - 5 }, label));
        }
        frag.appendChild(g);
      });
      svg.appendChild(frag);
      if (!(root.total[state.metric] > 0))
        info.textContent = "No site has any " + m.label + " in this trace.";
    }

    // The drawn box under the pointer, found by position so boxes narrower than a pixel can be
    // hovered too: on the pointer's row, the box holding it, each box at least 3 px wide for
    // this (the narrowest wins where they overlap), else the nearest within 3 px. -1 when none.
    function hit(e) {
      var ctm = svg.getScreenCTM();
      if (!ctm) return -1;
      var p = new DOMPoint(e.clientX, e.clientY).matrixTransform(ctm.inverse()), x = p.x, y = p.y;
      var depth = Math.floor(y / ROW), best = -1, bestDist = 3;
      state.drawn.forEach(function (d, i) {
        if (d.depth !== depth) return;
        var grow = Math.max(0, 3 - d.w) / 2, lo = d.x - grow, hi = d.x + d.w + grow;
        var dist = x < lo ? lo - x : x > hi ? x - hi : 0;
        if (dist < bestDist || (dist === 0 && bestDist === 0 && d.w < state.drawn[best].w)) { best = i; bestDist = dist; }
      });
      return best;
    }
    svg.addEventListener("mousemove", function (e) {
      var i = hit(e);
      if (i < 0) { S.hideTip(); return; }
      S.showTip(tipFor(state.drawn[i], state.metric, root, state.zoom, true), e.clientX, e.clientY);
      S.clear(info);
      S.append(info, tipFor(state.drawn[i], state.metric, root, state.zoom, false));
    });
    svg.addEventListener("mouseleave", S.hideTip);
    svg.addEventListener("click", function (e) {
      var i = hit(e);
      if (i < 0) return;
      var d = state.drawn[i];
      if (d.aggregate) return;
      zoomTo(d.node === state.zoom && d.node.parent ? d.node.parent : d.node);
    });
    // Draws with `node` spanning the width; the info line then describes that node, its shares
    // against the new zoom (not the one the pointer last saw).
    function zoomTo(node) {
      state.zoom = node;
      S.guard(box.plot, "icicle of " + name, draw);
      if (!(root.total[state.metric] > 0)) return;
      S.clear(info);
      S.append(info, tipFor({ node: node }, state.metric, root, node, false));
    }
    select.addEventListener("change", function () { state.metric = select.value; zoomTo(root); });
    reset.addEventListener("click", function () { zoomTo(root); });
    box.tools.appendChild(S.csvButton("flame-" + name, function () { return treeCsv(root); }));
    window.addEventListener("resize", function () { if (svg.isConnected) S.guard(box.plot, "icicle of " + name, draw); });
    draw();
    return { root: root, svg: svg };
  };

  // Every node of the tree: its path from the root, its frame, and its figures.
  function treeCsv(root) {
    var head = ["depth", "path", "function", "file", "line", "module"];
    S.SITE_METRICS.forEach(function (m) { head.push(m.key); });
    var rows = [];
    (function walk(node, depth, path) {
      var f = node.frame || {};
      var row = [depth, path, node.name, f.file || "", f.line || "", f.module || ""];
      S.SITE_METRICS.forEach(function (m) { row.push(node.total[m.key] || 0); });
      rows.push(row);
      node.list.forEach(function (k) { walk(k, depth + 1, path ? path + ";" + k.name : k.name); });
    })(root, 0, "");
    return S.toCsv(head, rows);
  }
})();
