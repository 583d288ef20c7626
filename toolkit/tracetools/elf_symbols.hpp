// The function symbols of an ELF file (.symtab and .dynsym) and its GNU build id, read
// straight from the file, for the symbolizer (symbolize.hpp). Only 64-bit little-endian ELF
// (what Strata records on); anything else, or a damaged file, reads as "no symbols" with a
// reason, never a crash: the path comes from a trace and may name any file.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace strata::tracetools {

class ElfSymbols {
 public:
  // Reads `path`. On failure ok() is false and error() says why ("cannot open: ...",
  // "not a 64-bit little-endian ELF file").
  explicit ElfSymbols(const std::string& path);

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // The NT_GNU_BUILD_ID note's bytes; empty when the file has none.
  const std::string& buildId() const { return buildId_; }
  // The demangled name of the function whose symbol covers virtual address `vaddr` (a symbol
  // of size 0 covers up to the next symbol); empty when none does.
  std::string functionAt(std::uint64_t vaddr) const;
  // The [start, end) virtual address ranges of the function symbols whose demangled name is
  // `name` (a symbol of size 0 covers one byte); empty when there is none.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> rangesNamed(const std::string& name) const;

 private:
  struct Symbol {
    std::uint64_t value = 0, size = 0;
    std::string name;
  };
  void read(const unsigned char* data, std::size_t size);

  std::vector<Symbol> symbols_;  // sorted by value
  std::string buildId_;
  std::string error_;
};

}  // namespace strata::tracetools
