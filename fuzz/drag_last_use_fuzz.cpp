// libFuzzer target: the last-use file reader of `strata drag` (drag_last_use.hpp) on arbitrary
// bytes. It either reads the file or throws LastUseError with an offset inside it; what it
// reads has one record per id, sorted, each at a 24-byte record boundary of the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "drag_last_use.hpp"

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "drag_last_use_fuzz: %s\n", what);
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strata::tracetools;
  try {
    const LastUseData d = parseLastUse(data, size);
    check(d.complete == d.incomplete.empty(), "complete disagrees with the reason");
    for (std::size_t i = 0; i < d.records.size(); ++i) {
      const LastUseRecord& r = d.records[i];
      check(i == 0 || d.records[i - 1].id < r.id, "records not sorted by id, or repeated");
      check(r.offset >= 24 && r.offset % 24 == 0 && r.offset + 24 <= size, "bad record offset");
      check(r.release == kLastUseAtExit || r.lastUse <= r.release, "last use after release");
      check(d.find(r.id) == &r, "find misses a record");
    }
  } catch (const LastUseError& e) {
    check(e.offset() <= size, "an error offset past the input");
  }
  return 0;
}
