// ObjectMap: every live address the trace knows (objects, reaps, objects in reaps) -> the id
// the trace gave it, its requested size, its reap and its alignment. The recorder's central
// structure: every create inserts, every release takes, every realloc does both, all under
// the recorder's lock; a fork child renumbers every entry (forEach). Two HashTables in mmap
// memory (hash_table.hpp): a compact one for the common plain objects and a side table for
// the rest. Tested on its own by tests/toolkit/record/object_map_test.cpp.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "record/recorder/hash_table.hpp"
#include "strata/trace/format.hpp"

namespace strata::record {

using strata::trace::kNoObject;

// One live address the trace knows: the object (or reap) id it got, its requested size, and
// `meta`: bits 0-47 the id + 1 of the reap it came from (0: none), bit 48 set for a reap
// handle (then `size` holds the parent reap's id, or kNoObject), bits 56-63 alignment log2.
// The full form, kept only for the rare entries (see ObjectMap); lookups return it.
struct Entry {
  uintptr_t addr;
  uint64_t id;
  uint64_t size;
  uint64_t meta;
};
constexpr uint64_t kReapBit = uint64_t{1} << 48;
constexpr uint64_t kReapIdMask = kReapBit - 1;

inline uint64_t makeMeta(uint64_t reap, bool isReap, unsigned alignLog2) {
  return (reap == kNoObject ? 0 : (reap + 1) & kReapIdMask) | (isReap ? kReapBit : 0) |
         (uint64_t{alignLog2} << 56);
}
inline uint64_t metaReap(uint64_t meta) {
  const uint64_t r = meta & kReapIdMask;
  return r == 0 ? kNoObject : r - 1;
}
inline bool metaIsReap(uint64_t meta) { return (meta & kReapBit) != 0; }
inline unsigned metaAlign(uint64_t meta) { return static_cast<unsigned>(meta >> 56); }

// The compact form of an entry, 16 bytes (four to a cache line): the address and, packed in
// `value`, the id (bits 0-39) and the requested size (bits 40-62) of a plain object (no reap,
// no alignment, id < 2^40 - 1, size < 2^23), or kRare when the entry's full form is in the
// side table.
struct Packed {
  uintptr_t addr;
  uint64_t value;
};
constexpr unsigned kIdBits = 40;
constexpr uint64_t kIdMask = (uint64_t{1} << kIdBits) - 1;
constexpr uint64_t kSizeLimit = uint64_t{1} << 23;
constexpr uint64_t kRare = ~uint64_t{0};

// Every live address the trace knows. The main table has a 16-byte Packed slot per address;
// the few entries that do not pack (reaps, objects in reaps, aligned objects, sizes of 8 MiB
// and more, ids from 2^40 - 1 on) are marked kRare there and kept whole in a side table of
// Entry. Half the bytes of one table of Entry: a table holding a large live set misses the
// caches half as often. Not thread-safe: used under the recorder's lock.
class ObjectMap {
 public:
  // Maps the tables, `slots` (a power of two) in the main one; false when out of memory.
  bool init(size_t slots);
  void prefetch(uintptr_t addr) const { main_.prefetch(addr); }
  void touch(uintptr_t addr) const { main_.touch(addr); }
  // Fills *out with addr's entry; false when addr is not known.
  bool find(uintptr_t addr, Entry* out) {
    Packed* s = main_.find(addr);
    if (s == nullptr) return false;
    return unpack(*s, out);
  }
  // Removes addr's entry into *out; false when addr is not known. Inline in every release
  // (calls.hpp says why).
  [[gnu::always_inline]] bool take(uintptr_t addr, Entry* out) {
    Packed* s = main_.find(addr);
    if (s == nullptr) return false;
    const bool found = unpack(*s, out);
    if (s->value == kRare) side_.erase(addr);
    main_.erase(s);
    return found;
  }
  // Adds e, replacing an entry with the same address. False when a table could not grow.
  [[gnu::always_inline]] bool insert(const Entry& e) {
    const bool plain = packs(e);
    if (!plain && !side_.insert(e)) return false;
    bool existed;
    Packed* s = main_.insertSlot(e.addr, &existed);
    if (s == nullptr) {
      if (!plain) side_.erase(e.addr);
      return false;
    }
    if (plain && existed && s->value == kRare) side_.erase(e.addr);  // replaced a rare one
    s->value = plain ? e.id | (e.size << kIdBits) : kRare;
    return true;
  }
  // Forgets addr's entry, if there is one.
  void erase(uintptr_t addr);
  // The number of entries.
  size_t size() const { return main_.size(); }
  // Calls f(Entry&) for every entry, rare entries first; what f changes in the entry's id,
  // size and meta is kept. f must keep the address, and a plain entry plain.
  template <class F>
  void forEach(F f) {
    Entry* rare = side_.slots();
    for (size_t i = 0; i < side_.capacity(); ++i)
      if (rare[i].addr != 0) f(rare[i]);
    Packed* s = main_.slots();
    for (size_t i = 0; i < main_.capacity(); ++i) {
      if (s[i].addr == 0 || s[i].value == kRare) continue;
      Entry e;
      unpack(s[i], &e);
      f(e);
      if (packs(e)) s[i].value = e.id | (e.size << kIdBits);
    }
  }
  // The rare entries, for scans that only concern reaps (every reap and reap object is rare).
  Entry* rareSlots() { return side_.slots(); }
  size_t rareCapacity() const { return side_.capacity(); }
  // Keeps only the rare entries for which keep(entry) is true; the others are forgotten.
  template <class Keep>
  void retainRare(Keep keep) {
    side_.retain([&](const Entry& e) {
      if (keep(e)) return true;
      main_.erase(e.addr);
      return false;
    });
  }

 private:
  // Whether e has a Packed form.
  static bool packs(const Entry& e) {
    return e.meta == 0 && e.id < kIdMask && e.size < kSizeLimit;
  }
  bool unpack(const Packed& s, Entry* out) {
    if (s.value == kRare) {
      const Entry* e = side_.find(s.addr);
      if (e == nullptr) return false;
      *out = *e;
      return true;
    }
    *out = Entry{s.addr, s.value & kIdMask, s.value >> kIdBits, 0};
    return true;
  }

  HashTable<Packed> main_;
  HashTable<Entry> side_;
};

}  // namespace strata::record
