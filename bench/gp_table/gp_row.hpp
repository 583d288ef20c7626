// One line of gp_table's table (gp_table.cpp): an allocator's medians on one workload, as
// text or CSV. Included once, by gp_table.cpp.
#pragma once
#include <cstddef>
#include <cstdio>
#include <string>

namespace gp {

constexpr double kMiB = 1024.0 * 1024.0;

double fragPercent(double held, double live) { return live > 0 ? (held / live - 1) * 100 : 0; }

// One line of the table: the medians of one allocator on one workload.
struct Row {
  std::string allocator, workload;
  bool exact;          // held is exact (a Strata heap) rather than sampled
  std::size_t runs;    // runs that succeeded
  int failed;          // runs that crashed or ran out of memory
  double ms = 0, heldBytes = 0, rssBytes = 0, liveBytes = 0;
};

// Prints a row as text or CSV. A sampled held of 0 means the C library could not say (no
// mallinfo2, or a sanitizer's allocator in its place): shown as n/a, not as 0.
void printRow(const Row& r, bool csv) {
  const bool heldKnown = r.exact || r.heldBytes > 0;
  if (csv) {
    char held[32] = "", heldFrag[32] = "";
    if (heldKnown) {
      std::snprintf(held, sizeof held, "%.0f", r.heldBytes);
      std::snprintf(heldFrag, sizeof heldFrag, "%.1f", fragPercent(r.heldBytes, r.liveBytes));
    }
    std::printf("%s,%s,%zu,%.3f,%s,%d,%.0f,%.0f,%s,%.1f,%d\n", r.allocator.c_str(),
                r.workload.c_str(), r.runs, r.ms, held, r.exact ? 1 : 0, r.rssBytes,
                r.liveBytes, heldFrag, fragPercent(r.rssBytes, r.liveBytes), r.failed);
    return;
  }
  if (r.runs == 0) {
    std::printf("%-18s %-13s   FAILED in all %d runs (crash or out of memory)\n",
                r.allocator.c_str(), r.workload.c_str(), r.failed);
    return;
  }
  char held[32], frag[32];
  if (heldKnown) {
    std::snprintf(held, sizeof held, "%s%8.2f", r.exact ? " " : "~", r.heldBytes / kMiB);
    std::snprintf(frag, sizeof frag, "%9.0f%%", fragPercent(r.heldBytes, r.liveBytes));
  } else {
    std::snprintf(held, sizeof held, "%9s", "n/a");
    std::snprintf(frag, sizeof frag, "%10s", "n/a");
  }
  std::printf("%-18s %-13s %9.1f %s %9.2f %9.2f %s %8.0f%%", r.allocator.c_str(),
              r.workload.c_str(), r.ms, held, r.rssBytes / kMiB, r.liveBytes / kMiB, frag,
              fragPercent(r.rssBytes, r.liveBytes));
  if (r.failed != 0) std::printf("  (%d runs failed)", r.failed);
  std::printf("\n");
}

}  // namespace gp
