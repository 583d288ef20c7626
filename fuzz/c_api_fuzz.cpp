// libFuzzer target: the reap, region and obstack C APIs driven by the input, read as a
// sequence of calls (create, nested create, malloc, calloc, realloc, free, clear, destroy,
// cleanups, bad pointers; obstack grow, finish, free back), each checked against a model
// (c_api_model.hpp): live objects never overlap, keep their contents, are aligned as the
// header promises and have every requested byte usable; requests that overflow or are
// absurdly large give NULL with errno = ENOMEM; clearing or destroying takes the objects of
// the reap or region and of all its descendants with it and runs the cleanups newest first.
// Everything is destroyed at the end of each input.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

#include "c_api_model.hpp"
#include "c_api_obstack.hpp"
#include "strata/reap.h"
#include "strata/region.h"

namespace {

using capi::Api;
using capi::createSlot;
using capi::pickSlot;
using capi::Slot;
using capi::subtree;
using capi::Input;
using capi::Object;

constexpr std::size_t kAlign = 16;  // reaps promise 16; glibc malloc (regions) aligns 16

bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % kAlign == 0; }

struct Cleanup {
  int slot;
  int seq;
};

struct Run {
  capi::Objects objects;
  std::vector<Slot<strata_reap>> reaps;
  std::vector<Slot<strata_region>> regions;
  std::deque<Cleanup> cleanupArgs;
  std::vector<Cleanup> ran;  // cleanups run, in order
  int nextSeq = 0;
};

Run* run;  // the current input's, for the cleanup function

void onCleanup(void* arg) { run->ran.push_back(*static_cast<Cleanup*>(arg)); }

// ---- reaps ----

void recordReap(Run& r, int slot, void* p, std::size_t asked, std::uint32_t id, bool keep,
                std::size_t kept) {
  CAPI_CHECK(aligned(p), "reap objects are 16-aligned");
  const std::size_t usable = reap_size(r.reaps[slot].h, p);
  CAPI_CHECK(usable >= asked, "reap_size covers the request");
  auto* q = static_cast<std::uint8_t*>(p);
  if (keep) CAPI_CHECK(capi::holds(q, id, 0, kept), "realloc keeps the contents");
  capi::fill(q, id, keep ? kept : 0, usable);
  r.objects.add(Object{q, usable, usable > 0 ? usable : 1, id, Api::reap, slot});
}

// After a clear or destroy: checks that the cleanups of the reaps in `gone` ran, and forgets
// them and the reaps in `dead` (their objects were verified and dropped before the call).
void reapsGone(Run& r, const std::vector<bool>& gone, const std::vector<bool>& dead) {
  std::size_t expected = 0;
  for (std::size_t i = 0; i < gone.size(); ++i) {
    if (!gone[i]) continue;
    const auto& c = r.reaps[i].cleanups;
    expected += c.size();
    std::size_t at = c.size();
    for (const Cleanup& ran : r.ran) {
      if (ran.slot != static_cast<int>(i)) continue;
      CAPI_CHECK(at > 0 && c[at - 1] == ran.seq, "cleanups run once each, newest first");
      --at;
    }
    CAPI_CHECK(at == 0, "every cleanup ran");
  }
  CAPI_CHECK(r.ran.size() == expected, "only the cleared reaps' cleanups ran");
  r.ran.clear();
  for (std::size_t i = 0; i < gone.size(); ++i) {
    if (gone[i]) r.reaps[i].cleanups.clear();
    if (dead[i]) r.reaps[i].h = nullptr;
  }
}

