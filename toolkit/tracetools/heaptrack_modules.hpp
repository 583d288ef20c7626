// Placing heaptrack's modules in memory (for the heaptrack importer, heaptrack.hpp). A
// heaptrack recording names the module of each instruction pointer (its file) and, where it
// could, the function, but not where the module was loaded: heaptrack_interpret consumes its
// load addresses. Strata's sites need each module's bias (ELF address = address - bias) to be
// symbolized again, so it is found from the module's own ELF symbols: an instruction pointer
// that heaptrack says is in function F lies inside F's symbol range once the bias is taken
// off, and the bias is a multiple of the page size. Each such pointer votes for the biases
// that fit it, and the bias with the most votes wins. This needs the module files, as
// symbolizing them later does: a module whose file is missing, or whose functions heaptrack
// did not name, is left out (its frames then show as bare addresses) with a warning.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace strata::tracetools {

// What the recording says about one module.
struct HeaptrackModuleEvidence {
  std::string path;
  std::uint64_t low = ~std::uint64_t{0};  // lowest and highest frame address seen in it
  std::uint64_t high = 0;
  // Instruction pointers (inside the call: a frame's address - 1) with the names heaptrack
  // gave them (function, then inlined callers).
  struct Sample {
    std::uint64_t address = 0;
    std::vector<std::string> functions;
  };
  std::vector<Sample> samples;  // at most kMaxSamples
  static constexpr std::size_t kMaxSamples = 64;
};

// A module placed: [start, end) covers the frames seen in it.
struct LocatedModule {
  std::string path;
  std::uint64_t start = 0, end = 0, bias = 0;
  std::string buildId;
};

// Places each module that can be placed; says why the others could not be in `warnings`.
std::vector<LocatedModule> locateModules(const std::vector<HeaptrackModuleEvidence>& modules,
                                         std::uint64_t pageSize,
                                         std::vector<std::string>& warnings);

}  // namespace strata::tracetools
