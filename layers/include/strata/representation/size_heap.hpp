// SizeHeap: records each object's usable size in a 16-byte header just below it, so layers
// above can ask getSize(). The size is rounded up to 16 and kept in the shared header word
// (strata/detail/header.hpp), leaving its low bits for flags. Cost: one store on malloc,
// one load on getSize.
#pragma once
#include <cerrno>
#include <cstddef>

#include "strata/concepts.hpp"
#include "strata/detail/align.hpp"
#include "strata/detail/header.hpp"

namespace strata {

template <Heap Super>
class SizeHeap : public Super {
  static_assert(Super::Alignment >= alignof(std::size_t),
                "SizeHeap: the parent must align objects for a size_t header");

 public:
  static constexpr std::size_t HeaderSize = 16;
  static constexpr std::size_t Alignment = Super::Alignment < 16 ? Super::Alignment : 16;
  static_assert(HeaderSize % Alignment == 0, "SizeHeap: header would break alignment");

  using Super::Super;

  void* malloc(std::size_t n) noexcept {
    if (n > SIZE_MAX - 15 - HeaderSize) {  // one check covers the rounding and the header
      errno = ENOMEM;
      return nullptr;
    }
    const std::size_t usable = detail::align_up(n, 16);
    void* block = Super::malloc(usable + HeaderSize);
    if (block == nullptr) return nullptr;
    void* p = detail::bytes(block) + HeaderSize;
    detail::header_word(p) = usable;
    return p;
  }

  void free(void* p) noexcept {
    if (p != nullptr) Super::free(detail::bytes(p) - HeaderSize);
  }

  static std::size_t getSize(void* p) noexcept {
    return p ? detail::header_word(p) & ~detail::kFlagMask : 0;
  }
};

}  // namespace strata
