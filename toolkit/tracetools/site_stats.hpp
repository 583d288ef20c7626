// Figures by allocation site for a trace that carries sites (`strata stats --sites`, `strata
// compare --sites`): for each site, the objects it allocated, their bytes, and the bytes of
// them live at the trace's peak (the first event at which live bytes reached their maximum).
// computeStats fills a SiteStats when asked; SiteTally is the per-object bookkeeping it feeds.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "strata/trace/sites.hpp"

namespace strata::tracetools {

struct SiteFigures {
  std::uint64_t site = 0;             // the site id; 0: allocations whose site is unknown
  std::uint64_t allocations = 0;      // objects created (failed calls and reaps not counted)
  std::uint64_t bytes = 0;            // bytes they asked for
  std::uint64_t peakLiveBytes = 0;    // bytes of them live at the trace's peak
  std::uint64_t peakLiveObjects = 0;  // objects of them live at the trace's peak
};

// A loaded object as the trace names it (trace::ModuleInfo, owning its strings).
struct Module {
  std::uint64_t start = 0, end = 0, bias = 0;
  std::string path;
  std::string buildId;  // raw bytes; empty when unknown
};

struct SiteStats {
  bool present = false;                          // the trace carries sites (flag SITES)
  std::uint64_t peakEvent = 0;                   // 1-based index of the peak's event; 0: none
  std::vector<SiteFigures> bySite;               // index = site id; [0] = unknown site
  std::vector<std::vector<std::uint64_t>> frames;  // index = site id, innermost first
  std::vector<Module> modules;
};

// Per-object birth, death and site, kept in a vector indexed by the dense object id, so the
// figures at the peak can be worked out once the peak is known. Cost: 32 bytes an object.
class SiteTally {
 public:
  void born(std::uint64_t id, std::uint64_t site, std::uint64_t size, std::uint64_t event);
  void died(std::uint64_t id, std::uint64_t event);
  void peak(std::uint64_t event) { peakEvent_ = event; }
  // The figures, with the frames and modules the reader read.
  SiteStats finish(bool present, const trace::SiteTable<>& table) const;

 private:
  struct Object {
    std::uint64_t site = 0, size = 0, birth = 0, death = ~std::uint64_t{0};
  };
  std::vector<Object> objects_;
  std::uint64_t peakEvent_ = 0;
};

}  // namespace strata::tracetools
