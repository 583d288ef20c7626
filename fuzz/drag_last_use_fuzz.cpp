// libFuzzer target: the last-use file reader of `strata drag` (drag_last_use.hpp) on arbitrary
// bytes. It either reads the file or throws LastUseError with an offset inside it; what it
// reads has its records in file order (read again as the analysis does), each at a 24-byte
// record boundary of the input, as many as it counted.
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "drag/drag_last_use.hpp"

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "drag_last_use_fuzz: %s\n", what);
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strata::drag;
  try {
    const LastUseData d = parseLastUse(data, size);
    check(d.complete == d.incomplete.empty(), "complete disagrees with the reason");
    std::uint64_t n = 0, at = 24;
    forEachLastUseRecord(d, [&](const LastUseRecord& r) {
      check(r.offset == at, "records not in file order");
      check(r.offset + 24 <= size, "bad record offset");
      check(r.release == kLastUseAtExit || r.lastUse <= r.release, "last use after release");
      ++n;
      at += 24;
    });
    check(n == d.recordCount, "the records read again are not the ones counted");
  } catch (const LastUseError& e) {
    check(e.offset() <= size, "an error offset past the input");
  }
  return 0;
}
