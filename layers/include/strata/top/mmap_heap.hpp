// MmapHeap: every object is its own anonymous mapping, returned to the system on free.
//
// The first 16 bytes of the mapping hold the shared header word (usable size | mapped
// flag), so the heap needs no table to find a mapping's length, and routers can recognise
// its objects. Cost: one mmap and one munmap system call per object; an object resized in
// place (resizeMapping) costs one munmap of its tail or one mremap, one moved to grow
// (moveMapping) one mremap. They are not called reallocInPlace and reallocMoving on purpose: layers inherit their parent's members, and a layer over
// MmapHeap (KingsleyHeap<MmapHeap>) must not offer a resize that treats its own blocks as
// mappings; SelectMmapHeap, which knows which objects are mappings, offers them.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "strata/detail/align.hpp"
#include "strata/detail/header.hpp"
#include "strata/platform/memory.hpp"
#include "strata/platform/page.hpp"
#include "strata/top/memory_account.hpp"

namespace strata {

class MmapHeap : public AccountedTop {
 public:
  static constexpr std::size_t Alignment = 16;
  static constexpr std::size_t HeaderSize = 16;

  MmapHeap() = default;
  MmapHeap(const MmapHeap&) = delete;
  MmapHeap& operator=(const MmapHeap&) = delete;

  void* malloc(std::size_t n) noexcept {
    std::size_t len;
    if (!mappingLength(n, len)) {
      errno = ENOMEM;
      return nullptr;
    }
    void* base = platform::map(len);
    if (base == nullptr) {
      errno = ENOMEM;
      return nullptr;
    }
    charge(len);
    void* p = detail::bytes(base) + HeaderSize;
    detail::header_word(p) = (len - HeaderSize) | detail::kFlagMmapped;
    return p;
  }

  // p grown (or shrunk) to n bytes by moving its pages rather than copying them (mremap,
  // as glibc's realloc does a mapped chunk): pages the program never touched cost nothing
  // to move. The object's new address, or nullptr with p untouched and errno unchanged.
  void* moveMapping(void* p, std::size_t n) noexcept {
    std::size_t len;
    if (!mappingLength(n, len)) return nullptr;
    const std::size_t old = getSize(p) + HeaderSize;
    const int saved = errno;
    void* base = platform::remap(detail::bytes(p) - HeaderSize, old, len);
    if (base == nullptr) {
      errno = saved;
      return nullptr;
    }
    if (len > old) charge(len - old);
    if (len < old) refund(old - len);
    void* q = detail::bytes(base) + HeaderSize;
    detail::header_word(q) = (len - HeaderSize) | detail::kFlagMmapped;
    return q;
  }

  void free(void* p) noexcept {
    if (p == nullptr) return;
    const std::size_t len = getSize(p) + HeaderSize;
    refund(len);
    platform::unmap(detail::bytes(p) - HeaderSize, len);
  }

  // p resized where it is, as glibc's realloc does a mapped chunk: shrinking unmaps the
  // whole pages past the new end (the address space and any memory in them go back);
  // growing extends the mapping only when the pages after it are free (mremap without
  // moving). nullptr, p untouched and errno unchanged, when it cannot grow in place or n is
  // beyond any mapping.
  void* resizeMapping(void* p, std::size_t n) noexcept {
    std::size_t len;
    if (!mappingLength(n, len)) return nullptr;
    const std::size_t old = getSize(p) + HeaderSize;
    std::byte* base = detail::bytes(p) - HeaderSize;
    if (len < old) {
      platform::unmap(base + len, old - len);
      refund(old - len);
    } else if (len > old) {
      const int saved = errno;
      if (!platform::resizeInPlace(base, old, len)) {
        errno = saved;
        return nullptr;
      }
      charge(len - old);
    }
    detail::header_word(p) = (len - HeaderSize) | detail::kFlagMmapped;
    return p;
  }

  static std::size_t getSize(void* p) noexcept {
    return p ? detail::header_word(p) & ~detail::kFlagMask : 0;
  }

  // The length of the mapping for n usable bytes (header included, whole pages); false
  // when it would be beyond any mapping.
  static bool mappingLength(std::size_t n, std::size_t& len) noexcept {
    return detail::checked_add(n, HeaderSize, len) &&
           detail::checked_align_up(len, platform::pageSize(), len) && len <= PTRDIFF_MAX;
  }

  // True when p carries MmapHeap's header; valid for objects of heaps that share the
  // header word (SizeHeap, CoalesceableHeap, MmapHeap).
  static bool isMapped(void* p) noexcept {
    return (detail::header_word(p) & detail::kFlagMmapped) != 0;
  }
};

}  // namespace strata
