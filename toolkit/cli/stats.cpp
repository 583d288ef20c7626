// `strata stats FILE [--json] [--sites [--top N] [--out DIR]]`: the statistics of a trace the
// allocation papers tabulate (total and live objects, sizes, bytes, total/peak, ops, threads)
// and its size and lifetime histograms, as a readable table or one JSON object; with --sites,
// the top allocation sites, and a result folder (stats.json, sites.json, report.html).
// The figures come from tracetools::computeStats, the site tables from formatSiteReport, the
// sites document from writeSitesDocument, the page from report::writeReport.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "support/format.hpp"
#include "support/files.hpp"
#include "cli/command.hpp"
#include "support/error.hpp"
#include "compare/compare_format.hpp"
#include "support/json_writer.hpp"
#include "support/options.hpp"
#include "report/report_writer.hpp"
#include "tracetools/site_report.hpp"
#include "tracetools/sites_document.hpp"
#include "tracetools/trace_stats.hpp"

namespace strata::cli {

namespace reportfmt = compare::reportfmt;
namespace {

namespace tt = strata::tracetools;

constexpr std::string_view kAbout =
    "usage: strata stats FILE [--json] [--sites [--top N] [--out DIR]]\n"
    "\n"
    "Reads the trace FILE (from `strata record`, `strata generate` or `strata import`) and\n"
    "prints what the allocation papers tabulate: total objects, maximum objects live, average\n"
    "object size, total bytes allocated, peak live bytes, total/peak, operations by kind,\n"
    "threads, failed allocations and objects never freed; then a histogram of object sizes and\n"
    "two of object lifetimes, in bytes allocated between the object's birth and death (the\n"
    "fragmentation study's clock) and in nanoseconds. Buckets are powers of two.\n"
    "A realloc ends the old object and creates a new one; reap_clear / reap_destroy free every\n"
    "object of the reap and of the reaps under it. Reaps are not counted as objects.\n"
    "\n"
    "FILE may be - for standard input.\n"
    "\n";

constexpr std::string_view kNotes =
    "  --sites --json  the same tables as one JSON object: per table its order and sites,\n"
    "           each with its figures and frames (address, module, offset, function, file,\n"
    "           line)\n"
    "\n"
    "With --sites, the result folder DIR gets (docs/toolkit/json.md; stderr says where):\n"
    R"(  stats.json   the statistics as --json prints them, with "format": "strata-stats-1",)"
    "\n"
    "               the trace's path and \"sites_file\"\n"
    "  sites.json   the sites document (strata-sites-1): the top 500 sites by each of bytes,\n"
    "               allocations, bytes live at the peak, bytes never freed, temporary\n"
    "               allocations (freed before the next allocation) and largest live at a\n"
    "               moment, with their symbolized stacks; the others summed as \"other\"; the\n"
    "               bytes each listed site held live at 200 moments of the run (the peak one\n"
    "               of them); the program's live bytes over the run\n"
    "  report.html  one offline page drawn from them (`strata report DIR` draws it again)\n"
    "\n"
    "Exit status: 0; 1 when FILE cannot be read or is not a valid trace (the message names the\n"
    "byte offset) or the result folder cannot be written; 2 for a wrong invocation.\n"
    "\n"
    "example: strata generate web-proxy -o proxy.trace && strata stats proxy.trace\n";

// What the command line said.
struct StatsOptions {
  bool json = false, sites = false, topGiven = false;
  std::size_t top = 10;
  std::string out;  // --out; empty: not given
};

std::vector<support::Option> optionTable(StatsOptions& o) {
  return {
      {.name = "--json",
       .help = "print one JSON object instead (histograms as arrays of counts: element i\n"
               "counts values in [2^i, 2^(i+1)), element 0 also counts 0)",
       .bind = o.json},
      {.name = "--sites",
       .help = "for a trace that carries allocation sites, print instead the\n"
               "top sites by bytes allocated, by bytes live at the trace's peak (the first\n"
               "moment live bytes reached their maximum) and by allocations; each site's\n"
               "frames, innermost first, as function (file:line) from the modules' symbol\n"
               "tables and debug information (addr2line), else module+offset; and write\n"
               "the result folder (--out, below)",
       .bind = o.sites},
      {.name = "--top", .value = "N", .help = "sites in each table (default 10)",
       .bind = [&o](const std::string& v) {
         const auto n = support::parseUnsigned(v);
         if (!n || *n == 0 || *n > 100000) throw support::UsageError("--top needs a count from 1 to 100000");
         o.top = static_cast<std::size_t>(*n);
         o.topGiven = true;
       },
       .needs = "a count of sites"},
      {.name = "--out", .value = "DIR",
       .help = "with --sites: the result folder to write (default strata-stats)",
       .bind = o.out, .needs = "a folder"},
  };
}

const std::string kHelp = [] {
  StatsOptions unused;
  return std::string(kAbout) + support::formatOptions(optionTable(unused), 11) + std::string(kNotes);
}();

using reportfmt::grouped;  // "1,234,567", as compare prints counts

// "48.0 MiB (50,331,648 B)": a byte count in binary units, with the exact figure.
std::string bytes(std::uint64_t v) { return support::scaledBytesExact(v); }

// One histogram as text bars: range, count, percentage, and a bar scaled to the largest
// bucket, from the first non-empty bucket to the last.
void printHistogram(const char* title, const tt::Log2Histogram& h, tt::HistogramUnit unit) {
  std::printf("\n%s\n", title);
  std::uint64_t total = 0, largest = 0;
  for (const std::uint64_t c : h.counts) {
    total += c;
    if (c > largest) largest = c;
  }
  if (total == 0) {
    std::puts("  (none)");
    return;
  }
  constexpr int kBarWidth = 40;
  std::size_t first = 0;  // leading empty buckets are left out
  while (h.counts[first] == 0) ++first;
  for (std::size_t i = first; i < h.counts.size(); ++i) {
    const std::uint64_t c = h.counts[i];
    const int bar = c == 0 ? 0
                           : static_cast<int>(1 + (c * (kBarWidth - 1)) / largest);
    std::printf("  %-20s %14s %6.2f%%  %.*s\n", tt::bucketLabel(i, unit).c_str(), grouped(c).c_str(),
                100.0 * static_cast<double>(c) / static_cast<double>(total), bar,
                "########################################");
  }
}

// The readable table.
void printTable(const std::string& path, const tt::TraceStats& s) {
  std::printf("trace %s%s\n\n", path.c_str(),
              s.complete ? "" : " (no trailer: the recorded program did not exit cleanly)");
  auto row = [](const char* name, const std::string& value) {
    std::printf("  %-26s %s\n", name, value.c_str());
  };
  char buf[64];
  if (s.pid != 0) {
    std::string who = s.program;
    who += " (pid ";
    who += std::to_string(s.pid);
    if (s.parentPid != 0) {
      who += ", started by ";
      who += std::to_string(s.parentPid);
    }
    who += ')';
    row("program", who);
  }
  row("format version", std::to_string(s.formatVersion));
  row("events", grouped(s.events));
  row("threads", grouped(s.threads));
  std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(s.durationNs) / 1e6);
  row("duration", buf);
  row("total objects", grouped(s.totalObjects));
  row("max live objects", grouped(s.maxLiveObjects));
  std::snprintf(buf, sizeof buf, "%.1f B", s.averageObjectSize);
  row("average object size", buf);
  row("total bytes allocated", bytes(s.totalBytes));
  row("peak live bytes", bytes(s.peakLiveBytes));
  std::snprintf(buf, sizeof buf, "%.2f", s.totalOverPeak);
  row("total / peak", buf);
  row("failed allocations", grouped(s.failedAllocations));
  row("never freed", grouped(s.neverFreed));
  if (s.badFrees != 0) row("frees of non-live objects", grouped(s.badFrees));
  if (s.reaps != 0) row("reaps", grouped(s.reaps));
  if (s.touchedObjects != 0) {
    std::snprintf(buf, sizeof buf, "%s of %s (%.1f %%)", grouped(s.touchedBytes).c_str(),
                  grouped(s.touchedObjectBytes).c_str(),
                  100.0 * static_cast<double>(s.touchedBytes) /
                      static_cast<double>(s.touchedObjectBytes == 0 ? 1 : s.touchedObjectBytes));
    row("large objects measured", grouped(s.touchedObjects));
    row("  bytes they touched", buf);
  }
  std::puts("\noperations");
  for (unsigned i = 0; i < trace::kOpCount; ++i) {
    if (s.opCounts[i] == 0) continue;
    std::printf("  %-26.*s %s\n", static_cast<int>(tt::opName(static_cast<trace::Op>(i)).size()),
                tt::opName(static_cast<trace::Op>(i)).data(), grouped(s.opCounts[i]).c_str());
  }
  printHistogram("object sizes (requested bytes)", s.sizes, tt::HistogramUnit::Bytes);
  printHistogram("object lifetimes (bytes allocated between birth and death)", s.lifetimeBytes,
                 tt::HistogramUnit::Bytes);
  printHistogram("object lifetimes (time)", s.lifetimeNs, tt::HistogramUnit::Nanoseconds);
}

// The result folder of --sites: stats.json and sites.json, then report.html drawn from them.
void writeResultFolder(const std::string& dir, const std::string& trace,
                       const tt::TraceStats& stats, const tt::SiteStats& sites) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw support::Error("cannot create the result folder " + dir + ": " + ec.message());
  const fs::path statsFile = fs::path(dir) / "stats.json", sitesFile = fs::path(dir) / "sites.json";
  tt::writeSitesDocument(sitesFile, trace, stats, sites);
  // The format, the trace and the file it names go first, then the statistics.
  support::JsonWriter w;
  w.object().field("format", "strata-stats-1").field("trace", trace);
  w.field("sites_file", "sites.json");
  tt::writeStatsJson(w, stats);
  support::writeFileAtomically(statsFile.string(), w.end().text());
  std::fprintf(stderr, "strata stats: wrote %s and %s\n", statsFile.c_str(), sitesFile.c_str());
  const fs::path page = report::writeReport(dir);
  std::fprintf(stderr, "strata stats: wrote %s\n", page.c_str());
}

