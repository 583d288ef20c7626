// `strata tune`'s command line (tune.cpp has the help that documents it).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tune_search.hpp"

namespace strata::cli::tune {

// Everything the command line said.
struct TuneOptions {
  std::vector<std::string> traces, command, allocators;
  Goal goal = Goal::Balanced;
  std::uint64_t budgetReplays = 500;
  double budgetSeconds = 0;
  std::string budgetText = "500 replays";
  unsigned repeat = 3;
  std::uint64_t seed = 1;
  unsigned threads = 0;
  bool compositions = false, live = true, plots = true, json = false;
  std::string spaces, outDir = "strata-tune";
};

// Parses the arguments into `o`; returns an error message for the usage, or empty.
std::string parseTuneOptions(std::span<char* const> args, TuneOptions& o);

}  // namespace strata::cli::tune
