// The system calls that give memory and take it back: map, reserve and commit, unmap,
// decommit, remap; and the one that says which pages are resident. Every layer that talks to the kernel about memory goes through these, so
// the flags are written once and a port to another system changes one file.
//
// Errors: each call reports failure by its result (nullptr or false) and leaves errno as the
// system set it. The layers decide what a failure means: a top heap's malloc sets
// errno = ENOMEM itself, a realloc that tries remap first restores the errno it saw before.
// None of these aborts. Costs: one system call each, nothing added.
#pragma once
#include <sys/mman.h>

#include <cstddef>

namespace strata::platform {

// n bytes of fresh read-write memory, private and anonymous (it reads as zero), accounted
// by the kernel's overcommit policy as glibc's mappings are; nullptr on failure.
inline void* map(std::size_t n) noexcept {
  void* m = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return m == MAP_FAILED ? nullptr : m;
}

// n bytes of address space only: inaccessible and not accounted (MAP_NORESERVE) until
// commit() makes part of it usable; nullptr on failure.
inline void* reserve(std::size_t n) noexcept {
  void* m = ::mmap(nullptr, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return m == MAP_FAILED ? nullptr : m;
}

// Makes [p, p + n) of a reservation read-write; false on failure.
inline bool commit(void* p, std::size_t n) noexcept {
  return ::mprotect(p, n, PROT_READ | PROT_WRITE) == 0;
}

// Gives [p, p + n) back: address space and memory.
inline void unmap(void* p, std::size_t n) noexcept { ::munmap(p, n); }

// How decommitted memory goes back: Lazy (MADV_FREE: the kernel takes the pages when it needs
// them, cheap to reuse, but they count as resident until then) or Now (MADV_DONTNEED:
// resident size drops at once, and the pages read as zero when next touched).
enum class Decommit { Lazy, Now };

// The memory of [p, p + n) goes back to the system; the range stays mapped. False when the
// system refused (for Lazy, a kernel without MADV_FREE).
inline bool decommit(void* p, std::size_t n, Decommit how) noexcept {
  return ::madvise(p, n, how == Decommit::Now ? MADV_DONTNEED : MADV_FREE) == 0;
}

// The mapping at p, old bytes long, made n bytes long where it is (growing only into free
// address space after it); false when it cannot.
inline bool resizeInPlace(void* p, std::size_t old, std::size_t n) noexcept {
  return ::mremap(p, old, n, 0) != MAP_FAILED;
}

// The mapping at p, old bytes long, made n bytes long, moved if it must be (its pages move,
// nothing is copied); the new address, or nullptr with the mapping untouched.
inline void* remap(void* p, std::size_t old, std::size_t n) noexcept {
  void* m = ::mremap(p, old, n, MREMAP_MAYMOVE);
  return m == MAP_FAILED ? nullptr : m;
}

// The mapping at p, old bytes long, moved to target (replacing what was mapped there) and
// made n bytes long; target, or nullptr with the mapping untouched.
inline void* remapTo(void* p, std::size_t old, std::size_t n, void* target) noexcept {
  void* m = ::mremap(p, old, n, MREMAP_MAYMOVE | MREMAP_FIXED, target);
  return m == MAP_FAILED ? nullptr : m;
}

// Which pages of [p, p + n) are resident (p page-aligned): bit 0 of out[i] for the i-th page,
// out holding one byte per page the range touches; false (out undefined) when the system
// cannot say. The hardening layers read only the pages of a freed object that something wrote.
inline bool residentPages(const void* p, std::size_t n, unsigned char* out) noexcept {
  return ::mincore(const_cast<void*>(p), n, out) == 0;
}

}  // namespace strata::platform
