// The sites document (sites_document.hpp): the listed sites chosen by their figures, the rest
// summed into "other", the listed stacks symbolized in one Symbolizer call and their frames
// deduplicated, then everything written as JSON.
#include "support/files.hpp"
#include "tracetools/sites_document.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>

#include "support/error.hpp"
#include "support/json.hpp"
#include "tracetools/symbolize.hpp"

namespace strata::tracetools {
namespace {

using support::jsonString;

// The figures a site can be listed for.
constexpr std::uint64_t SiteFigures::*kRanked[] = {
    &SiteFigures::bytes,           &SiteFigures::allocations,
    &SiteFigures::peakLiveBytes,   &SiteFigures::neverFreedBytes,
    &SiteFigures::temporaryAllocations, &SiteFigures::maxLiveBytes};

// The ids of the `n` sites largest by `figure` (0s left out; ties: the lower id).
std::vector<std::uint64_t> topBy(const SiteStats& s, std::uint64_t SiteFigures::*figure,
                                 std::size_t n) {
  std::vector<std::uint64_t> ids;
  for (const SiteFigures& f : s.bySite)
    if (f.*figure != 0) ids.push_back(f.site);
  auto larger = [&s, figure](std::uint64_t a, std::uint64_t b) {
    const std::uint64_t x = s.bySite[a].*figure, y = s.bySite[b].*figure;
    return x != y ? x > y : a < b;
  };
  n = std::min(n, ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(), larger);
  ids.resize(n);
  return ids;
}

void appendUint(std::string& out, std::uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// `"name": [v, ...]`.
void appendArray(std::string& out, const char* name, std::span<const std::uint64_t> values) {
  out += '"';
  out += name;
  out += "\": [";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) out += ", ";
    appendUint(out, values[i]);
  }
  out += ']';
}

// The figures of a site (or of "other") as `"allocations": N, ...`.
void appendFigures(std::string& out, const SiteFigures& f) {
  const std::pair<const char*, std::uint64_t> fields[] = {
      {"allocations", f.allocations},           {"bytes", f.bytes},
      {"peak_live_bytes", f.peakLiveBytes},      {"peak_live_objects", f.peakLiveObjects},
      {"never_freed_bytes", f.neverFreedBytes},  {"never_freed_objects", f.neverFreedObjects},
      {"temporary_allocations", f.temporaryAllocations},
      {"temporary_bytes", f.temporaryBytes},     {"max_live_bytes", f.maxLiveBytes}};
  for (std::size_t i = 0; i < std::size(fields); ++i) {
    out += i == 0 ? "\"" : ", \"";
    out += fields[i].first;
    out += "\": ";
    appendUint(out, fields[i].second);
  }
}

// The listed sites' stacks as indices into one list of distinct symbolized frames.
struct Stacks {
  std::vector<SourceFrame> frames;            // distinct by what the document says of them
  std::vector<std::vector<std::size_t>> of;   // per listed site, innermost first
  std::vector<std::string> notes;             // the symbolizer's warnings
};

Stacks symbolizedStacks(const SiteStats& s, std::span<const std::uint64_t> listed) {
  std::vector<std::uint64_t> addresses;
  for (const std::uint64_t id : listed)
    addresses.insert(addresses.end(), s.frames[id].begin(), s.frames[id].end());
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  Symbolizer symbolizer(s.modules);
  const std::vector<SourceFrame> resolved = symbolizer.resolve(addresses);
  Stacks st;
  st.notes = symbolizer.warnings();
  // Each address's frame index; frames equal in every field the document shows are one.
  using Key = std::tuple<std::string, std::uint64_t, std::string, std::string, unsigned>;
  std::map<Key, std::size_t> index;
  std::vector<std::size_t> frameOf(addresses.size());
  for (std::size_t i = 0; i < resolved.size(); ++i) {
    SourceFrame f = resolved[i];
    if (f.module.empty()) f.offset = f.address;  // in no module: the address says which
    const auto [it, fresh] =
        index.try_emplace(Key{f.module, f.offset, f.function, f.file, f.line}, st.frames.size());
    if (fresh) st.frames.push_back(std::move(f));
    frameOf[i] = it->second;
  }
  for (const std::uint64_t id : listed) {
    std::vector<std::size_t>& stack = st.of.emplace_back();
    for (const std::uint64_t a : s.frames[id]) {
      const auto at = std::lower_bound(addresses.begin(), addresses.end(), a);
      stack.push_back(frameOf[static_cast<std::size_t>(at - addresses.begin())]);
    }
  }
  return st;
}

void appendFrames(std::string& out, const std::vector<SourceFrame>& frames) {
  out += "\"frames\": [";
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const SourceFrame& f = frames[i];
    out += i == 0 ? "\n  " : ",\n  ";
    out += "{\"function\": " + jsonString(f.function) + ", \"file\": " + jsonString(f.file) +
           ", \"line\": ";
    appendUint(out, f.line);
    out += ", \"module\": " + jsonString(f.module) + ", \"offset\": ";
    appendUint(out, f.offset);
    out += '}';
  }
  out += "]";
}

void appendSites(std::string& out, const SiteStats& s, std::span<const std::uint64_t> listed,
                 const Stacks& stacks) {
  out += "\"sites\": [";
  for (std::size_t i = 0; i < listed.size(); ++i) {
    out += i == 0 ? "\n  {\"id\": " : ",\n  {\"id\": ";
    appendUint(out, listed[i]);
    out += ", \"stack\": [";
    for (std::size_t k = 0; k < stacks.of[i].size(); ++k) {
      if (k != 0) out += ", ";
      appendUint(out, stacks.of[i][k]);
    }
    out += "], ";
    appendFigures(out, s.bySite[listed[i]]);
    out += '}';
  }
  out += "]";
}