// One operation of the reap C API, chosen by the next input byte, and its check against the
// model. A switch over every operation, kept whole (longer than 80 lines) on purpose: each
// case is a few lines, and the whole model of the API reads in one place; split, it would be
// a dozen one-use functions.
void reapOp(Run& r, Input& in) {
  const std::uint8_t op = in.byte() % 12;
  if (op == 0 || pickSlot(r.reaps, 0) < 0) {
    createSlot(r.reaps, in, reap_create);
    return;
  }
  const int s = pickSlot(r.reaps, in.byte());
  strata_reap* h = r.reaps[s].h;
  switch (op) {
    case 1:
    case 2: {  // malloc (or the paper's reapMalloc)
      const std::size_t n = in.size();
      if (n > (std::size_t{1} << 20)) {
        errno = 0;
        capi::expectNoMemory(reap_malloc(h, n), "reap_malloc of an absurd size");
      } else if (r.objects.roomFor(n)) {
        void* vh = h;
        void* p = op == 1 ? reap_malloc(h, n) : reapMalloc(&vh, n);
        CAPI_CHECK(p != nullptr, "reap_malloc");
        recordReap(r, s, p, n, r.objects.newId(), false, 0);
      }
      return;
    }
    case 3: {  // calloc, the product sometimes overflowing
      const std::size_t count = in.byte() & 1 ? in.hugeSize() : in.u16() & 0x3FF;
      const std::size_t size = in.size();
      std::size_t n;
      if (__builtin_mul_overflow(count, size, &n) || n >= (std::size_t{1} << 62)) {
        errno = 0;
        capi::expectNoMemory(reap_calloc(h, count, size), "reap_calloc overflowing");
      } else if (n <= (std::size_t{1} << 20) && r.objects.roomFor(n)) {
        void* p = reap_calloc(h, count, size);
        CAPI_CHECK(p != nullptr, "reap_calloc");
        CAPI_CHECK(capi::zeroed(static_cast<std::uint8_t*>(p), n), "calloc zeroes");
        recordReap(r, s, p, n, r.objects.newId(), false, 0);
      }
      return;
    }
    case 4: {  // realloc: grow, shrink, to 0 (frees), from NULL, or absurd (fails)
      Object* o = r.objects.pick(Api::reap, s, in.u16());
      const std::size_t n = in.size();
      if (o == nullptr) return;
      const Object old = *o;
      capi::Objects::verify(old);
      if (n > (std::size_t{1} << 20)) {
        errno = 0;
        capi::expectNoMemory(reap_realloc(h, old.p, n), "reap_realloc of an absurd size");
        capi::Objects::verify(old);
        return;
      }
      if (!r.objects.roomFor(n)) return;
      r.objects.remove(old.p);
      void* p = reap_realloc(h, old.p, n);
      if (n == 0 && p == nullptr) return;  // freed
      CAPI_CHECK(p != nullptr, "reap_realloc");
      recordReap(r, s, p, n, old.id, true, n < old.bytes ? n : old.bytes);
      return;
    }
    case 5:
    case 6: {  // free (or reapFree)
      Object* o = r.objects.pick(Api::reap, s, in.u16());
      if (o == nullptr) return;
      const Object old = *o;
      capi::Objects::verify(old);
      r.objects.remove(old.p);
      void* vh = h;
      if (op == 5) {
        reap_free(h, old.p);
      } else {
        reapFree(&vh, old.p);
      }
      return;
    }
    case 7: {  // reap_size agrees with the model
      Object* o = r.objects.pick(Api::reap, s, in.u16());
      if (o != nullptr) CAPI_CHECK(reap_size(h, o->p) == o->bytes, "reap_size is stable");
      return;
    }
    case 8: {  // a pointer of another reap, or inside an object: nothing changes
      const int t = pickSlot(r.reaps, in.byte());
      Object* o = r.objects.pick(Api::reap, t, in.u16());
      if (o == nullptr) return;
      void* bad = o->p;
      if (t == s) {
        if (o->bytes < 2 * kAlign) return;
        bad = o->p + kAlign;
      }
      CAPI_CHECK(reap_size(h, bad) == 0, "reap_size of a pointer not of this reap");
      errno = 0;
      CAPI_CHECK(reap_realloc(h, bad, 8) == nullptr && errno == EINVAL,
                 "reap_realloc of a pointer not of this reap");
      reap_free(h, bad);
      capi::Objects::verify(*o);
      return;
    }
    case 9: {  // a cleanup
      r.cleanupArgs.push_back(Cleanup{s, r.nextSeq++});
      CAPI_CHECK(reap_cleanup_register(h, onCleanup, &r.cleanupArgs.back()) == 0, "cleanup");
      r.reaps[s].cleanups.push_back(r.cleanupArgs.back().seq);
      return;
    }
    case 10: {  // clear (or reapFreeAll): the reap stays, its children go
      const auto gone = subtree(r.reaps, s, true);
      const auto dead = subtree(r.reaps, s, false);
      r.objects.dropIf([&](const Object& o) { return o.api == Api::reap && gone[o.owner]; });
      void* vh = h;
      if (in.byte() & 1) {
        reap_clear(h);
      } else {
        reapFreeAll(&vh);
      }
      reapsGone(r, gone, dead);
      return;
    }
    default: {  // destroy (or reapDestroy)
      const auto gone = subtree(r.reaps, s, true);
      r.objects.dropIf([&](const Object& o) { return o.api == Api::reap && gone[o.owner]; });
      void* vh = h;
      if (in.byte() & 1) {
        reap_destroy(h);
      } else {
        reapDestroy(&vh);
        CAPI_CHECK(vh == nullptr, "reapDestroy clears the variable");
      }
      reapsGone(r, gone, gone);
      return;
    }
  }
}

