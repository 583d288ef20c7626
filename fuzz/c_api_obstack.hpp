// The obstack half of the C API fuzz target (c_api_fuzz.cpp): up to three obstacks with
// fuzzed chunk sizes and alignments, grown byte by byte, by blocks, ints, pointers and blanks
// (and shrunk), finished, allocated from, and freed back past objects. The growing object must
// hold what was grown into it, wherever it moves; finished objects are aligned to the
// obstack's alignment, keep their contents and never overlap. The chunk functions refuse
// requests beyond a limit and the failure handler returns, so an absurd request must leave
// the obstack as it was (and allocations return NULL). Chunks given out are counted: none
// may be left once an obstack is freed to NULL.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "c_api_model.hpp"
#include "strata/obstack.h"

namespace capi {

inline long obstackChunks;  // chunks the chunk functions hold
inline bool obstackFailed;  // the failure handler ran

inline void* obstackChunkAlloc(void* counter, std::size_t n) {
  if (n > (std::size_t{64} << 20)) return nullptr;
  void* p = std::malloc(n);
  if (p != nullptr) ++*static_cast<long*>(counter);
  return p;
}
inline void obstackChunkFree(void* counter, void* p) {
  --*static_cast<long*>(counter);
  std::free(p);
}
inline void obstackFailedHandler() { obstackFailed = true; }

class Obstacks {
 public:
  explicit Obstacks(Objects& objects) : objects_(objects) {
    obstackChunks = 0;
    strata_obstack_alloc_failed_handler = obstackFailedHandler;
  }

  // One obstack operation on a slot, chosen by the next input byte, checked against the
  // model. A switch over every operation of the obstack API, kept whole (longer than 80
  // lines) on purpose: each case is short, and the model reads in one place.
  void op(Input& in) {
    const std::uint8_t op = in.byte() % 16;
    const int s = in.byte() % kSlots;
    Slot& o = slots_[s];
    if (!o.live) {
      begin(o, in);
      return;
    }
    obstack* h = &o.h;
    const std::size_t n = in.size() & 0xFFF;
    const std::size_t before = o.growing.size();
    switch (op) {
      case 0: {  // grow by a block of the pattern
        if (!objects_.roomFor(before + n)) return;
        std::vector<std::uint8_t> data(n + 1);  // never empty: data() is not NULL
        patternCopy(data.data(), o.id, before, n);
        obstack_grow(h, data.data(), n);
        break;
      }
      case 1:  // grow0: the block and a NUL
        if (!objects_.roomFor(before + n + 1)) return;
        {
          std::vector<std::uint8_t> data(n + 1);  // never empty: data() is not NULL
          patternCopy(data.data(), o.id, before, n);
          obstack_grow0(h, data.data(), n);
          CAPI_CHECK(obstack_object_size(h) == before + n + 1, "grow0 adds n + 1 bytes");
          CAPI_CHECK(static_cast<std::uint8_t*>(obstack_base(h))[before + n] == 0, "grow0 NUL");
        }
        break;
      case 2:
        obstack_1grow(h, pattern(o.id, before));
        break;
      case 3: {
        const int v = static_cast<int>(n * 2654435761u);
        obstack_int_grow(h, v);
        CAPI_CHECK(same(static_cast<char*>(obstack_base(h)) + before, &v, sizeof v),
                   "int_grow");
        break;
      }
      case 4: {
        obstack_ptr_grow(h, &o);
        const void* v = &o;
        CAPI_CHECK(same(static_cast<char*>(obstack_base(h)) + before, &v, sizeof v),
                   "ptr_grow");
        break;
      }
      case 5:  // blank: n bytes more, or fewer
        if (in.byte() & 1) {
          const std::size_t m = n < before ? n : before;
          obstack_blank(h, -static_cast<std::ptrdiff_t>(m));
          o.growing.resize(before - m);
          break;
        }
        if (!objects_.roomFor(before + n)) return;
        obstack_blank(h, n);
        break;
      case 6:  // make_room changes nothing visible
        if (!objects_.roomFor(before + n)) return;
        obstack_make_room(h, n);
        CAPI_CHECK(obstack_room(h) >= n, "make_room makes room");
        break;
      case 7:
      case 8:
        verifyGrowing(o);
        finish(o, obstack_finish(h));
        return;
      case 9:  // alloc / copy / copy0 when no object is growing (else they take it along)
      case 10:
      case 11: {
        if (before != 0 || !objects_.roomFor(n + 1)) return;
        std::vector<std::uint8_t> data(n + 1);  // never empty: data() is not NULL
        fill(data.data(), o.id, 0, n);
        void* p = op == 9    ? obstack_alloc(h, n)
                  : op == 10 ? obstack_copy(h, data.data(), n)
                             : obstack_copy0(h, data.data(), n);
        if (op != 9) CAPI_CHECK(p && same(p, data.data(), n), "copy copies");
        if (op == 11) CAPI_CHECK(static_cast<std::uint8_t*>(p)[n] == 0, "copy0 adds a NUL");
        o.growing.assign(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(n));
        if (op == 11) o.growing.push_back(0);
        fill(static_cast<std::uint8_t*>(p), o.id, 0, o.growing.size());
        fill(o.growing.data(), o.id, 0, o.growing.size());
        finish(o, p);
        return;
      }
      case 12: {  // an absurd request fails and changes nothing
        obstackFailed = false;
        const std::size_t huge = in.hugeSize();
        const std::uint8_t how = in.byte() % 3;
        if (how == 0) CAPI_CHECK(obstack_alloc(h, huge) == nullptr, "obstack_alloc fails");
        if (how == 1) obstack_blank(h, static_cast<std::ptrdiff_t>(huge >> 1));
        if (how == 2) obstack_make_room(h, huge);
        CAPI_CHECK(obstackFailed, "the failure handler ran");
        CAPI_CHECK(obstack_object_size(h) == before, "a failed request changes nothing");
        verifyGrowing(o);
        return;
      }
      case 13:
      case 14:
        freeBack(o, in.u16());
        return;
      default:
        freeAll(o);
        return;
    }
    // A grow: the new bytes get the pattern (written through the base, so each is usable).
    const std::size_t after = obstack_object_size(h);
    if (op != 5) CAPI_CHECK(after >= before, "grow grows");
    if (op == 0 || op == 2) CAPI_CHECK(after == before + (op == 0 ? n : 1), "grow size");
    if (op == 6) CAPI_CHECK(after == before, "make_room adds no bytes");
    if (op == 5 && after > before) CAPI_CHECK(after == before + n, "blank size");
    auto* base = static_cast<std::uint8_t*>(obstack_base(h));
    o.growing.resize(after);
    fill(base, o.id, before, after);
    fill(o.growing.data(), o.id, before, after);
    verifyGrowing(o);
  }

