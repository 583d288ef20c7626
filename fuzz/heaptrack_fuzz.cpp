// libFuzzer target: the heaptrack importer (`strata import --from heaptrack`) on arbitrary
// bytes, plain or zstd or gzip. It either imports or throws std::runtime_error saying where;
// it must never crash or hang. The trace it writes goes to a memfd; a successful import is
// read back and must be valid.
#include <cstddef>
#include <cstdint>
#include <string>

#include "import_check.hpp"
#include "tracetools/heaptrack.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  strata::fuzz::checkImport(data, size, [](std::istream& in, const std::string& out) {
    (void)strata::tracetools::importHeaptrack(in, "input.ht", out);
  });
  return 0;
}
