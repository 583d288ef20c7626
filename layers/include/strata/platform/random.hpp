// The kernel's randomness, for the hardening layers' keys: getrandom(2), and the bytes the
// kernel hands every process at exec for when getrandom cannot serve (no entropy this early
// in boot, a seccomp filter that refuses it). Neither blocks or allocates; what to do when
// both fail (the hardening layers mix in the clock and an address) is the caller's policy.
#pragma once
#include <sys/auxv.h>
#include <sys/random.h>

#include <cstddef>

namespace strata::platform {

// n bytes from the kernel's random source into out, without waiting for entropy; false when
// it gave fewer (out then partly written).
inline bool randomBytes(void* out, std::size_t n) noexcept {
  return ::getrandom(out, n, GRND_NONBLOCK) == static_cast<ssize_t>(n);
}

// The 16 random bytes the kernel gave the process at exec (AT_RANDOM), the same for every
// caller in the process; nullptr when the auxiliary vector has none.
inline const unsigned char* execRandomBytes() noexcept {
  return reinterpret_cast<const unsigned char*>(::getauxval(AT_RANDOM));
}

}  // namespace strata::platform
