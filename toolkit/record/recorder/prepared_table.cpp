// PreparedTable (prepared_table.hpp): its memory.
#include "record/recorder/prepared_table.hpp"

#include "record/recorder/mapped_memory.hpp"

namespace strata::record {

bool PreparedTable::init(size_t slots) noexcept {
  // Zero-filled pages: every slot starts empty (address 0).
  table_ = static_cast<Slot*>(mapPages((slots + kWindow) * sizeof(Slot)));
  if (table_ == nullptr) return false;
  slots_ = slots;
  shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(slots));
  return true;
}

}  // namespace strata::record
