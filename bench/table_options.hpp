// The command line shared by the table-printing benchmarks:
//   [--quick] [--runs N] [--csv] [--workload NAME] [--allocator NAME] [--help]
// A bad argument prints the program's usage to stderr and exits with status 2.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>

namespace strata::bench {

struct TableOptions {
  bool quick = false;
  bool csv = false;
  int runs = 5;            // 3 with --quick unless --runs is given
  std::string workload;    // only this one, when set
  std::string allocator;   // only this one, when set
};

// What a program says about itself: its name, its usage line, its workloads, what it does.
struct TableProgram {
  const char* name;
  const char* usage;
  const char* workloads;
  const char* what;
  bool csv;  // whether --csv is accepted
};

[[noreturn]] inline void tableUsage(const TableProgram& p, const char* why) {
  std::fprintf(stderr, "%s: %s\nusage: %s\nworkloads: %s\n", p.name, why, p.usage, p.workloads);
  std::exit(2);
}

inline TableOptions parseTableOptions(const TableProgram& p, int argc, char** argv) {
  TableOptions o;
  bool runsGiven = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) tableUsage(p, ("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--csv" && p.csv) {
      o.csv = true;
    } else if (a == "--runs") {
      o.runs = std::atoi(value().c_str());
      runsGiven = true;
      if (o.runs < 1) tableUsage(p, "--runs must be at least 1");
    } else if (a == "--workload") {
      o.workload = value();
    } else if (a == "--allocator") {
      o.allocator = value();
    } else if (a == "--help" || a == "-h") {
      tableUsage(p, p.what);
    } else {
      tableUsage(p, ("unknown argument " + a).c_str());
    }
  }
  if (o.quick && !runsGiven) o.runs = 3;
  return o;
}

}  // namespace strata::bench
