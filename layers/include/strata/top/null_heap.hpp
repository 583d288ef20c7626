// NullHeap: has nothing to give. The parent of a store that only keeps freed objects, such as
// the bins of a segregated heap: malloc on an empty bin yields nullptr and the seg heap asks
// its own parent instead. Costs nothing: it compiles to "return nullptr".
#pragma once
#include <cstddef>

namespace strata {

template <std::size_t Align = 16>
class NullHeap {
 public:
  static constexpr std::size_t Alignment = Align;
  void* malloc(std::size_t) noexcept { return nullptr; }
  void free(void*) noexcept {}
};

}  // namespace strata
