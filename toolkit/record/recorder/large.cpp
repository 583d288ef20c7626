// Large objects (large.hpp): the threshold, the table of prepared objects, and the Touch
// events of those still live at the end.
#include "record/recorder/large.hpp"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>

#include "record/recorder/core.hpp"
#include "strata/protocol/recorder_environment.hpp"
#include "record/recorder/touch_sampling.hpp"

namespace strata::record {

namespace env = protocol::env;

constinit LargeObjects gLarge;
TouchSampling gTouchSampling;
constinit thread_local __attribute__((tls_model("initial-exec"))) uint32_t tTouchTick = 0;

uint64_t largeThreshold(const char* setting) noexcept {
  const uint64_t least = 2 * uint64_t{gLarge.pageSize};
  if (setting == nullptr || setting[0] == '\0') return least;
  if (::strcmp(setting, env::kTouchOff) == 0) return ~uint64_t{0};
  char* end = nullptr;
  const unsigned long long v = ::strtoull(setting, &end, 10);
  if (end == setting || *end != '\0') {
    static const char kMsg[] =
        "strata-record: STRATA_TRACE_TOUCH_MIN is not a number of bytes or 'off'; using two "
        "pages\n";
    const ssize_t ignored = ::write(2, kMsg, sizeof kMsg - 1);
    (void)ignored;
    return least;
  }
  return std::max<uint64_t>(v, least);
}

bool noteLarge(uintptr_t p, uint64_t size, bool prepared) noexcept {
  if (prepared && gLarge.prepared.add(p, size)) return true;
  gLarge.prepared.remove(p);
  return false;
}

void touchLiveLarge() noexcept {
  const uint64_t t = nowNs();
  gLarge.prepared.forEach([t](uintptr_t addr, uint64_t size) {
    Entry e;
    if (!gCore.map.find(addr, &e) || !isPrepared(e, size)) return;
    const uint64_t touched =
        touchedBytes(reinterpret_cast<const void*>(addr), size, gLarge.pageSize);
    if (touched != kNoTouch) append(Op::Touch, 0, t, touched, e.id, kNoObject, 0);
  });
}

}  // namespace strata::record
