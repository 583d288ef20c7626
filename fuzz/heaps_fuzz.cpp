// libFuzzer target: the general-purpose compositions (KingsleyHeap, with and without a
// mapping threshold, KingsleyCoalesceHeap, LeaHeap, LeaMallocHeap and StrataHeap, all over
// MmapHeap), plain or under DebugHeap, driven by the input as a sequence of operations and
// checked against a model of the live objects (heaps_model.hpp).
//
// Input: [composition][StrataTunables bits] then operations, each an opcode byte and its
// arguments: malloc(size), free(object), getSize and contents of an object, resize in place
// or by moving (where the heap offers it), memalign (where offered), and the heap's other
// operations (flush, release, trim, check, mallocZeroed, free everything). Checked: requests
// of 2^62 bytes and more fail with ENOMEM and leave the heap usable; all others succeed, are
// aligned, writable up to getSize, never overlap a live object and keep their contents until
// freed; bad alignments fail with EINVAL; a DebugHeap reports nothing (the driver makes no
// mistakes); and once the heap is destroyed the top heaps hold what they held before it.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "../layers/malloc/lea_malloc_heap.hpp"
#include "heaps_model.hpp"
#include "strata/combining/select_mmap_heap.hpp"
#include "strata/general/kingsley_coalesce_heap.hpp"
#include "strata/general/kingsley_heap.hpp"
#include "strata/general/lea_heap.hpp"
#include "strata/general/strata_heap.hpp"
#include "strata/top/memory_account.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/utility/debug_heap.hpp"

namespace {

using namespace strata;
using fuzz::fail;
using fuzz::Input;
using fuzz::kAbsurd;
using fuzz::Model;

using Kingsley = KingsleyHeap<MmapHeap>;
using KingsleyMapped = SelectMmapHeap<std::size_t{128} << 10, KingsleyHeap<MmapHeap>, MmapHeap, true>;
using KingsleyCoalesce = KingsleyCoalesceHeap<MmapHeap>;
using Lea = LeaHeap<MmapHeap, MmapHeap>;
using LeaMalloc = LeaMallocHeap<MmapHeap>;

template <class H>
constexpr bool kIsStrata = std::is_base_of_v<StrataHeap, H>;
template <class H>
constexpr bool kIsDebug = requires(H& h) { h.check(); };

void reportTrap(const DebugReport& r, void*) { fail(r.message, r.pointer, r.requested); }

StrataTunables tunablesFrom(std::uint8_t b) {
  StrataTunables t;
  t.purgeDelayMs = (b & 1) ? 0 : std::uint64_t{1} << 40;  // at once, or never: no clock
  t.dirtySlots = (b & 2) ? 0 : 4;
  constexpr std::size_t kHuge[] = {0, std::size_t{64} << 10, std::size_t{256} << 10,
                                   std::size_t{1} << 20};
  t.hugeThreshold = kHuge[(b >> 2) & 3];
  t.hugeCacheChunks = (b & 16) ? 0 : 16;
  t.segmentCache = (b & 32) ? 0 : 128;
  if (b & 64) t.maxDelayedBytes = std::size_t{1} << 20;
  return t;
}

// Runs the operations on one heap.
template <class H>
class Driver {
 public:
  Driver(H& h, Input& in) : h_(h), in_(in) {}

  void run() {
    for (unsigned ops = 0; !in_.empty() && ops < 4096; ++ops) {
      const std::uint8_t op = in_.byte();
      switch (op & 7) {
        case 0: case 1: case 2: doMalloc(size()); break;
        case 3: doFree(in_.byte()); break;
        case 4: {
          const std::uint8_t which = in_.byte();
          doResize(which, size(), (op >> 3) & 1);
          break;
        }
        case 5: {
          const std::uint8_t align = in_.byte();
          doMemalign(align, size());
          break;
        }
        case 6: doQuery(in_.byte()); break;
        default: doMaintain(op >> 3); break;
      }
    }
    freeAll();
  }

 private:
  static constexpr bool kInPlace = requires(H& h, void* p) { { h.reallocInPlace(p, 1) } -> std::same_as<void*>; };
  static constexpr bool kMoving = requires(H& h, void* p) { { h.reallocMoving(p, 1) } -> std::same_as<void*>; };
  static constexpr bool kMemalign = requires(H& h) { { h.memalign(16, 1) } -> std::same_as<void*>; };
  static constexpr bool kZeroed = requires(H& h) { { h.mallocZeroed(1) } -> std::same_as<void*>; };

  // The next request size. DebugHeap checks every byte of an object, one at a time, when it
  // leaves quarantine, which under the sanitizers costs milliseconds per MiB: below it, large
  // requests stay under 256 KiB so that the fuzzer keeps its pace.
  std::size_t size() {
    const std::size_t n = in_.size();
    if (kIsDebug<H> && n > (std::size_t{64} << 10) && n < kAbsurd)
      return (std::size_t{64} << 10) + n % (std::size_t{192} << 10);
    return n;
  }

  // What a request the heap cannot serve must give: nullptr and errno = `expected`.
  static void expectFailure(void* p, int expected, const char* what) {
    if (p != nullptr) fail(what, p, 0);
    if (errno != expected) fail("wrong errno after a failed request", nullptr, std::size_t(errno));
  }

  // getSize covers the request (exactly, for DebugHeap), and every usable byte is writable.
  void checkSize(void* p, std::size_t n) {
    const std::size_t s = h_.getSize(p);
    if (s < n) fail("getSize below the request", p, s);
    if (kIsDebug<H> && s != n) fail("DebugHeap getSize is not the request", p, s);
    if (s > n) static_cast<volatile unsigned char*>(p)[s - 1] = 0x5a;
  }

