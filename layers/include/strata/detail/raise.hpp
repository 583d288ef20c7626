// Throwing from a header that may be compiled without exceptions (-fno-exceptions, as the
// malloc libraries and many users build): raise<E>() throws E where exceptions exist. Without
// them nothing could catch it and the caller's contract forbids returning, so the process
// stops, as libstdc++'s own no-exceptions build does for its throws. Written as a call rather
// than a throw-expression so that such a header compiles under every compiler (clang rejects
// a throw-expression without exceptions even in a template that is never instantiated).
#pragma once
#include <cstdlib>

namespace strata::detail {

template <class E>
[[noreturn]] inline void raise() {
#if __cpp_exceptions
  throw E();
#else
  std::abort();
#endif
}

}  // namespace strata::detail
