// Matching sites between two runs (diff_sites.hpp).
#include "diff/diff_sites.hpp"

#include <cstdio>
#include <map>

#include "tracetools/symbolize.hpp"

namespace strata::diff {

std::string frameKey(const Frame& f) {
  if (!f.function.empty() || !f.file.empty())
    return f.function + "|" + f.file + "|" + std::to_string(f.line);
  char buf[40];
  std::snprintf(buf, sizeof buf, "+0x%llx", static_cast<unsigned long long>(f.offset));
  return f.module + buf;
}

namespace {

std::string stackKey(const std::vector<Frame>& stack) {
  std::string key;
  for (const Frame& f : stack) key += frameKey(f) + "\n";
  return key;
}

void addTo(SiteFigures& sum, const SiteFigures& f) {
  sum.bytes += f.bytes;
  sum.allocations += f.allocations;
  sum.peakLiveBytes += f.peakLiveBytes;
}

}  // namespace

std::vector<SiteDiff> matchSites(const std::vector<RunSite>& a, const std::vector<RunSite>& b,
                                 const std::string& trace) {
  std::vector<SiteDiff> out;
  std::map<std::string, std::size_t> index;  // stack key -> position in out
  auto place = [&](const RunSite& s) -> SiteDiff& {
    const auto [it, fresh] = index.emplace(stackKey(s.stack), out.size());
    if (fresh) out.push_back(SiteDiff{.trace = trace, .stack = s.stack, .a = {}, .b = {}});
    return out[it->second];
  };
  for (const RunSite& s : a) addTo(place(s).a, s.figures);
  for (const RunSite& s : b) addTo(place(s).b, s.figures);
  return out;
}

std::vector<RunSite> symbolizedSites(const tracetools::SiteStats& s, std::size_t depth,
                                     std::vector<std::string>& notes) {
  std::vector<RunSite> out;
  std::vector<std::uint64_t> addresses;
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // per site: first address, count
  for (const tracetools::SiteFigures& f : s.bySite) {
    if (f.allocations == 0 && f.bytes == 0 && f.peakLiveBytes == 0) continue;
    const auto& frames = f.site < s.frames.size() ? s.frames[f.site] : std::vector<std::uint64_t>{};
    const std::size_t n = frames.size() < depth ? frames.size() : depth;
    spans.emplace_back(addresses.size(), n);
    addresses.insert(addresses.end(), frames.begin(),
                     frames.begin() + static_cast<std::ptrdiff_t>(n));
    out.push_back(RunSite{.stack = {}, .figures = {f.bytes, f.allocations, f.peakLiveBytes}});
  }
  tracetools::Symbolizer symbolizer(s.modules);
  const std::vector<tracetools::SourceFrame> resolved = symbolizer.resolve(addresses);
  for (std::size_t i = 0; i < out.size(); ++i)
    for (std::size_t k = 0; k < spans[i].second; ++k) {
      const tracetools::SourceFrame& r = resolved[spans[i].first + k];
      out[i].stack.push_back(Frame{.function = r.function,
                                   .file = r.file,
                                   .module = r.module,
                                   .line = r.line,
                                   .offset = r.module.empty() ? r.address : r.offset});
    }
  notes.insert(notes.end(), symbolizer.warnings().begin(), symbolizer.warnings().end());
  return out;
}

}  // namespace strata::diff
