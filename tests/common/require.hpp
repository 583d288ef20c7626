// Tests that need something the system may lack (a program, a library, a Python module):
//   if (!found) STRATA_SKIP_OR_FAIL("heaptrack is not installed (Debian package: heaptrack)");
// skips the test, visibly, or, when STRATA_REQUIRE_DEPS is set in the environment (to
// anything but "" or "0"; scripts/test.sh sets it, having installed every dependency),
// fails it with the same message. The message may be a stream expression ("a" << b). Like
// GTEST_SKIP and FAIL it returns from the current function, which must return void.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace strata::test {

// Whether a missing dependency is a failure (STRATA_REQUIRE_DEPS set, not "0").
inline bool dependenciesRequired() noexcept {
  const char* v = std::getenv("STRATA_REQUIRE_DEPS");
  return v != nullptr && v[0] != '\0' && std::strcmp(v, "0") != 0;
}

// For a test that goes on without one of several things (an allocator in a loop): a failure
// naming it when dependencies are required, else a line saying it is skipped. The caller
// then moves on to the next.
inline void reportMissing(const std::string& what) {
  if (dependenciesRequired())
    ADD_FAILURE() << "STRATA_REQUIRE_DEPS is set, and a dependency is missing: " << what;
  else
    std::printf("skipping: %s\n", what.c_str());
}

}  // namespace strata::test

#define STRATA_SKIP_OR_FAIL(message)                                                 \
  do {                                                                               \
    if (::strata::test::dependenciesRequired()) {                                    \
      FAIL() << "STRATA_REQUIRE_DEPS is set, and a dependency is missing: " << message; \
    } else {                                                                         \
      GTEST_SKIP() << message;                                                       \
    }                                                                                \
  } while (false)
