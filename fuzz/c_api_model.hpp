// The model the C API fuzz target (c_api_fuzz.cpp) checks the reap, region and obstack
// libraries against: the input read as a stream of small numbers, the byte pattern each
// object is filled with (derived from its id), and every live object the model knows of,
// kept by address so that a new object overlapping a live one is caught when it arrives; and
// the slots that hold the reap and region trees.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <vector>

#include "input.hpp"

// A failed check: say which and stop (libFuzzer records the input).
#define CAPI_CHECK(cond, what)                                                   \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "c_api_fuzz: check failed: %s (%s, line %d)\n", what, \
                   #cond, __LINE__);                                             \
      __builtin_trap();                                                          \
    }                                                                            \
  } while (0)

namespace capi {

// The fuzz input as numbers; past its end every read is 0.
class Input : public strata::fuzz::ByteReader {
 public:
  using ByteReader::ByteReader;

  // A request size: mostly below 4 KiB, sometimes tiny, now and then up to 1 MiB, rarely
  // one no allocator can serve (hugeSize).
  std::size_t size() {
    const std::uint8_t kind = byte();
    switch (kind & 7) {
      case 5: return byte() & 63;
      case 6: return (kind & 0x80) ? (static_cast<std::size_t>(u16()) << 4) & 0xFFFFF
                                   : u16() & 0xFFF;
      case 7: return (kind & 0x80) ? hugeSize() : u16() & 0xFFF;
      default: return u16() & 0xFFF;
    }
  }
  // A size that must fail: beyond PTRDIFF_MAX, or beyond any address space.
  std::size_t hugeSize() {
    static constexpr std::size_t kHuge[] = {SIZE_MAX, SIZE_MAX - 8, SIZE_MAX - 4095,
                                            SIZE_MAX / 2 + 1, std::size_t{1} << 62};
    return kHuge[byte() % (sizeof kHuge / sizeof kHuge[0])];
  }
};

// Byte i of the object with id `id`: a table of kPeriod (prime) bytes, entered at a place
// that depends on the id. Filling and checking go by memcpy / memcmp of whole periods, not
// byte by byte: traced for coverage, byte loops would take most of the fuzzer's time.
inline constexpr std::size_t kPeriod = 251;
struct PatternTable {
  std::uint8_t bytes[2 * kPeriod];
  PatternTable() {
    for (std::size_t i = 0; i < 2 * kPeriod; ++i)
      bytes[i] = static_cast<std::uint8_t>((i % kPeriod) * 97 + 13);
  }
};
inline const PatternTable patternTable;
inline std::size_t patternAt(std::uint32_t id, std::size_t i) {
  return (static_cast<std::size_t>(id) * 37 + i) % kPeriod;
}
inline std::uint8_t pattern(std::uint32_t id, std::size_t i) {
  return patternTable.bytes[patternAt(id, i)];
}
// q[0, n) = bytes [from, from + n) of the pattern of id.
inline void patternCopy(std::uint8_t* q, std::uint32_t id, std::size_t from, std::size_t n) {
  const std::uint8_t* src = patternTable.bytes + patternAt(id, from);
  for (std::size_t i = 0; i < n; i += kPeriod)
    std::memcpy(q + i, src, n - i < kPeriod ? n - i : kPeriod);
}
// p[from, to) = the pattern of id there.
inline void fill(std::uint8_t* p, std::uint32_t id, std::size_t from, std::size_t to) {
  if (to > from) patternCopy(p + from, id, from, to - from);
}
inline bool holds(const std::uint8_t* p, std::uint32_t id, std::size_t from, std::size_t to) {
  const std::uint8_t* src = patternTable.bytes + patternAt(id, from);
  for (std::size_t i = from; i < to; i += kPeriod)
    if (std::memcmp(p + i, src, to - i < kPeriod ? to - i : kPeriod) != 0) return false;
  return true;
}
inline bool zeroed(const std::uint8_t* p, std::size_t n) {
  static const std::uint8_t zeros[4096] = {};
  for (std::size_t i = 0; i < n; i += sizeof zeros)
    if (std::memcmp(p + i, zeros, n - i < sizeof zeros ? n - i : sizeof zeros) != 0)
      return false;
  return true;
}
// memcmp that accepts NULL for no bytes.
inline bool same(const void* a, const void* b, std::size_t n) {
  return n == 0 || std::memcmp(a, b, n) == 0;
}

enum class Api { reap, region, obstack };

// One live object: `bytes` hold its pattern; [p, p + extent) is memory no other live object
// may share (at least one byte for a distinct zero-size object).
struct Object {
  std::uint8_t* p;
  std::size_t bytes;
  std::size_t extent;
  std::uint32_t id;
  Api api;
  int owner;  // the reap, region or obstack slot
};

// Bounds that keep one run fast and small.
inline constexpr std::size_t kMaxObjects = 256;
inline constexpr std::size_t kMaxLiveBytes = std::size_t{4} << 20;

// Every live object with an extent, by address.
class Objects {
 public:
  bool roomFor(std::size_t n) const {
    return map_.size() < kMaxObjects && n <= kMaxLiveBytes - bytes_;
  }
  std::uint32_t newId() { return ++lastId_; }

