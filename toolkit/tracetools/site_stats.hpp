// Figures by allocation site for a trace that carries sites (`strata stats --sites`, `strata
// compare --sites`, the sites document): for each site, the objects it allocated, their bytes,
// the bytes of them live at the trace's peak (the first event at which live bytes reached
// their maximum), those never freed, its temporary allocations, and the bytes it held live at
// evenly spaced moments of the run; with the program's live bytes over the run.
// computeStats fills a SiteStats when asked; SiteTally is the bookkeeping by site it feeds.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tracetools/site_history.hpp"
#include "tracetools/site_timeline.hpp"
#include "strata/trace/sites.hpp"

namespace strata::tracetools {

struct SiteFigures {
  std::uint64_t site = 0;             // the site id; 0: allocations whose site is unknown
  std::uint64_t allocations = 0;      // objects created (failed calls and reaps not counted)
  std::uint64_t bytes = 0;            // bytes they asked for
  std::uint64_t peakLiveBytes = 0;    // bytes of them live at the trace's peak
  std::uint64_t peakLiveObjects = 0;  // objects of them live at the trace's peak
  std::uint64_t neverFreedBytes = 0;  // bytes of them still live at the trace's end
  std::uint64_t neverFreedObjects = 0;
  // Objects freed before the program's next allocation (heaptrack's "temporary"), and
  // their bytes.
  std::uint64_t temporaryAllocations = 0;
  std::uint64_t temporaryBytes = 0;
  std::uint64_t maxLiveBytes = 0;     // the largest of its bytes live at the timeline's moments
};

// Every site's bytes live at the same moments of the run.
struct SiteTimeline {
  std::vector<std::uint64_t> events;     // the moments: event indices (1-based), sorted
  std::vector<std::uint64_t> ns;         // and their timestamps
  std::vector<std::uint64_t> liveBytes;  // sites x events.size(), row = site id
  // The bytes site `site` held live at each moment.
  std::span<const std::uint64_t> site(std::uint64_t site) const {
    return {liveBytes.data() + site * events.size(), events.size()};
  }
};

// How many moments a timeline has: fewer for a trace of fewer events, one more when the
// peak's event is not one of them.
inline constexpr std::size_t kTimelineMoments = 200;

// A loaded object as the trace names it (trace::ModuleInfo, owning its strings).
struct Module {
  std::uint64_t start = 0, end = 0, bias = 0;
  std::string path;
  std::string buildId;  // raw bytes; empty when unknown
};

struct SiteStats {
  bool present = false;                          // the trace carries sites (flag SITES)
  std::uint64_t peakEvent = 0;                   // 1-based index of the peak's event; 0: none
  std::uint64_t peakNs = 0;                      // its timestamp
  std::vector<SiteFigures> bySite;               // index = site id; [0] = unknown site
  std::vector<std::vector<std::uint64_t>> frames;  // index = site id, innermost first
  std::vector<Module> modules;
  SiteTimeline timeline;  // one of its moments is the peak's event
  LiveCurve curve;        // the program's live bytes over the run
};

// The figures by site kept as the trace is read, with no record per object: the caller keeps
// each live object's site and size (computeStats keeps them in its table of what is live) and
// says when one is born and when one dies. Each site's bytes and objects live at the trace's
// peak are saved lazily (the first time the site changes after a new peak); its bytes live at
// the timeline's moments come from a SiteHistory; the curve and the clock of the moments are
// fed every event. Cost: about 100 bytes a site while reading, the history (at most 128 KiB
// a site, far less for a site that is seldom used), 1.6 KiB a site at the end (its timeline),
// and a few hundred KiB for the curve and the clock.
class SiteTally {
 public:
  // Object `id` created at site `site` with `size` bytes.
  void born(std::uint64_t id, std::uint64_t site, std::uint64_t size);
  // Live object `id`, born at `site` with `size` bytes, ended.
  void died(std::uint64_t id, std::uint64_t site, std::uint64_t size);
  // A new peak of the program's live bytes at this event.
  void peak(std::uint64_t event, std::uint64_t ns) {
    peakEvent_ = event;
    peakNs_ = ns;
    ++peaks_;
  }
  // After every event: the program's live bytes then, and the event's time.
  void tick(std::uint64_t event, std::uint64_t ns, std::uint64_t liveBytes) {
    curve_.add(event, ns, liveBytes);
    clock_.add(event, ns);
    history_.tick(event);
    events_ = event;
  }
  // The figures, with the frames and modules the reader read.
  SiteStats finish(bool present, const trace::SiteTable<>& table) const;

 private:
  // One site while the trace is read.
  struct Site {
    std::uint64_t allocations = 0, bytes = 0;
    std::uint64_t liveBytes = 0, liveObjects = 0;  // now
    std::uint64_t peakBytes = 0, peakObjects = 0;  // at the peak, when peakStamp == peaks_
    std::uint64_t peakStamp = 0;
    std::uint64_t temporaryAllocations = 0, temporaryBytes = 0;
  };
  Site& at(std::uint64_t site);
  void figures(SiteStats& s) const;
  void timeline(SiteStats& s) const;

  std::vector<Site> sites_;  // by site id as the events name them
  // The last object born, while it lives: freed now, it is temporary (no allocation since).
  std::uint64_t lastBorn_ = kNoLastBorn;
  static constexpr std::uint64_t kNoLastBorn = ~std::uint64_t{0};
  std::uint64_t peakEvent_ = 0, peakNs_ = 0, peaks_ = 0, events_ = 0;
  LiveCurveBuilder curve_;
  EventClock clock_;
  SiteHistory history_;
};

// Inline: called for every object born and freed.

// Site `site`, about to change: its bytes and objects live at the latest peak saved first
// when this is its first change since that peak (until then they are its live ones).
inline SiteTally::Site& SiteTally::at(std::uint64_t site) {
  if (site >= sites_.size()) sites_.resize(static_cast<std::size_t>(site) + 1);
  Site& s = sites_[site];
  if (s.peakStamp != peaks_) {
    s.peakBytes = s.liveBytes;
    s.peakObjects = s.liveObjects;
    s.peakStamp = peaks_;
  }
  return s;
}

inline void SiteTally::born(std::uint64_t id, std::uint64_t site, std::uint64_t size) {
  Site& s = at(site);
  ++s.allocations;
  s.bytes += size;
  s.liveBytes += size;
  ++s.liveObjects;
  history_.change(site, size);
  lastBorn_ = id;
}

inline void SiteTally::died(std::uint64_t id, std::uint64_t site, std::uint64_t size) {
  Site& s = at(site);
  s.liveBytes -= size;
  --s.liveObjects;
  history_.change(site, 0 - size);
  if (id != lastBorn_) return;
  // Nothing was allocated since this object: a temporary allocation.
  lastBorn_ = kNoLastBorn;
  ++s.temporaryAllocations;
  s.temporaryBytes += size;
}

}  // namespace strata::tracetools
