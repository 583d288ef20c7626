// A table of what is live, keyed by object id: the analyses' per-object state, holding only the
// ids live now, so a pass's memory follows the live set rather than every object ever
// allocated (a trace's ids are dense and never reused: a table indexed by id grows with the
// recording's length). Open addressing with linear probing and backward-shift erase (no
// tombstones, so a long run of births and deaths never fills it with dead entries); it grows
// at three quarters full and never shrinks, so it holds 1.3-2.7 slots per object of the peak
// live count (the dense ids spread evenly under Fibonacci hashing, so the runs stay short).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace strata::trace {

// Alloc: where the table's arrays come from (a replayer keeps them out of the allocator it
// measures); rebound to the key and value types.
template <class V, class Alloc = std::allocator<V>>
class LiveTable {
 public:
  // The value of `id`, or null when it is not in the table.
  V* find(std::uint64_t id) {
    const std::size_t i = indexOf(id);
    return i == kAbsent ? nullptr : &values_[i];
  }
  const V* find(std::uint64_t id) const { return const_cast<LiveTable*>(this)->find(id); }

  // The value of `id`, inserted value-initialised when absent. `id` must not be kEmpty.
  V& operator[](std::uint64_t id) {
    if ((size_ + 1) * 4 > keys_.size() * 3) grow();
    std::size_t i = home(id);
    for (; keys_[i] != kEmpty; i = (i + 1) & mask_)
      if (keys_[i] == id) return values_[i];
    keys_[i] = id;
    values_[i] = V{};
    ++size_;
    return values_[i];
  }

  // Removes `id` if present; returns whether it was.
  bool erase(std::uint64_t id) {
    const std::size_t i = indexOf(id);
    if (i == kAbsent) return false;
    eraseAt(i);
    return true;
  }

  // Removes `id` if present and moves its value into out (one probe where find and erase
  // take two); returns whether it was.
  bool take(std::uint64_t id, V& out) {
    const std::size_t i = indexOf(id);
    if (i == kAbsent) return false;
    out = std::move(values_[i]);
    eraseAt(i);
    return true;
  }

  // Removes the entry `value` is the value of: a pointer find() returned, with no insertion
  // or removal since (one probe less than erase(id) after a find).
  void eraseFound(const V* value) { eraseAt(static_cast<std::size_t>(value - values_.data())); }

  std::size_t size() const { return size_; }
  // Bytes the table holds (for the bound the tests check).
  std::size_t capacityBytes() const { return keys_.size() * (sizeof(std::uint64_t) + sizeof(V)); }

  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

 private:
  static constexpr std::size_t kAbsent = ~std::size_t{0};

  // The index holding `id`, or kAbsent.
  std::size_t indexOf(std::uint64_t id) const {
    if (size_ == 0) return kAbsent;
    for (std::size_t i = home(id);; i = (i + 1) & mask_) {
      if (keys_[i] == id) return i;
      if (keys_[i] == kEmpty) return kAbsent;
    }
  }

  // Empties index i. Backward shift: each later entry of the run whose home is not between
  // the hole and it moves into the hole, so every remaining key stays reachable from its home.
  void eraseAt(std::size_t i) {
    for (std::size_t j = (i + 1) & mask_; keys_[j] != kEmpty; j = (j + 1) & mask_) {
      const std::size_t h = home(keys_[j]);
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        keys_[i] = keys_[j];
        values_[i] = std::move(values_[j]);
        i = j;
      }
    }
    keys_[i] = kEmpty;
    --size_;
  }

  // Fibonacci hashing spreads the dense, increasing ids over the table.
  std::size_t home(std::uint64_t id) const {
    return static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }

  void grow() {
    const std::size_t capacity = keys_.empty() ? 64 : keys_.size() * 2;
    KeyVector keys(capacity, kEmpty);
    ValueVector values(capacity);
    keys.swap(keys_);
    values.swap(values_);
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    size_ = 0;
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] != kEmpty) (*this)[keys[i]] = std::move(values[i]);
  }

  using KeyVector =
      std::vector<std::uint64_t, typename std::allocator_traits<Alloc>::template rebind_alloc<std::uint64_t>>;
  using ValueVector = std::vector<V, typename std::allocator_traits<Alloc>::template rebind_alloc<V>>;
  KeyVector keys_;
  ValueVector values_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
};

}  // namespace strata::trace