  // Records o, which must not overlap a live object.
  void add(const Object& o) {
    CAPI_CHECK(o.extent > 0, "only objects with an extent are recorded");
    const auto a = reinterpret_cast<std::uintptr_t>(o.p);
    auto next = map_.lower_bound(a);
    if (next != map_.end())
      CAPI_CHECK(a + o.extent <= next->first, "a new object overlaps a live one (above)");
    if (next != map_.begin()) {
      const auto& prev = std::prev(next)->second;
      CAPI_CHECK(reinterpret_cast<std::uintptr_t>(prev.p) + prev.extent <= a,
                 "a new object overlaps a live one (below)");
    }
    map_.emplace(a, o);
    bytes_ += o.extent;
  }
  Object* find(const void* p) {
    auto it = map_.find(reinterpret_cast<std::uintptr_t>(p));
    return it == map_.end() ? nullptr : &it->second;
  }
  void remove(const void* p) {
    auto it = map_.find(reinterpret_cast<std::uintptr_t>(p));
    CAPI_CHECK(it != map_.end(), "the model knows the object");
    bytes_ -= it->second.extent;
    map_.erase(it);
  }
  static void verify(const Object& o) { CAPI_CHECK(holds(o.p, o.id, 0, o.bytes), "contents kept"); }
  void verifyAll() const {
    for (const auto& [a, o] : map_) verify(o);
  }
  // Verifies and forgets every object for which gone(o) says so.
  template <class Pred>
  void dropIf(Pred gone) {
    for (auto it = map_.begin(); it != map_.end();) {
      if (gone(it->second)) {
        verify(it->second);
        bytes_ -= it->second.extent;
        it = map_.erase(it);
      } else {
        ++it;
      }
    }
  }
  // The n-th live object of owner `owner` of api (n taken modulo their count), or nullptr.
  Object* pick(Api api, int owner, unsigned n) {
    std::size_t count = 0;
    for (auto& [a, o] : map_) count += o.api == api && o.owner == owner;
    if (count == 0) return nullptr;
    n %= count;
    for (auto& [a, o] : map_)
      if (o.api == api && o.owner == owner && n-- == 0) return &o;
    return nullptr;
  }
  bool empty() const { return map_.empty(); }

 private:
  std::map<std::uintptr_t, Object> map_;
  std::size_t bytes_ = 0;
  std::uint32_t lastId_ = 0;
};

// ---- reap and region trees ----

inline constexpr int kMaxTrees = 8;  // reap and region slots

// A reap or region slot: its handle, its parent slot (-1: a root) and, for reaps, the
// cleanups registered and not yet run.
template <class Handle>
struct Slot {
  Handle* h = nullptr;
  int parent = -1;
  std::vector<int> cleanups;
  std::size_t count = 0, bytes = 0;  // regions: what region_object_count / live_bytes say
};

// The live slots of v: the n-th (modulo), or -1 when none is live.
template <class S>
int pickSlot(const std::vector<S>& v, unsigned n) {
  int live = 0;
  for (const auto& s : v) live += s.h != nullptr;
  if (live == 0) return -1;
  n %= static_cast<unsigned>(live);
  for (int i = 0; i < static_cast<int>(v.size()); ++i)
    if (v[i].h != nullptr && n-- == 0) return i;
  return -1;
}

// Slot i and all its live descendants.
template <class S>
std::vector<bool> subtree(const std::vector<S>& v, int i, bool withSelf) {
  std::vector<bool> in(v.size(), false);
  in[i] = true;
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t j = 0; j < v.size(); ++j)
      if (!in[j] && v[j].h != nullptr && v[j].parent >= 0 && in[v[j].parent])
        in[j] = grew = true;
  }
  in[i] = withSelf;
  return in;
}

template <class S>
int createSlot(std::vector<S>& v, Input& in, decltype(S::h) (*create)(decltype(S::h))) {
  int free = -1;
  for (int i = 0; i < static_cast<int>(v.size()); ++i)
    if (v[i].h == nullptr) free = i;
  if (free < 0 && static_cast<int>(v.size()) < kMaxTrees) {
    v.emplace_back();
    free = static_cast<int>(v.size()) - 1;
  }
  if (free < 0) return -1;
  const std::uint8_t b = in.byte();
  const int parent = (b & 1) ? pickSlot(v, b >> 1) : -1;
  auto h = create(parent >= 0 ? v[parent].h : nullptr);
  CAPI_CHECK(h != nullptr, "create");
  v[free] = S{};
  v[free].h = h;
  v[free].parent = parent;
  return free;
}

// errno as a failed allocation must leave it.
inline void expectNoMemory(const void* p, const char* what) {
  CAPI_CHECK(p == nullptr, what);
  CAPI_CHECK(errno == ENOMEM, what);
}

}  // namespace capi
