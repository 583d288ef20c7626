// Finding the load bias of heaptrack's modules from their ELF symbols (heaptrack_modules.hpp).
#include "tracetools/heaptrack_modules.hpp"

#include <map>
#include <set>

#include "tracetools/elf_symbols.hpp"
#include "strata/platform/page.hpp"

namespace strata::tracetools {
namespace {

// A function symbol longer than this many pages says little about the bias; skipped.
constexpr std::uint64_t kMaxPagesPerSymbol = 16;

// The bias most samples agree on; false when no sample fits any symbol.
bool voteBias(const HeaptrackModuleEvidence& m, const ElfSymbols& elf, std::uint64_t page,
              std::uint64_t& bias) {
  std::map<std::uint64_t, std::uint64_t> votes;  // bias -> samples that fit it
  for (const HeaptrackModuleEvidence::Sample& s : m.samples) {
    std::set<std::uint64_t> fits;
    for (const std::string& fn : s.functions) {
      for (const auto& [start, end] : elf.rangesNamed(fn)) {
        // address - bias in [start, end), bias a multiple of the page size.
        if (s.address < start || end - start > kMaxPagesPerSymbol * page) continue;
        const std::uint64_t highest = (s.address - start) / page * page;
        const std::uint64_t lowestBias = s.address >= end ? s.address - end + 1 : 0;
        for (std::uint64_t b = highest;; b -= page) {
          if (b < lowestBias) break;
          fits.insert(b);
          if (b < page) break;
        }
      }
    }
    for (const std::uint64_t b : fits) ++votes[b];
  }
  std::uint64_t best = 0;
  for (const auto& [b, n] : votes)
    if (n > best) {
      best = n;
      bias = b;
    }
  return best != 0;
}

}  // namespace

std::vector<LocatedModule> locateModules(const std::vector<HeaptrackModuleEvidence>& modules,
                                         std::uint64_t pageSize,
                                         std::vector<std::string>& warnings) {
  if (pageSize == 0 || (pageSize & (pageSize - 1)) != 0) pageSize = platform::kPageSize;
  std::vector<LocatedModule> out;
  for (const HeaptrackModuleEvidence& m : modules) {
    if (m.low > m.high) continue;  // no instruction pointer in it
    const ElfSymbols elf(m.path);
    std::uint64_t bias = 0;
    if (!elf.ok()) {
      warnings.push_back(m.path + ": " + elf.error() +
                         " (its frames are left as addresses)");
      continue;
    }
    if (!voteBias(m, elf, pageSize, bias)) {
      warnings.push_back(m.path + (m.samples.empty()
                                       ? ": heaptrack named none of its functions"
                                       : ": none of the functions heaptrack named is in its symbols") +
                         ", so its load address is unknown (its frames are left as addresses)");
      continue;
    }
    out.push_back(LocatedModule{m.path, m.low, m.high + 1, bias, elf.buildId()});
  }
  return out;
}

}  // namespace strata::tracetools
