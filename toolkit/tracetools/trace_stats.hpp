// The statistics of a trace that the allocation papers tabulate (`strata stats`, and the
// histograms `strata compare` plots), computed in one streaming pass over the file.
// Contract between toolkit/tracetools (which implements it) and toolkit/cli (which calls it).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/json_writer.hpp"
#include "tracetools/site_stats.hpp"
#include "strata/trace/format.hpp"

namespace strata::tracetools {

// Counts in power-of-two buckets: counts[i] holds values in [2^i, 2^(i+1)), counts[0] also
// holds 0. Trailing empty buckets are dropped.
struct Log2Histogram {
  std::vector<std::uint64_t> counts;
};

struct TraceStats {
  std::uint64_t events = 0;
  std::array<std::uint64_t, trace::kOpCount> opCounts{};  // events of each op
  std::uint64_t threads = 0;
  std::uint64_t totalObjects = 0;       // objects created (reaps not counted)
  std::uint64_t maxLiveObjects = 0;
  std::uint64_t totalBytes = 0;         // bytes requested over the whole run
  std::uint64_t peakLiveBytes = 0;
  double averageObjectSize = 0;         // totalBytes / totalObjects
  double totalOverPeak = 0;             // totalBytes / peakLiveBytes
  std::uint64_t failedAllocations = 0;
  std::uint64_t neverFreed = 0;         // objects still live at the end
  std::uint64_t durationNs = 0;         // time of the last event
  bool complete = false;                // the trace ends with its trailer
  Log2Histogram sizes;                  // requested sizes of created objects
  Log2Histogram lifetimeBytes;          // lifetime of freed objects in bytes allocated meanwhile
  Log2Histogram lifetimeNs;             // lifetime of freed objects in nanoseconds
  // Added by toolkit/tracetools: frees (free, delete, reap_free, realloc's old object) of an
  // object that was not live (already freed, or a reap): legal in the format, counted here.
  std::uint64_t badFrees = 0;
  std::uint64_t reaps = 0;              // reaps created (not counted as objects)
  // Format version 2: large objects whose touched bytes the trace records (touch events),
  // the bytes they asked for, and the bytes the program touched of them.
  std::uint64_t touchedObjects = 0;
  std::uint64_t touchedObjectBytes = 0;
  std::uint64_t touchedBytes = 0;
  std::uint16_t formatVersion = 0;
  std::uint64_t pid = 0;                // from the program chunk; 0 when the trace has none
  std::uint64_t parentPid = 0;
  std::string program;                  // the program's path, empty when unknown
};

// The unit of a histogram's values, for bucket labels.
enum class HistogramUnit { Bytes, Nanoseconds };

// The lowercase name of an op ("malloc", "reap_clear"...), as `strata stats` prints it.
std::string_view opName(trace::Op op);

// A bucket's range as people read it: "0-1 B", "64-127 B", "1-2 KiB", "4-8 MiB" for bytes;
// "512-1023 ns", "1.02-2.05 us" for nanoseconds.
std::string bucketLabel(std::size_t bucket, HistogramUnit unit);

// Reads the trace at `path` and computes its statistics, and when `sites` is given, the
// figures by allocation site, their timeline and the live-bytes curve (site_stats.hpp; for a
// trace without sites, present == false and everything at site 0). Its memory follows the
// objects live at once, not the length of the trace; the figures by site add what is kept per
// site (SiteTally).
// Throws support::Error naming the file (and the byte offset, for a corrupt trace) when
// it cannot be read.
TraceStats computeStats(const std::string& path, SiteStats* sites = nullptr);

// The statistics as one JSON object (`strata stats --json`).
std::string toJson(const TraceStats& stats);
// The same object's members written into the object open in `w` (stats.json puts its own
// first).
void writeStatsJson(support::JsonWriter& w, const TraceStats& stats);

}  // namespace strata::tracetools
