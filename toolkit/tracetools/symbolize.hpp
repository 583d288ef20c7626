// Symbolizer: turns the return addresses of a trace's sites into functions and source lines,
// with the modules the trace names (`strata stats --sites`, `strata compare --sites`). For an
// address inside module M, address - M.bias is the ELF virtual address; the function comes
// from the file's own symbol tables (elf_symbols.hpp) and the file, line and inlined function
// from `addr2line -f -C -i` (binutils), one run per module for all of its addresses. What
// cannot be known falls back to "module+0xoffset" or the bare address; a missing module, a
// changed file (another build id) or a missing addr2line is said once, in warnings(), and never
// fails the report.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tracetools/site_stats.hpp"

namespace strata::tracetools {

// What is known of one return address.
struct SourceFrame {
  std::uint64_t address = 0;
  std::string module;         // the module's file name (no directory); empty: in none
  std::uint64_t offset = 0;   // address - bias: the ELF virtual address
  std::string function;       // demangled; empty when unknown
  std::string file;           // source file (as the debug information names it); empty: unknown
  unsigned line = 0;
};

// "make_node (tree.c:12)", "make_node (libfoo.so+0x1234)", "libfoo.so+0x1234", "0x7f...".
std::string describe(const SourceFrame& f);

class Symbolizer {
 public:
  explicit Symbolizer(std::vector<Module> modules);

  // Resolves every address (return addresses, innermost first as sites keep them: the line is
  // that of the call, address - 1). Call once with all the addresses a report needs.
  std::vector<SourceFrame> resolve(const std::vector<std::uint64_t>& addresses);

  // "libfoo.so: cannot open: No such file or directory (shown as module+offset)", once each.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  // The module holding `address`: the last one read that covers it (a later dlopen may reuse
  // the range of an unloaded library); -1 when none.
  long moduleOf(std::uint64_t address) const;
  void addLines(const Module& m, std::vector<SourceFrame*>& frames);

  std::vector<Module> modules_;
  std::vector<std::string> warnings_;
};

}  // namespace strata::tracetools
