// The terminal table of a diff (diff_model.hpp): the two runs side by side, the sites whose
// figures changed most, the allocators of result folders, notes, and the threshold's failures.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/format.hpp"
#include "diff/diff_model.hpp"

namespace strata::diff {
namespace {

using support::format;

// "1,234,567" with a sign when asked.
std::string count(std::int64_t v, bool sign) {
  std::string s = std::to_string(std::llabs(v));
  for (std::ptrdiff_t i = static_cast<std::ptrdiff_t>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<std::size_t>(i), ",");
  return (v < 0 ? "-" : sign && v > 0 ? "+" : "") + s;
}

std::string frameText(const Frame& f) {
  std::string where;
  if (!f.file.empty())
    where = f.file.substr(f.file.rfind('/') + 1) + ":" + std::to_string(f.line);
  else
    where = (f.module.empty() ? std::string() : f.module) +
            format("+0x%llx", static_cast<unsigned long long>(f.offset));
  return f.function.empty() ? where : f.function + " (" + where + ")";
}

std::string percentOf(double a, double b) {
  return a == 0 ? std::string() : format(" (%+.1f %%)", growthPercent(a, b));
}

std::string runsTable(const DiffResult& r) {
  std::string out = format("  %-14s %14s %14s  %s\n", "", "A", "B", "change");
  auto row = [&out](const char* name, std::string a, std::string b, std::string change) {
    out += format("  %-14s %14s %14s  %s\n", name, a.c_str(), b.c_str(), change.c_str());
  };
  const auto pa = static_cast<double>(r.a.peakLiveBytes),
             pb = static_cast<double>(r.b.peakLiveBytes);
  const auto ta = static_cast<double>(r.a.totalBytes), tb = static_cast<double>(r.b.totalBytes);
  row("peak live", bytesText(pa), bytesText(pb),
      changeText(static_cast<std::int64_t>(r.b.peakLiveBytes - r.a.peakLiveBytes)) +
          percentOf(pa, pb));
  row("allocated", bytesText(ta), bytesText(tb),
      changeText(static_cast<std::int64_t>(r.b.totalBytes - r.a.totalBytes)) + percentOf(ta, tb));
  row("allocations", count(static_cast<std::int64_t>(r.a.allocations), false),
      count(static_cast<std::int64_t>(r.b.allocations), false),
      count(static_cast<std::int64_t>(r.b.allocations - r.a.allocations), true) +
          percentOf(static_cast<double>(r.a.allocations), static_cast<double>(r.b.allocations)));
  return out;
}

std::string tracesTable(const DiffResult& r) {
  if (r.traces.size() < 2) return "";
  std::string out = "\npeak live bytes by trace\n";
  for (const TraceDiff& t : r.traces) {
    const auto a = static_cast<double>(t.a.peakLiveBytes),
               b = static_cast<double>(t.b.peakLiveBytes);
    const std::string change =
        changeText(static_cast<std::int64_t>(t.b.peakLiveBytes - t.a.peakLiveBytes)) +
        percentOf(a, b);
    out += format("  %-24s %12s %12s  %s\n", t.name.c_str(), bytesText(a).c_str(),
                  bytesText(b).c_str(), change.c_str());
  }
  return out;
}

std::string sitesTable(const DiffResult& r, std::size_t top) {
  if (!r.sitesCompared) return "";
  std::size_t changed = 0;
  for (const SiteDiff& s : r.sites)
    changed += s.peakLiveChange() != 0 || s.bytesChange() != 0 || s.allocationsChange() != 0;
  const std::size_t shown = changed < top ? changed : top;
  std::string out = format(
      "\ntop %zu of %zu sites that changed, by change in bytes live at the peak"
      " (%zu sites in all)\n",
      shown, changed, r.sites.size());
  if (shown == 0) return out + "  (none)\n";
  const bool traces = !r.sites.front().trace.empty();
  out += format("  %12s %12s %12s  %s\n", "live at peak", "allocated", "allocations",
                traces ? "trace: site (innermost frame first)" : "site (innermost frame first)");
  for (std::size_t i = 0; i < shown; ++i) {
    const SiteDiff& s = r.sites[i];
    out += format("  %12s %12s %12s  ", changeText(s.peakLiveChange()).c_str(),
                  changeText(s.bytesChange()).c_str(), count(s.allocationsChange(), true).c_str());
    out += (traces ? s.trace + ": " : std::string()) + siteText(s, 1) + "\n";
    if (s.stack.size() > 1)
      out += std::string(2 + 3 * 13 + 1, ' ') + "<- " + frameText(s.stack[1]) + "\n";
  }
  return out;
}

std::string allocatorsTable(const DiffResult& r) {
  if (r.allocators.empty()) return "";
  int w = 5;  // the trace column fits the longest name
  for (const AllocatorDiff& d : r.allocators) w = std::max(w, static_cast<int>(d.trace.size()));
  std::string out = "\nallocators (A, B)\n";
  out += format("  %-*s %-10s %10s %10s %8s  %7s %7s  %s\n", w, "trace", "allocator", "peak heap",
                "", "change", "frag %", "", "  time ms");
  for (const AllocatorDiff& d : r.allocators) {
    if (d.a.status != "ok" || d.b.status != "ok") {
      out += format("  %-*s %-10s %s | %s\n", w, d.trace.c_str(), d.allocator.c_str(),
                    d.a.status.c_str(), d.b.status.c_str());
      continue;
    }
    out += format("  %-*s %-10s %10s %10s %+7.1f%%  %7.1f %7.1f  %9.2f %9.2f\n", w, d.trace.c_str(),
                  d.allocator.c_str(), bytesText(d.a.peakHeapBytes).c_str(),
                  bytesText(d.b.peakHeapBytes).c_str(),
                  growthPercent(d.a.peakHeapBytes, d.b.peakHeapBytes), d.a.fragmentationPercent,
                  d.b.fragmentationPercent, d.a.timeMs, d.b.timeMs);
  }
  return out;
}

}  // namespace

std::string bytesText(double v) { return support::scaledBytes(v); }

std::string changeText(std::int64_t change) {
  if (change == 0) return "0";
  return (change > 0 ? "+" : "") + bytesText(static_cast<double>(change));
}

std::string siteText(const SiteDiff& s, std::size_t frames) {
  if (s.stack.empty()) return "(site unknown)";
  std::string out;
  for (std::size_t k = 0; k < frames && k < s.stack.size(); ++k)
    out += (k == 0 ? "" : " <- ") + frameText(s.stack[k]);
  return out;
}

std::string renderText(const DiffResult& r, std::size_t top) {
  std::string out = "A: " + r.a.path + (r.a.program.empty() ? "" : " (" + r.a.program + ")") + "\n";
  out += "B: " + r.b.path + (r.b.program.empty() ? "" : " (" + r.b.program + ")") + "\n\n";
  out += runsTable(r) + tracesTable(r) + sitesTable(r, top) + allocatorsTable(r);
  if (!r.notes.empty()) out += "\n";
  for (const std::string& n : r.notes) out += "note: " + n + "\n";
  if (r.thresholdPercent) {
    out += format("\n--fail-if-peak-grows %g%%: ", *r.thresholdPercent);
    out += r.failed ? format("FAILED (%zu)\n", r.failures.size()) : "passed\n";
    for (const std::string& f : r.failures) out += "  " + f + "\n";
  }
  return out;
}

}  // namespace strata::diff
