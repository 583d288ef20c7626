// The hardening layers' secrets: a random 64-bit key per heap, from the kernel's random
// source, and the mixing function that seals a header or a canary with it. An attacker who
// can read one sealed value learns nothing about another (the address is mixed in), and one
// who cannot read memory cannot forge a seal.
#pragma once
#include <cstdint>
#include <cstring>

#include "strata/platform/clock.hpp"
#include "strata/platform/random.hpp"

namespace strata::detail {

// A 64-bit mix with full avalanche (the finaliser of SplitMix64).
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// A keyed 32-bit tag of a value in the high half of the result: one multiply. Not a
// cryptographic MAC (nor is Scudo's CRC32): it stops forged or stale headers and canaries
// written without reading the key, which is what a heap overflow or a dangling pointer can do.
constexpr std::uint64_t tag64(std::uint64_t key, std::uint64_t v) noexcept {
  const std::uint64_t x = (key ^ v) * 0x9e3779b97f4a7c15ULL;
  return x ^ (x >> 29);
}

// A fresh random key, never 0. getrandom(2) first; if the kernel refuses (no entropy this
// early, a seccomp filter), the 16 random bytes the kernel gave the process at exec
// (AT_RANDOM) mixed with the clock and an address. Never allocates.
inline std::uint64_t freshSecret() noexcept {
  std::uint64_t key = 0;
  if (!platform::randomBytes(&key, sizeof key)) {
    std::uint64_t at[2] = {0, 0};
    if (const unsigned char* r = platform::execRandomBytes()) std::memcpy(at, r, sizeof at);
    key = mix64(at[0] ^ mix64(at[1] ^ platform::nowSubsecondNs() ^
                              reinterpret_cast<std::uintptr_t>(&key)));
  }
  return key != 0 ? key : 0x9e3779b97f4a7c15ULL;
}

}  // namespace strata::detail