void appendTimeline(std::string& out, const SiteStats& s, std::span<const std::uint64_t> listed,
                    const OtherSites& other) {
  out += "\"timeline\": {";
  appendArray(out, "events", s.timeline.events);
  out += ", ";
  appendArray(out, "ns", s.timeline.ns);
  out += ", \"live_bytes\": [";
  for (std::size_t i = 0; i < listed.size(); ++i) {
    out += i == 0 ? "\n  [" : ",\n  [";
    const auto row = s.timeline.site(listed[i]);
    for (std::size_t j = 0; j < row.size(); ++j) {
      if (j != 0) out += ", ";
      appendUint(out, row[j]);
    }
    out += ']';
  }
  out += "]";
  if (other.sites != 0) {
    out += ",\n  ";
    appendArray(out, "other_live_bytes", other.liveBytes);
  }
  out += "}";
}

}  // namespace

std::vector<std::uint64_t> listedSites(const SiteStats& s, std::size_t perFigure) {
  std::vector<bool> chosen(s.bySite.size(), false);
  for (const auto figure : kRanked)
    for (const std::uint64_t id : topBy(s, figure, perFigure)) chosen[id] = true;
  // Each figure's total over every site: the denominators of the shares.
  std::uint64_t totals[std::size(kRanked)] = {};
  for (const SiteFigures& f : s.bySite)
    for (std::size_t k = 0; k < std::size(kRanked); ++k) totals[k] += f.*kRanked[k];
  std::vector<std::pair<double, std::uint64_t>> ranked;  // (largest share, id)
  for (std::uint64_t id = 0; id < chosen.size(); ++id) {
    if (!chosen[id]) continue;
    double share = 0;
    for (std::size_t k = 0; k < std::size(kRanked); ++k)
      if (totals[k] != 0)
        share = std::max(share, static_cast<double>(s.bySite[id].*kRanked[k]) /
                                    static_cast<double>(totals[k]));
    ranked.emplace_back(share, id);
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::uint64_t> ids;
  for (const auto& r : ranked) ids.push_back(r.second);
  return ids;
}

OtherSites otherSites(const SiteStats& s, std::span<const std::uint64_t> listed) {
  std::vector<bool> isListed(s.bySite.size(), false);
  for (const std::uint64_t id : listed) isListed[id] = true;
  OtherSites o;
  o.liveBytes.assign(s.timeline.events.size(), 0);
  for (const SiteFigures& f : s.bySite) {
    if (isListed[f.site] || f.allocations == 0) continue;
    ++o.sites;
    SiteFigures& sum = o.figures;
    sum.allocations += f.allocations;
    sum.bytes += f.bytes;
    sum.peakLiveBytes += f.peakLiveBytes;
    sum.peakLiveObjects += f.peakLiveObjects;
    sum.neverFreedBytes += f.neverFreedBytes;
    sum.neverFreedObjects += f.neverFreedObjects;
    sum.temporaryAllocations += f.temporaryAllocations;
    sum.temporaryBytes += f.temporaryBytes;
    const auto row = s.timeline.site(f.site);
    for (std::size_t j = 0; j < row.size(); ++j) o.liveBytes[j] += row[j];
  }
  for (const std::uint64_t v : o.liveBytes) o.figures.maxLiveBytes = std::max(o.figures.maxLiveBytes, v);
  return o;
}

std::uint64_t allocatingSites(const SiteStats& s) {
  return static_cast<std::uint64_t>(std::count_if(
      s.bySite.begin(), s.bySite.end(), [](const SiteFigures& f) { return f.allocations != 0; }));
}

std::string sitesDocument(const std::string& tracePath, const TraceStats& stats,
                          const SiteStats& sites, std::size_t perFigure) {
  const std::vector<std::uint64_t> listed = listedSites(sites, perFigure);
  const OtherSites other = otherSites(sites, listed);
  const Stacks stacks = symbolizedStacks(sites, listed);
  std::string out = "{\"format\": \"strata-sites-1\", \"trace\": " + jsonString(tracePath);
  const std::pair<const char*, std::uint64_t> head[] = {
      {"events", stats.events},           {"duration_ns", stats.durationNs},
      {"peak_event", sites.peakEvent},    {"peak_ns", sites.peakNs},
      {"peak_live_bytes", stats.peakLiveBytes},
      {"total_sites", allocatingSites(sites)}, {"listed_sites", listed.size()}};
  for (const auto& [name, value] : head) {
    out += std::string(", \"") + name + "\": ";
    appendUint(out, value);
  }
  out += ",\n";
  appendFrames(out, stacks.frames);
  out += ",\n";
  appendSites(out, sites, listed, stacks);
  if (other.sites != 0) {
    out += ",\n\"other\": {\"sites\": ";
    appendUint(out, other.sites);
    out += ", ";
    appendFigures(out, other.figures);
    out += '}';
  }
  out += ",\n";
  appendTimeline(out, sites, listed, other);
  out += ",\n\"curve\": {";
  appendArray(out, "events", sites.curve.events);
  out += ", ";
  appendArray(out, "ns", sites.curve.ns);
  out += ", ";
  appendArray(out, "live_bytes", sites.curve.liveBytes);
  out += "},\n\"notes\": [";
  for (std::size_t i = 0; i < stacks.notes.size(); ++i)
    out += (i == 0 ? "" : ", ") + jsonString(stacks.notes[i]);
  out += "]}\n";
  return out;
}

void writeSitesDocument(const std::filesystem::path& file, const std::string& tracePath,
                        const TraceStats& stats, const SiteStats& sites) {
  support::writeFileAtomically(file.string(), sitesDocument(tracePath, stats, sites));
}

}  // namespace strata::tracetools
