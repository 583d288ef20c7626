// The two things operator new needs of the C++ runtime, the new_handler and throwing
// std::bad_alloc, for a malloc library built without exceptions and without libstdc++.
//
// Why: a drop-in malloc that links libstdc++ makes every C program that preloads it map and
// relocate the whole C++ library (over a MiB of resident memory for a program that
// allocates a few KiB). Built with -fno-exceptions, the shim finds the program's own runtime
// at the moment an operator new fails (dlsym of std::get_new_handler and
// std::__throw_bad_alloc): a C++ program always has it loaded, and nothing else calls
// operator new. Built with exceptions (tests, header-only users), the standard calls are used.
#pragma once
#include <new>

#if !__cpp_exceptions
#include <dlfcn.h>

#include <cstdlib>

#include "strata/platform/output.hpp"
#endif

namespace strata::detail {

#if __cpp_exceptions

inline std::new_handler currentNewHandler() noexcept { return std::get_new_handler(); }
[[noreturn]] inline void throwBadAlloc() { throw std::bad_alloc(); }

#else

inline std::new_handler currentNewHandler() noexcept {
  using Getter = std::new_handler (*)();
  auto get = reinterpret_cast<Getter>(::dlsym(RTLD_DEFAULT, "_ZSt15get_new_handlerv"));
  return get != nullptr ? get() : nullptr;
}

// Throws through the program's own runtime; without one (nothing to catch it) the program
// cannot go on, as with an uncaught bad_alloc.
[[noreturn]] inline void throwBadAlloc() {
  using Thrower = void (*)();
  auto raise = reinterpret_cast<Thrower>(::dlsym(RTLD_DEFAULT, "_ZSt17__throw_bad_allocv"));
  if (raise != nullptr) raise();
  static const char msg[] = "strata: operator new failed and no C++ runtime can throw bad_alloc\n";
  platform::writeStderr(msg, sizeof msg - 1);
  std::abort();
}

#endif

}  // namespace strata::detail
