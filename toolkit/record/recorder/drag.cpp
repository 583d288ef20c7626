// The drag tool's requests (drag.hpp), through Valgrind's client request mechanism: a no-op
// sequence of instructions natively, a call into the tool under Valgrind.
#include "record/recorder/drag.hpp"

#include <unistd.h>
#include <valgrind/valgrind.h>

#include "strata/protocol/drag.h"

namespace strata::record {

constinit bool gDrag = false;

void initDrag() noexcept {
  const unsigned long long answer = VALGRIND_DO_CLIENT_REQUEST_EXPR(0, STRATA_DRAG_HELLO, 0, 0, 0,
                                                                    0, 0);
  if (answer == STRATA_DRAG_HELLO_ANSWER) {
    gDrag = true;
    return;
  }
  // Not under Valgrind at all: Valgrind's own launcher, which `strata drag` starts with the
  // recorder preloaded before it execs the tool, records as any program (its trace is
  // replaced by the program's, the same process after the exec).
  if (RUNNING_ON_VALGRIND == 0) return;
  static const char kMsg[] =
      "strata-record: STRATA_TRACE_DRAG is set, but the program is not running under Strata's "
      "drag tool (strata drag); recording without last uses\n";
  const ssize_t ignored = ::write(2, kMsg, sizeof kMsg - 1);
  (void)ignored;
}

void dragCreateSlow(uint64_t id, uintptr_t addr, uint64_t size) noexcept {
  if (size == 0 || addr == 0) return;
  VALGRIND_DO_CLIENT_REQUEST_STMT(STRATA_DRAG_CREATE, lastEventSeq(), id, addr, size, 0);
}

void dragReleaseSlow(uintptr_t addr) noexcept {
  if (addr == 0) return;
  VALGRIND_DO_CLIENT_REQUEST_STMT(STRATA_DRAG_RELEASE, lastEventSeq(), addr, 0, 0, 0);
}

}  // namespace strata::record
