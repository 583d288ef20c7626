// diff.json, format strata-diff-1 (diff_model.hpp, docs/toolkit/diff.md): the runs, the
// threshold's verdict, the sites (at most maxSites), the curves and the allocators.
#include <algorithm>
#include <string>

#include "diff/diff_model.hpp"
#include "support/json_writer.hpp"

namespace strata::diff {
namespace {

using support::JsonWriter;

// The significant digits of the document's doubles.
constexpr int kDigits = 15;

void writeRun(JsonWriter& w, const char* key, const RunSummary& s) {
  w.object(key).field("path", s.path).field("kind", s.kind).field("program", s.program);
  w.field("peak_live_bytes", s.peakLiveBytes).field("total_bytes", s.totalBytes);
  w.field("allocations", s.allocations).end();
}

void writeFigures(JsonWriter& w, const char* key, const SiteFigures& f) {
  w.object(key).field("bytes", f.bytes).field("allocations", f.allocations);
  w.field("peak_live_bytes", f.peakLiveBytes).end();
}

void writeSite(JsonWriter& w, const SiteDiff& s) {
  w.object().array("stack");
  for (const Frame& f : s.stack)
    w.object().field("function", f.function).field("file", f.file).field("line", f.line)
        .field("module", f.module).field("offset", f.offset).end();
  w.end();
  writeFigures(w, "a", s.a);
  writeFigures(w, "b", s.b);
  if (!s.trace.empty()) w.field("trace", s.trace);
  w.end();
}

void writeCurve(JsonWriter& w, const Curve& c) {
  w.object().field("label", c.label).field("run", c.run).field("x", c.x);
  w.array("xs", c.xs).array("ys", c.ys).end();
}

void writeSide(JsonWriter& w, const char* key, const AllocatorSide& s) {
  w.object(key).field("peak_heap_bytes", s.peakHeapBytes);
  w.field("fragmentation_percent", s.fragmentationPercent).field("time_ms", s.timeMs);
  w.field("status", s.status).end();
}

void writeAllocator(JsonWriter& w, const AllocatorDiff& d) {
  w.object().field("trace", d.trace).field("allocator", d.allocator);
  writeSide(w, "a", d.a);
  writeSide(w, "b", d.b);
  w.end();
}

void writeTrace(JsonWriter& w, const TraceDiff& t) {
  w.object().field("name", t.name);
  writeRun(w, "a", t.a);
  writeRun(w, "b", t.b);
  w.end();
}

// The member `key`: an array of the first `max` of `v`, each written by `each`.
template <class T, class F>
void writeList(JsonWriter& w, const char* key, const std::vector<T>& v, std::size_t max, F each) {
  w.array(key);
  for (std::size_t i = 0; i < std::min(max, v.size()); ++i) each(w, v[i]);
  w.end();
}

}  // namespace

std::string renderJson(const DiffResult& r, std::size_t maxSites) {
  JsonWriter w(kDigits);
  w.object().field("format", "strata-diff-1");
  writeRun(w, "a", r.a);
  writeRun(w, "b", r.b);
  w.field("peak_growth_percent", r.peakGrowthPercent);
  w.field("threshold_percent", r.thresholdPercent).field("failed", r.failed);
  w.array("failures", r.failures).field("sites_compared", r.sitesCompared);
  w.field("total_sites", r.sites.size());
  writeList(w, "sites", r.sites, maxSites, writeSite);
  writeList(w, "traces", r.traces, r.traces.size(), writeTrace);
  writeList(w, "curves", r.curves, r.curves.size(), writeCurve);
  writeList(w, "allocators", r.allocators, r.allocators.size(), writeAllocator);
  return w.array("notes", r.notes).end().text();
}

}  // namespace strata::diff
