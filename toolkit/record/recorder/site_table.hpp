// SiteTable: the recorder's stacks interned to site ids, so that a trace defines each distinct
// stack once (TraceWriter::defineSite) and its events name it by id. A hash table in mmap
// memory (HashTable, hash_table.hpp), keyed by a 64-bit hash of the frames; every slot keeps
// its stack, so two stacks with one hash are told apart (the second probes the next key)
// and never share an id. Under the recorder's lock. Tested on its own by
// tests/toolkit/record/record_site_table_test.cpp.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "record/recorder/hash_table.hpp"
#include "strata/platform/memory.hpp"
#include "strata/trace/format.hpp"

namespace strata::record {

// Frames a site keeps: the allocating call and seven callers. Enough to tell a container's
// allocation apart by the code that grows it, and a cost the walk pays per frame on every
// creating call (stack_walk.hpp); deeper sites cost the walk proportionally more.
inline constexpr size_t kSiteFrames = 8;
static_assert(kSiteFrames <= strata::trace::kMaxSiteDepth);

// One captured stack: depth return addresses, innermost first; depth 0 when it could not be
// walked (its event then has no site).
struct SiteStack {
  uint32_t depth = 0;
  uint64_t frames[kSiteFrames];
};

// A slot: the key (a hash of the frames, never 0: HashTable's empty mark), the site id and
// the stack.
struct SiteSlot {
  uintptr_t addr;
  uint64_t id;
  uint32_t depth;
  uint64_t frames[kSiteFrames];
};

// The frames' hash: a multiply-xorshift over depth and frames.
struct FrameHash {
  uint64_t operator()(const uint64_t* frames, size_t depth) const {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ depth;
    for (size_t i = 0; i < depth; ++i) {
      h = (h ^ frames[i]) * 0xBF58476D1CE4E5B9ull;
      h ^= h >> 31;
    }
    return h;
  }
};

template <class Hash = FrameHash>
class SiteTable {
 public:
  bool init(size_t slots) { return table_.init(slots); }
  // Gives the memory back; the table must be init() again before use.
  void release() {
    if (table_.slots() != nullptr)
      platform::unmap(table_.slots(), table_.capacity() * sizeof(SiteSlot));
    table_ = HashTable<SiteSlot>{};
  }
  size_t size() const { return table_.size(); }

  // The site id of stack s: the one it was given before, or a new one from define(frames,
  // depth) (which returns kNoSite when it cannot define one; nothing is kept then). kNoSite
  // for an empty stack, or when the table cannot grow.
  template <class Define>
  uint64_t intern(const SiteStack& s, Define&& define) {
    if (s.depth == 0 || s.depth > kSiteFrames) return strata::trace::kNoSite;
    uint64_t key = hash_(s.frames, s.depth);
    for (;;) {
      if (key == 0) key = 1;
      bool existed = false;
      SiteSlot* slot = table_.insertSlot(key, &existed);
      if (slot == nullptr) return strata::trace::kNoSite;
      if (!existed) {
        const uint64_t id = define(s.frames, static_cast<size_t>(s.depth));
        if (id == strata::trace::kNoSite) {
          table_.erase(slot);
          return id;
        }
        slot->id = id;
        slot->depth = s.depth;
        ::memcpy(slot->frames, s.frames, s.depth * sizeof(uint64_t));
        return id;
      }
      if (slot->depth == s.depth &&
          ::memcmp(slot->frames, s.frames, s.depth * sizeof(uint64_t)) == 0)
        return slot->id;
      key = (key ^ (key >> 29)) * 0x94D049BB133111EBull + 1;  // another stack has this key
    }
  }

 private:
  HashTable<SiteSlot> table_;
  Hash hash_;
};

}  // namespace strata::record
