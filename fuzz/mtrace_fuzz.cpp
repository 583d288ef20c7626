// libFuzzer target: the mtrace importer (`strata import --from mtrace`) on arbitrary text. It
// either imports or throws std::runtime_error naming the line; it must never crash or hang.
// The trace it writes goes to a memfd; a successful import is read back and must be valid.
#include <cstddef>
#include <cstdint>
#include <string>

#include "import_check.hpp"
#include "tracetools/mtrace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  strata::fuzz::checkImport(data, size, [](std::istream& in, const std::string& out) {
    (void)strata::tracetools::importMtrace(in, "input.mtrace", out);
  });
  return 0;
}