  void destroyAll() {
    for (Slot& o : slots_)
      if (o.live) freeAll(o);
    CAPI_CHECK(obstackChunks == 0, "every chunk was given back");
  }

 private:
  static constexpr int kSlots = 3;
  struct Slot {
    obstack h;
    bool live = false;
    std::size_t alignment = 16;
    std::uint32_t id = 0;  // the growing object's
    std::vector<std::uint8_t> growing;
    std::vector<Object> finished;  // oldest first
  };

  void begin(Slot& o, Input& in) {
    static constexpr std::size_t kChunk[] = {0, 64, 256, 1000, 4064, 16384};
    const std::uint8_t b = in.byte();
    const std::size_t align = (b & 8) ? std::size_t{1} << (b & 7) : 0;
    CAPI_CHECK(obstack_specify_allocation_with_arg(&o.h, kChunk[(b >> 4) % 6], align,
                                                   obstackChunkAlloc, obstackChunkFree,
                                                   &obstackChunks) == 1,
               "obstack_begin");
    o.live = true;
    o.alignment = align == 0 ? 16 : align;
    CAPI_CHECK(static_cast<std::size_t>(obstack_alignment_mask(&o.h)) + 1 == o.alignment,
               "alignment_mask");
    o.growing.clear();
    o.finished.clear();
    o.id = objects_.newId();
  }

  void verifyGrowing(Slot& o) {
    CAPI_CHECK(obstack_object_size(&o.h) == o.growing.size(), "object_size");
    if (o.growing.empty()) return;
    CAPI_CHECK(same(obstack_base(&o.h), o.growing.data(), o.growing.size()),
               "the growing object keeps its bytes");
  }

  // The growing object (checked before the call) became p.
  void finish(Slot& o, void* p) {
    CAPI_CHECK(p != nullptr, "finish");
    // An empty object may sit at the very end of a chunk, unaligned (as in glibc): only
    // objects with bytes are held to the alignment.
    CAPI_CHECK(o.growing.empty() || reinterpret_cast<std::uintptr_t>(p) % o.alignment == 0,
               "finished alignment");
    const std::size_t n = o.growing.size();
    CAPI_CHECK(same(p, o.growing.data(), n), "finish keeps the bytes");
    Object obj{static_cast<std::uint8_t*>(p), n, n, o.id, Api::obstack, 0};
    if (n > 0) objects_.add(obj);
    o.finished.push_back(obj);
    o.growing.clear();
    o.id = objects_.newId();
    CAPI_CHECK(obstack_object_size(&o.h) == 0, "a new object starts empty");
  }

  // Frees the k-th finished object and everything after it, the growing object too.
  void freeBack(Slot& o, unsigned k) {
    if (o.finished.empty()) return;
    k %= o.finished.size();
    for (const Object& obj : o.finished) Objects::verify(obj);
    void* p = o.finished[k].p;
    for (std::size_t i = k; i < o.finished.size(); ++i)
      if (o.finished[i].bytes > 0) objects_.remove(o.finished[i].p);
    o.finished.resize(k);
    obstack_free(&o.h, p);
    o.growing.clear();
    verifyGrowing(o);
    for (const Object& obj : o.finished) Objects::verify(obj);
  }

  void freeAll(Slot& o) {
    for (const Object& obj : o.finished) {
      Objects::verify(obj);
      if (obj.bytes > 0) objects_.remove(obj.p);
    }
    o.finished.clear();
    o.growing.clear();
    obstack_free(&o.h, nullptr);
    o.live = false;
  }

  Objects& objects_;
  Slot slots_[kSlots];
};

}  // namespace capi
