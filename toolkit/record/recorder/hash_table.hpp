// HashTable<S>: the recorder's address -> slot table (the object map's two tables and the
// large-object table are instances): open addressing with linear probing in mmap memory,
// growing by rehashing, with a lock-free prefetch()/touch() for the address a caller is
// about to look up under the recorder's lock. Tested on its own by
// tests/toolkit/record/object_map_test.cpp (through ObjectMap).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include "record/recorder/mapped_memory.hpp"
#include "strata/platform/memory.hpp"

namespace strata::record {

// The home slot of addr in a table of mask + 1 slots (shift = 64 - log2 of that). Keeps
// neighbours together: the 16-byte units of one 64 KiB block of address space map to 4096
// consecutive slots, at an offset given by a multiplicative hash of the block number. An
// allocator hands out neighbouring addresses one after the other, so a run of mallocs
// writes neighbouring slots (one cache miss per four entries instead of one per entry),
// while blocks (and the 64 MiB-aligned heaps of glibc's thread arenas, which a plain mask
// would pile onto the same slots) still spread over the whole table.
inline size_t homeSlot(uintptr_t addr, size_t mask, unsigned shift) {
  const auto block = static_cast<size_t>(((addr >> 16) * 0x9E3779B97F4A7C15ull) >> shift);
  return (block + ((addr >> 4) & 0xfff)) & mask;
}

// Address -> slot S (a struct whose first field is `uintptr_t addr`; 0 marks an empty slot):
// open addressing with linear probing and backward-shift deletion (no tombstones, so a long
// run of malloc/free does not degrade it), kept at most half full and doubled by rehashing
// into a fresh mapping. Lookup, insert and erase are one hash and usually one cache line. Not
// thread-safe: used under the recorder's lock.
template <class S>
class HashTable {
 public:
  bool init(size_t slots) {
    slots_ = static_cast<S*>(mapTable(slots * sizeof(S)));
    if (slots_ == nullptr) return false;
    mask_ = slots - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(slots));
    count_ = 0;
    return true;
  }
  // The slot holding addr, or nullptr.
  S* find(uintptr_t addr) {
    for (size_t i = home(addr);; i = (i + 1) & mask_) {
      if (slots_[i].addr == addr) return &slots_[i];
      if (slots_[i].addr == 0) return nullptr;
    }
  }
  // Adds s, replacing a slot with the same address. False when the table could not grow.
  bool insert(const S& s) {
    bool existed;
    S* slot = insertSlot(s.addr, &existed);
    if (slot == nullptr) return false;
    *slot = s;
    return true;
  }
  // The slot for addr: its existing one (*existed = true), or a new one holding only the
  // address, for the caller to fill. nullptr when the table could not grow.
  S* insertSlot(uintptr_t addr, bool* existed) {
    if ((count_ + 1) * 2 > mask_ + 1 && !grow()) return nullptr;
    size_t i = home(addr);
    for (; slots_[i].addr != 0; i = (i + 1) & mask_) {
      if (slots_[i].addr == addr) {
        *existed = true;
        return &slots_[i];
      }
    }
    *existed = false;
    slots_[i].addr = addr;
    ++count_;
    return &slots_[i];
  }
  void erase(S* s) { eraseAt(static_cast<size_t>(s - slots_)); }
  // Removes addr's slot, if there is one.
  void erase(uintptr_t addr) {
    if (S* s = find(addr)) erase(s);
  }
  // Starts loading addr's home slot into the cache, so that the miss overlaps the clock read
  // and the lock that come before the lookup. Runs without the lock: it may read a table
  // that is being replaced, which is harmless for a prefetch (it never faults). The fields
  // are read atomically (relaxed) for that reason.
  void prefetch(uintptr_t addr) const {
    S* slots = __atomic_load_n(&slots_, __ATOMIC_RELAXED);
    const size_t mask = __atomic_load_n(&mask_, __ATOMIC_RELAXED);
    const unsigned shift = __atomic_load_n(&shift_, __ATOMIC_RELAXED);
    if (slots == nullptr) return;
    __builtin_prefetch(&slots[homeSlot(addr, mask, shift)], 1);
  }
  // Loads addr's home slot, without the lock, so that its cache miss is over before the
  // caller takes the lock (the lock's atomic exchange waits for earlier loads, not for
  // prefetches): other threads then do not wait for that miss too. The table may be growing
  // meanwhile: mask_ is read first and grow() publishes the bigger table before its bigger
  // mask, so the slot read is inside whichever table is seen, and a replaced table stays
  // mapped (see grow()). The value read is thrown away.
  void touch(uintptr_t addr) const {
    const size_t mask = __atomic_load_n(&mask_, __ATOMIC_ACQUIRE);
    S* slots = __atomic_load_n(&slots_, __ATOMIC_RELAXED);
    const unsigned shift = __atomic_load_n(&shift_, __ATOMIC_RELAXED);
    if (slots == nullptr) return;
    const uintptr_t v = __atomic_load_n(&slots[homeSlot(addr, mask, shift)].addr, __ATOMIC_RELAXED);
    asm volatile("" : : "r"(v));
  }
  size_t capacity() const { return mask_ + 1; }
  size_t size() const { return count_; }
  S* slots() { return slots_; }
  // Keeps only the slots for which keep(slot) is true, by rebuilding the table (slots move,
  // so erasing while scanning would skip some). O(capacity). Unmaps the old table: not for
  // a table that touch() reads.
  template <class Keep>
  void retain(Keep keep) {
    HashTable fresh;
    if (!fresh.init(capacity())) return;
    for (size_t i = 0; i <= mask_; ++i)
      if (slots_[i].addr != 0 && keep(slots_[i])) fresh.insert(slots_[i]);
    platform::unmap(slots_, capacity() * sizeof(S));
    *this = fresh;
  }

 private:
  size_t home(uintptr_t addr) const { return homeSlot(addr, mask_, shift_); }
  // Doubles the table. The old one's memory goes back to the kernel (MADV_DONTNEED), but its
  // address range stays mapped (reading it gives zeros), because touch() may still read it
  // from another thread; at most as many bytes of address space as the table has are left so.
  bool grow() {
    HashTable bigger;
    if (!bigger.init(capacity() * 2)) return false;
    for (size_t i = 0; i <= mask_; ++i)
      if (slots_[i].addr != 0) bigger.insert(slots_[i]);
    platform::decommit(slots_, capacity() * sizeof(S), platform::Decommit::Now);
    __atomic_store_n(&slots_, bigger.slots_, __ATOMIC_RELEASE);
    __atomic_store_n(&shift_, bigger.shift_, __ATOMIC_RELEASE);
    __atomic_store_n(&mask_, bigger.mask_, __ATOMIC_RELEASE);
    count_ = bigger.count_;
    return true;
  }
  // Linear-probing deletion: pulls back every later slot of the cluster whose home slot
  // does not lie cyclically in (hole, its slot], so lookups never meet a false gap.
  void eraseAt(size_t hole) {
    for (size_t j = (hole + 1) & mask_; slots_[j].addr != 0; j = (j + 1) & mask_) {
      const size_t k = home(slots_[j].addr);
      const bool stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
      if (!stays) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].addr = 0;
    --count_;
  }

  // The table's shape, read by every thread's prefetch, and its fill count, written by every
  // insert and erase: on separate cache lines.
  alignas(64) S* slots_ = nullptr;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  alignas(64) size_t count_ = 0;
};

}  // namespace strata::record
