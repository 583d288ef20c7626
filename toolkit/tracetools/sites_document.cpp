// The sites document (sites_document.hpp): the listed sites chosen by their figures, the rest
// summed into "other", the listed stacks symbolized in one Symbolizer call and their frames
// deduplicated, then everything written as JSON (support::JsonWriter).
#include "support/files.hpp"
#include "tracetools/sites_document.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>

#include "support/error.hpp"
#include "support/json_writer.hpp"
#include "tracetools/symbolize.hpp"

namespace strata::tracetools {
namespace {

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

// The figures of a site (or of "other") as members of the object open.
void writeFigures(support::JsonWriter& w, const SiteFigures& f) {
  w.field("allocations", f.allocations).field("bytes", f.bytes);
  w.field("peak_live_bytes", f.peakLiveBytes).field("peak_live_objects", f.peakLiveObjects);
  w.field("never_freed_bytes", f.neverFreedBytes).field("never_freed_objects", f.neverFreedObjects);
  w.field("temporary_allocations", f.temporaryAllocations);
  w.field("temporary_bytes", f.temporaryBytes).field("max_live_bytes", f.maxLiveBytes);
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

void writeFrames(support::JsonWriter& w, const std::vector<SourceFrame>& frames) {
  w.array("frames");
  for (const SourceFrame& f : frames)
    w.object().field("function", f.function).field("file", f.file).field("line", f.line)
        .field("module", f.module).field("offset", f.offset).end();
  w.end();
}

void writeSites(support::JsonWriter& w, const SiteStats& s, std::span<const std::uint64_t> listed,
                const Stacks& stacks) {
  w.array("sites");
  for (std::size_t i = 0; i < listed.size(); ++i) {
    w.object().field("id", listed[i]).array("stack", stacks.of[i]);
    writeFigures(w, s.bySite[listed[i]]);
    w.end();
  }
  w.end();
}

void writeTimeline(support::JsonWriter& w, const SiteStats& s,
                   std::span<const std::uint64_t> listed, const OtherSites& other) {
  w.object("timeline").array("events", s.timeline.events).array("ns", s.timeline.ns);
  w.array("live_bytes");
  for (const std::uint64_t id : listed) w.array(s.timeline.site(id));
  w.end();
  if (other.sites != 0) w.array("other_live_bytes", other.liveBytes);
  w.end();
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
  support::JsonWriter w;
  w.object().field("format", "strata-sites-1").field("trace", tracePath);
  w.field("events", stats.events).field("duration_ns", stats.durationNs);
  w.field("peak_event", sites.peakEvent).field("peak_ns", sites.peakNs);
  w.field("peak_live_bytes", stats.peakLiveBytes).field("total_sites", allocatingSites(sites));
  w.field("listed_sites", listed.size());
  writeFrames(w, stacks.frames);
  writeSites(w, sites, listed, stacks);
  if (other.sites != 0) {
    w.object("other").field("sites", other.sites);
    writeFigures(w, other.figures);
    w.end();
  }
  writeTimeline(w, sites, listed, other);
  w.object("curve").array("events", sites.curve.events).array("ns", sites.curve.ns);
  w.array("live_bytes", sites.curve.liveBytes).end();
  return w.array("notes", stacks.notes).end().text();
}

void writeSitesDocument(const std::filesystem::path& file, const std::string& tracePath,
                        const TraceStats& stats, const SiteStats& sites) {
  support::writeFileAtomically(file.string(), sitesDocument(tracePath, stats, sites));
}

}  // namespace strata::tracetools