// ---- regions ----

void regionGone(Run& r, int s, bool destroy) {
  const auto gone = subtree(r.regions, s, true);
  r.objects.dropIf([&](const Object& o) { return o.api == Api::region && gone[o.owner]; });
  const auto dead = subtree(r.regions, s, destroy);
  if (destroy) {
    region_destroy(r.regions[s].h);
  } else {
    region_clear(r.regions[s].h);
    r.regions[s].count = r.regions[s].bytes = 0;
  }
  for (std::size_t i = 0; i < dead.size(); ++i)
    if (dead[i]) r.regions[i].h = nullptr;
}

void regionOp(Run& r, Input& in) {
  const std::uint8_t op = in.byte() % 7;
  if (op == 0 || pickSlot(r.regions, 0) < 0) {
    createSlot(r.regions, in, region_create);
    return;
  }
  const int s = pickSlot(r.regions, in.byte());
  auto& slot = r.regions[s];
  std::size_t n = in.size(), count = 1;
  void* p = nullptr;
  bool zero = false;
  switch (op) {
    case 1:
      if (n > (std::size_t{1} << 20)) {
        errno = 0;
        capi::expectNoMemory(region_alloc(slot.h, n), "region_alloc of an absurd size");
        return;
      }
      if (!r.objects.roomFor(n)) return;
      p = region_alloc(slot.h, n);
      break;
    case 2: {
      count = in.byte() & 1 ? in.hugeSize() : in.u16() & 0x3FF;
      std::size_t total;
      if (__builtin_mul_overflow(count, n, &total) || total > PTRDIFF_MAX) {
        errno = 0;
        capi::expectNoMemory(region_calloc(slot.h, count, n), "region_calloc overflowing");
        return;
      }
      if (total > (std::size_t{1} << 20) || !r.objects.roomFor(total)) return;
      p = region_calloc(slot.h, count, n);
      n = total;
      zero = true;
      break;
    }
    case 3: {  // strdup of a string of n & 1023 letters
      n &= 1023;
      if (!r.objects.roomFor(n + 1)) return;
      std::vector<char> s(n + 1, 0);
      for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + n) % 26);
      p = region_strdup(slot.h, s.data());
      CAPI_CHECK(p != nullptr && std::memcmp(p, s.data(), n + 1) == 0, "region_strdup");
      ++n;
      break;
    }
    case 4:
    case 5:
      regionGone(r, s, op == 5);
      return;
    default:
      CAPI_CHECK(region_object_count(slot.h) == slot.count, "region_object_count");
      CAPI_CHECK(region_live_bytes(slot.h) == slot.bytes, "region_live_bytes");
      return;
  }
  CAPI_CHECK(p != nullptr, "region allocation");
  CAPI_CHECK(aligned(p), "region objects are malloc-aligned");
  auto* q = static_cast<std::uint8_t*>(p);
  if (zero) CAPI_CHECK(capi::zeroed(q, n), "region_calloc zeroes");
  const std::uint32_t id = r.objects.newId();
  capi::fill(q, id, 0, n);
  r.objects.add(Object{q, n, n > 0 ? n : 1, id, Api::region, s});
  ++slot.count;
  slot.bytes += n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Run r;
  run = &r;
  capi::Obstacks obstacks(r.objects);
  Input in(data, size);
  for (unsigned step = 1; !in.empty(); ++step) {
    const std::uint8_t api = in.byte() % 3;
    if (api == 0) reapOp(r, in);
    if (api == 1) regionOp(r, in);
    if (api == 2) obstacks.op(in);
    if (step % 64 == 0) r.objects.verifyAll();
  }
  r.objects.verifyAll();
  // Destroy the roots; their descendants go with them.
  for (int i = 0; i < static_cast<int>(r.reaps.size()); ++i) {
    if (r.reaps[i].h == nullptr || r.reaps[i].parent >= 0) continue;
    const auto gone = subtree(r.reaps, i, true);
    r.objects.dropIf([&](const Object& o) { return o.api == Api::reap && gone[o.owner]; });
    reap_destroy(r.reaps[i].h);
    reapsGone(r, gone, gone);
  }
  for (int i = 0; i < static_cast<int>(r.regions.size()); ++i)
    if (r.regions[i].h != nullptr && r.regions[i].parent < 0) regionGone(r, i, true);
  obstacks.destroyAll();
  CAPI_CHECK(r.objects.empty(), "every object went with its owner");
  run = nullptr;
  return 0;
}