  void doMalloc(std::size_t n) {
    if (n >= kAbsurd) {
      errno = 0;
      expectFailure(h_.malloc(n), ENOMEM, "absurd malloc succeeded");
      return;
    }
    if (!model_.fits(n)) return;
    void* p = h_.malloc(n);
    model_.admit(p, n, H::Alignment);
    checkSize(p, n);
  }

  void doFree(std::uint8_t which) {
    if (model_.count() == 0) {
      h_.free(nullptr);
      return;
    }
    h_.free(model_.retire(which % model_.count()));
  }

  void doResize(std::uint8_t which, std::size_t n, bool moving) {
    if (model_.count() == 0) return;
    const std::size_t i = which % model_.count();
    void* p = model_.at(i).p;
    const std::size_t old = model_.at(i).n;
    if (n < kAbsurd && n > old && !model_.fits(n - old)) return;
    void* q = nullptr;
    if (moving) {
      if constexpr (kMoving) q = h_.reallocMoving(p, n);
      else return;
    } else {
      if constexpr (kInPlace) q = h_.reallocInPlace(p, n);
      else return;
      if (q != nullptr && q != p) fail("reallocInPlace moved the object", q, n);
    }
    if (q == nullptr) {
      model_.verify(i);  // p untouched
      return;
    }
    if (n >= kAbsurd) fail("absurd resize succeeded", q, n);
    model_.moved(i, q, n, H::Alignment);
    checkSize(q, n);
  }

  void doMemalign(std::uint8_t a, std::size_t n) {
    if constexpr (kMemalign) {
      constexpr std::size_t kBad[] = {0, 3, 24, 48, std::size_t{1} << 31, SIZE_MAX};
      if (a >= 250) {
        errno = 0;
        expectFailure(h_.memalign(kBad[a - 250], 16), EINVAL, "bad alignment accepted");
        return;
      }
      const std::size_t align = std::size_t{1} << (a % 31);
      if (n >= kAbsurd) {
        errno = 0;
        expectFailure(h_.memalign(align, n), ENOMEM, "absurd memalign succeeded");
        return;
      }
      if (!model_.fits(n)) return;
      void* p = h_.memalign(align, n);
      model_.admit(p, n, align < H::Alignment ? H::Alignment : align);
      checkSize(p, n);
    } else {
      (void)a;
      doMalloc(n);
    }
  }

  void doQuery(std::uint8_t which) {
    if (model_.count() == 0) return;
    const std::size_t i = which % model_.count();
    model_.verify(i);
    checkSize(model_.at(i).p, model_.at(i).n);
  }

  void doMaintain(std::uint8_t v) {
    switch (v & 3) {
      case 0:
        if constexpr (requires { h_.flush(); }) h_.flush();
        if constexpr (requires { h_.release(); }) h_.release();
        if constexpr (kIsStrata<H>) (void)h_.trim(0);
        break;
      case 1:
        if constexpr (kIsDebug<H>) {
          if (h_.check() != 0) fail("DebugHeap::check found damage", nullptr, 0);
        }
        break;
      case 2: {
        const std::size_t n = size();
        if constexpr (kZeroed) {
          if (n >= kAbsurd) {
            errno = 0;
            expectFailure(h_.mallocZeroed(n), ENOMEM, "absurd mallocZeroed succeeded");
            return;
          }
          if (!model_.fits(n)) return;
          auto* p = static_cast<unsigned char*>(h_.mallocZeroed(n));
          if (p == nullptr) fail("mallocZeroed failed", p, n);
          for (std::size_t k = 0; k < n; ++k)
            if (p[k] != 0) fail("mallocZeroed memory is not zero", p, k);
          model_.admit(p, n, H::Alignment);
          checkSize(p, n);
        } else {
          doMalloc(n);
        }
        break;
      }
      default:
        freeAll();
        break;
    }
  }

  void freeAll() {
    while (model_.count() > 0) h_.free(model_.retire(model_.count() - 1));
  }

  H& h_;
  Input& in_;
  Model model_;
};

template <class H>
void runOn(Input& in, std::uint8_t tunables) {
  const std::size_t before = processAccount().held();
  {
    std::unique_ptr<H> h;
    if constexpr (kIsStrata<H>) {
      h = std::make_unique<H>(tunablesFrom(tunables));
    } else {
      (void)tunables;
      h = std::make_unique<H>();
    }
    if constexpr (kIsDebug<H>) h->setReportHandler(&reportTrap);
    Driver<H>(*h, in).run();
  }
  if (processAccount().held() != before)
    fail("the top heaps still hold memory after the heap was destroyed", nullptr,
         processAccount().held() - before);
}

template <class H>
void runWrapped(Input& in, std::uint8_t wrap, std::uint8_t tunables) {
  switch (wrap % 3) {
    case 0: runOn<H>(in, tunables); break;
    case 1: runOn<DebugHeap<H>>(in, tunables); break;
    default: runOn<DebugHeap<H, 0>>(in, tunables); break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  const std::uint8_t selector = in.byte();
  const std::uint8_t tunables = in.byte();
  const std::uint8_t wrap = static_cast<std::uint8_t>(selector / 6);
  switch (selector % 6) {
    case 0: runWrapped<Kingsley>(in, wrap, tunables); break;
    case 1: runWrapped<KingsleyMapped>(in, wrap, tunables); break;
    case 2: runWrapped<KingsleyCoalesce>(in, wrap, tunables); break;
    case 3: runWrapped<Lea>(in, wrap, tunables); break;
    case 4: runWrapped<LeaMalloc>(in, wrap, tunables); break;
    default: runWrapped<StrataHeap>(in, wrap, tunables); break;
  }
  return 0;
}
