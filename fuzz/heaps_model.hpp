// The model heaps_fuzz checks a heap against: the live objects, each with the bytes it asked
// for, an id and the pattern written over it. No two live objects may overlap, every
// requested byte must be writable, and the pattern must read back unchanged until the object
// is freed or resized. Any broken promise ends the process with a message (fail()).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include "input.hpp"

namespace strata::fuzz {

[[noreturn]] inline void fail(const char* what, const void* p, std::size_t n) {
  std::fprintf(stderr, "heaps_fuzz: %s (object %p, %zu bytes)\n", what, p, n);
  std::fflush(stderr);
  __builtin_trap();
}

// The fuzz input, read front to back; zeros once it runs out.
class Input : public ByteReader {
 public:
  using ByteReader::ByteReader;

  // A request size: mostly small, some medium, a few up to 4 MiB, and absurd ones (2^62 and
  // above, which no heap can serve on a 47-bit address space).
  std::size_t size() {
    const std::uint8_t kind = byte();
    const std::size_t v = u16();
    switch (kind & 7) {
      case 0: case 1: case 2: case 3: return v % 512;
      case 4: case 5: return v;
      case 6: return (v % 4096) * 1024 + (v >> 12);  // up to 4 MiB
      default: break;
    }
    switch ((kind >> 3) & 3) {
      case 0: return SIZE_MAX - v;
      case 1: return (SIZE_MAX >> 1) + v;
      case 2: return (std::size_t{1} << 62) + v;
      default: return SIZE_MAX - (v << 12);
    }
  }
};

inline constexpr std::size_t kAbsurd = std::size_t{1} << 62;
inline constexpr std::size_t kMaxLive = 300;
inline constexpr std::size_t kMaxLiveBytes = std::size_t{48} << 20;

class Model {
 public:
  struct Obj {
    void* p;
    std::size_t n;
    std::uint64_t id;
  };

  std::size_t count() const { return live_.size(); }
  bool fits(std::size_t n) const { return live_.size() < kMaxLive && n <= kMaxLiveBytes - bytes_; }
  const Obj& at(std::size_t i) const { return live_[i]; }

  // Records a new object after checking it against the live ones and the alignment, and
  // writes its pattern over every requested byte.
  void admit(void* p, std::size_t n, std::size_t align) {
    if (p == nullptr) fail("nullptr for a request the heap can serve", p, n);
    if ((reinterpret_cast<std::uintptr_t>(p) & (align - 1)) != 0) fail("misaligned", p, n);
    claim(p, n);
    live_.push_back({p, n, ++ids_});
    bytes_ += n;
    fill(live_.back(), 0);
  }

  // Checks object i's pattern over its first `upTo` bytes (all of them by default).
  void verify(std::size_t i, std::size_t upTo = SIZE_MAX) const {
    const Obj& o = live_[i];
    const std::size_t n = upTo < o.n ? upTo : o.n;
    unsigned char head[8];
    std::memcpy(head, &o.id, sizeof head);
    const auto* b = static_cast<const unsigned char*>(o.p);
    if (std::memcmp(b, head, n < 8 ? n : 8) != 0) fail("object's id bytes changed", o.p, o.n);
    std::uint64_t word;
    std::memset(&word, tag(o.id), sizeof word);
    std::size_t k = 8;
    for (; k + 8 <= n; k += 8) {  // word loads: a memcmp per word would be a sanitizer call
      std::uint64_t w;
      std::memcpy(&w, b + k, 8);
      if (w != word) break;
    }
    for (; k < n; ++k)
      if (b[k] != tag(o.id)) fail("object's contents changed while live", o.p, o.n);
  }

  // Forgets object i (after verifying it) and returns its pointer.
  void* retire(std::size_t i) {
    verify(i);
    void* p = live_[i].p;
    bytes_ -= live_[i].n;
    ranges_.erase(reinterpret_cast<std::uintptr_t>(p));
    live_[i] = live_.back();
    live_.pop_back();
    return p;
  }

  // Object i now lives at q with n bytes, its first min(old, n) bytes carried over: checks
  // them, the new extent against the others, and patterns the rest.
  void moved(std::size_t i, void* q, std::size_t n, std::size_t align) {
    Obj& o = live_[i];
    ranges_.erase(reinterpret_cast<std::uintptr_t>(o.p));
    if ((reinterpret_cast<std::uintptr_t>(q) & (align - 1)) != 0) fail("misaligned after resize", q, n);
    const std::size_t kept = o.n < n ? o.n : n;
    o.p = q;
    verify(i, kept);
    claim(q, n);
    bytes_ = bytes_ - o.n + n;
    o.n = n;
    fill(o, kept);
  }

 private:
  static unsigned char tag(std::uint64_t id) { return static_cast<unsigned char>(id * 0x9d) | 1; }

  void claim(void* p, std::size_t n) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    const std::size_t extent = n == 0 ? 1 : n;
    auto next = ranges_.lower_bound(a);
    if (next != ranges_.end() && next->first < a + extent) fail("overlaps a live object", p, n);
    if (next != ranges_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second > a) fail("overlaps a live object", p, n);
    }
    ranges_.emplace(a, extent);
  }

  // The pattern from byte `from` on: the id in the first 8 bytes, the id's tag after them.
  static void fill(const Obj& o, std::size_t from) {
    auto* b = static_cast<unsigned char*>(o.p);
    unsigned char head[8];
    std::memcpy(head, &o.id, sizeof head);
    for (std::size_t k = from; k < 8 && k < o.n; ++k) b[k] = head[k];
    if (o.n > 8 && from < o.n) {
      const std::size_t start = from > 8 ? from : 8;
      std::memset(b + start, tag(o.id), o.n - start);
    }
  }

  std::vector<Obj> live_;
  std::map<std::uintptr_t, std::size_t> ranges_;
  std::size_t bytes_ = 0;
  std::uint64_t ids_ = 0;
};

}  // namespace strata::fuzz
