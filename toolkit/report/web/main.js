// report.html: reads the embedded bundle (schema strata-report-1), sets the page's kind and
// title, and hands the main document to the drawing of its kind (S.kinds). When it is done
// window.strataReport = {ready: true, errors: [...], ms: time to draw}, whatever failed on
// the way.
(function () {
  "use strict";
  var S = window.Strata;
  S.kinds = S.kinds || {};
  window.strataReport = { ready: false, errors: S.errors };

  var KIND_TITLES = {
    compare: "allocators compared", stats: "a trace's allocations", tune: "allocator settings tuned",
    drag: "memory held after last use", diff: "two runs compared"
  };

  function readBundle() {
    var node = document.getElementById("strata-data");
    if (!node) throw new Error("the page holds no data element (#strata-data)");
    var text = node.textContent.trim();
    if (!text || text.charAt(0) !== "{") throw new Error("the page holds no data (the report was not filled in)");
    var data;
    try { data = JSON.parse(text); } catch (err) { throw new Error("the embedded data is not valid JSON: " + err.message); }
    if (!data || typeof data !== "object") throw new Error("the embedded data is not an object");
    if (data.schema && !/^strata-report-1$/.test(data.schema))
      throw new Error("the embedded data is " + data.schema + ", this page reads strata-report-1");
    if (!data.main || typeof data.main !== "object") throw new Error("the embedded data has no main document");
    data.files = data.files && typeof data.files === "object" ? data.files : {};
    return data;
  }

  function header(data) {
    var kind = data.kind;
    var title = data.title || ("Strata " + kind + ": " + (KIND_TITLES[kind] || ""));
    document.title = title;
    document.getElementById("title").textContent = title;
    var sub = [];
    if (data.folder) sub.push(data.folder);
    if (data.main && data.main.format) sub.push(data.main.format);
    if (data.strata_version) sub.push("strata " + data.strata_version);
    document.getElementById("subtitle").textContent = sub.join(" \u00b7 ");
    var foot = document.getElementById("foot");
    foot.textContent = "Drawn from the folder's JSON documents by `strata report`; charts by uPlot (MIT). " +
      "Every table sorts by a click on its header; every chart and table has a CSV button.";
  }

  var started = 0;
  function finish() {
    window.strataReport = { ready: true, errors: S.errors.slice(), ms: Math.round(performance.now() - started) };
    document.documentElement.setAttribute("data-ready", "true");
  }

  function run() {
    var verdict = document.getElementById("verdict");
    var content = document.getElementById("content");
    var noScript = document.getElementById("no-script");
    if (noScript) noScript.remove();
    var data;
    try {
      data = readBundle();
    } catch (err) {
      S.fail("data", err);
      verdict.appendChild(S.errorBox("Cannot draw this report: " + err.message));
      return;
    }
    S.data = data;
    document.documentElement.dataset.kind = data.kind || "unknown";
    try { header(data); } catch (err) { S.fail("header", err); }
    if (typeof window.uPlot !== "function") S.fail("charts", new Error("the charting library (uPlot) is not in the page"));
    var draw = S.kinds[data.kind];
    if (!draw) {
      var msg = S.fail("data", new Error("unknown report kind " + JSON.stringify(data.kind) +
        " (this page draws " + Object.keys(S.kinds).join(", ") + ")"));
      verdict.appendChild(S.errorBox(msg));
      return;
    }
    try {
      draw(data.main, verdict, content);
    } catch (err) {
      verdict.appendChild(S.errorBox("Could not draw this report: " + S.fail(data.kind, err)));
    }
    if (!verdict.querySelector("h2")) verdict.insertBefore(S.el("h2", {}, "Verdict"), verdict.firstChild);
  }

  function start() {
    started = performance.now();
    try { run(); } catch (err) { S.fail("page", err); }
    finish();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