// Parses the arguments, computes the statistics and prints them.
int runStats(std::span<char* const> args) {
  StatsOptions o;
  const support::Operands parsed = support::parseOptions(args, optionTable(o));
  if (parsed.dashDash) throw support::UsageError("unexpected '--' (stats takes a trace FILE)");
  if (o.topGiven && !o.sites) throw support::UsageError("--top goes with --sites");
  if (!o.out.empty() && !o.sites) throw support::UsageError("--out goes with --sites");
  if (parsed.operands.size() > 1)
    throw support::UsageError("give one trace FILE (got '" + parsed.operands[0] + "' and '" +
                              parsed.operands[1] + "')");
  std::string path = parsed.operands.empty() ? std::string() : parsed.operands[0];
  if (path.empty()) throw support::UsageError("missing the trace FILE");
  const std::string named = path;  // as the result folder names it
  const bool json = o.json, sites = o.sites;
  const std::size_t top = o.top;
  if (path == "-") path = "/dev/stdin";
  tt::SiteStats siteStats;
  const tt::TraceStats stats = tt::computeStats(path, sites ? &siteStats : nullptr);
  if (sites) {
    if (!siteStats.present) throw support::Error(path + " carries no allocation sites");
    static constexpr tt::SiteOrder kOrders[] = {tt::SiteOrder::Bytes, tt::SiteOrder::PeakLive,
                                                tt::SiteOrder::Allocations};
    if (json) {
      support::JsonWriter w;
      w.object().field("trace", path).field("total_bytes", stats.totalBytes);
      w.field("peak_live_bytes", stats.peakLiveBytes).object("sites");
      tt::writeSiteReportJson(w, siteStats, top, kOrders);
      std::fputs(w.end().end().text().c_str(), stdout);
    } else {
      std::printf("trace %s: %s allocated, peak live %s\n\n", path.c_str(),
                  bytes(stats.totalBytes).c_str(), bytes(stats.peakLiveBytes).c_str());
      std::fputs(tt::formatSiteReport(siteStats, top, kOrders).c_str(), stdout);
    }
    std::fflush(stdout);
    writeResultFolder(o.out.empty() ? "strata-stats" : o.out, named, stats, siteStats);
    return 0;
  }
  if (json) std::fputs(tt::toJson(stats).c_str(), stdout);
  else printTable(path, stats);
  return 0;
}

}  // namespace

const Command kStatsCommand{"stats", "statistics of a trace: objects, bytes, sizes, lifetimes",
                            kHelp, &runStats};

}  // namespace strata::cli
