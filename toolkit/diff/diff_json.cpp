// diff.json, format strata-diff-1 (diff_model.hpp, docs/toolkit/diff.md): the runs, the
// threshold's verdict, the sites (at most maxSites), the curves and the allocators.
#include <cmath>
#include <cstdio>
#include <string>

#include "diff/diff_model.hpp"
#include "support/json.hpp"

namespace strata::diff {
namespace {

using support::jsonString;

std::string num(double v) { return support::jsonNumber(v, 15); }

std::string num(std::uint64_t v) { return std::to_string(v); }

std::string strings(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i == 0 ? "" : ", ") + jsonString(v[i]);
  return out + "]";
}

std::string runJson(const RunSummary& s) {
  return "{\"path\": " + jsonString(s.path) + ", \"kind\": " + jsonString(s.kind) +
         ", \"program\": " + jsonString(s.program) +
         ", \"peak_live_bytes\": " + num(s.peakLiveBytes) +
         ", \"total_bytes\": " + num(s.totalBytes) + ", \"allocations\": " + num(s.allocations) +
         "}";
}

std::string figuresJson(const SiteFigures& f) {
  return "{\"bytes\": " + num(f.bytes) + ", \"allocations\": " + num(f.allocations) +
         ", \"peak_live_bytes\": " + num(f.peakLiveBytes) + "}";
}

std::string siteJson(const SiteDiff& s) {
  std::string out = "{\"stack\": [";
  for (std::size_t k = 0; k < s.stack.size(); ++k) {
    const Frame& f = s.stack[k];
    out += (k == 0 ? "" : ", ");
    out += "{\"function\": " + jsonString(f.function) + ", \"file\": " + jsonString(f.file) +
           ", \"line\": " + std::to_string(f.line) + ", \"module\": " + jsonString(f.module) +
           ", \"offset\": " + num(f.offset) + "}";
  }
  out += "], \"a\": " + figuresJson(s.a) + ", \"b\": " + figuresJson(s.b);
  if (!s.trace.empty()) out += ", \"trace\": " + jsonString(s.trace);
  return out + "}";
}

std::string numbers(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i == 0 ? "" : ",") + num(v[i]);
  return out + "]";
}

std::string curveJson(const Curve& c) {
  return "{\"label\": " + jsonString(c.label) + ", \"run\": " + jsonString(c.run) +
         ", \"x\": " + jsonString(c.x) + ",\n     \"xs\": " + numbers(c.xs) +
         ",\n     \"ys\": " + numbers(c.ys) + "}";
}

std::string sideJson(const AllocatorSide& s) {
  return "{\"peak_heap_bytes\": " + num(s.peakHeapBytes) +
         ", \"fragmentation_percent\": " + num(s.fragmentationPercent) +
         ", \"time_ms\": " + num(s.timeMs) + ", \"status\": " + jsonString(s.status) + "}";
}

std::string tracesJson(const std::vector<TraceDiff>& traces) {
  std::string out = "[";
  for (std::size_t i = 0; i < traces.size(); ++i)
    out += (i == 0 ? "\n    " : ",\n    ") + std::string("{\"name\": ") +
           jsonString(traces[i].name) + ", \"a\": " + runJson(traces[i].a) +
           ", \"b\": " + runJson(traces[i].b) + "}";
  return out + (traces.empty() ? "]" : "\n  ]");
}

// A list of objects, one a line.
template <class T, class F>
std::string list(const std::vector<T>& v, std::size_t max, F each) {
  std::string out = "[";
  const std::size_t n = v.size() < max ? v.size() : max;
  for (std::size_t i = 0; i < n; ++i) out += (i == 0 ? "\n    " : ",\n    ") + each(v[i]);
  return out + (n == 0 ? "]" : "\n  ]");
}

}  // namespace

std::string renderJson(const DiffResult& r, std::size_t maxSites) {
  std::string j = "{\n  \"format\": \"strata-diff-1\",\n";
  j += "  \"a\": " + runJson(r.a) + ",\n";
  j += "  \"b\": " + runJson(r.b) + ",\n";
  j += "  \"peak_growth_percent\": " + num(r.peakGrowthPercent) + ",\n";
  j += "  \"threshold_percent\": " + (r.thresholdPercent ? num(*r.thresholdPercent) : "null") +
       ",\n";
  j += "  \"failed\": " + std::string(r.failed ? "true" : "false") + ",\n";
  j += "  \"failures\": " + strings(r.failures) + ",\n";
  j += "  \"sites_compared\": " + std::string(r.sitesCompared ? "true" : "false") + ",\n";
  j += "  \"total_sites\": " + std::to_string(r.sites.size()) + ",\n";
  j += "  \"sites\": " + list(r.sites, maxSites, siteJson) + ",\n";
  j += "  \"traces\": " + tracesJson(r.traces) + ",\n";
  j += "  \"curves\": " + list(r.curves, r.curves.size(), curveJson) + ",\n";
  j += "  \"allocators\": " +
       list(r.allocators, r.allocators.size(),
            [](const AllocatorDiff& d) {
              return "{\"trace\": " + jsonString(d.trace) +
                     ", \"allocator\": " + jsonString(d.allocator) + ", \"a\": " + sideJson(d.a) +
                     ", \"b\": " + sideJson(d.b) + "}";
            }) +
       ",\n";
  j += "  \"notes\": " + strings(r.notes) + "\n}\n";
  return j;
}

}  // namespace strata::diff
