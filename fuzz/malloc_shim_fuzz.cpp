// libFuzzer target: MallocShim's C entry points (malloc, free, free_sized, calloc, realloc,
// reallocarray, memalign, posix_memalign, aligned_alloc, valloc, pvalloc,
// malloc_usable_size) over the compositions of the drop-in malloc libraries, called as
// static functions (nothing is exported: the fuzzer's own malloc stays ASan's). The first
// byte picks the heap; the rest is a sequence of calls with any size and alignment (0,
// small, huge, near SIZE_MAX and PTRDIFF_MAX, overflowing products, non-powers of two).
// Each answer must match glibc's (malloc_shim_expect.hpp): success or failure, the errno,
// posix_memalign's code. A result must be aligned as asked and to 16, have a usable size of
// at least the request, be writable throughout, keep its contents across realloc, read as
// zero from calloc, and overlap no live object. Objects up to kKeep bytes stay live (and
// are checked when freed); bigger ones are freed at once; all are freed at the input's end.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>

#include "../layers/malloc/lea_malloc_heap.hpp"
#include "input.hpp"
#include "malloc_shim_expect.hpp"
#include "strata/combining/select_mmap_heap.hpp"
#include "strata/general/kingsley_heap.hpp"
#include "strata/general/strata_heap.hpp"
#include "strata/shim/malloc_shim.hpp"
#include "strata/top/mmap_heap.hpp"
#include "strata/top/sbrk_heap.hpp"
#include "strata/utility/fork_safe_heap.hpp"

namespace {

using strata::fuzz::Outcome;

// The three libraries' compositions (layers/malloc/*.cpp); StrataHeap with its default
// tunables rather than the environment's.
using KingsleyMallocHeap = strata::ForkSafeHeap<
    strata::SelectMmapHeap<std::size_t{128} << 10,
                           strata::KingsleyHeap<strata::SbrkHeap<std::size_t{64} << 30>>,
                           strata::MmapHeap, true>>;
using LeaMallocHeap =
    strata::ForkSafeHeap<strata::LeaMallocHeap<strata::SbrkHeap<std::size_t{64} << 30>>>;

constexpr std::size_t kKeep = std::size_t{2} << 20;      // bigger objects are freed at once
constexpr std::size_t kMaxLiveBytes = std::size_t{24} << 20;
constexpr std::size_t kMaxLive = 64;

[[noreturn]] void fail(const char* what, std::size_t a, std::size_t b) {
  std::fprintf(stderr, "malloc_shim_fuzz: %s (%zu, %zu)\n", what, a, b);
  std::abort();
}

class Input : public strata::fuzz::ByteReader {
 public:
  using ByteReader::ByteReader;
  // A size: 0, small, medium, up to a few MiB, a power of two and its neighbours, near the
  // limits, or any 64 bits.
  std::size_t size() {
    const std::uint8_t kind = byte();
    const std::size_t k = byte();
    switch (kind % 8) {
      case 0: return 0;
      case 1: return k;
      case 2: return k << 8 | byte();
      case 3: return bytes(3) % (kKeep + 4096);
      case 4: return (std::size_t{1} << (k % 64)) + (kind >> 3) - 16;
      case 5: return SIZE_MAX - (kind >> 3);
      case 6: return std::size_t{PTRDIFF_MAX} - 16 + (kind >> 3);
      default: return bytes(8);
    }
  }
  // An alignment: 0, small, a power of two, one next to a power of two, huge, or any.
  std::size_t alignment() {
    const std::uint8_t kind = byte();
    const std::size_t k = byte();
    switch (kind % 6) {
      case 0: return 0;
      case 1: return k;
      case 2: return std::size_t{1} << (k % 64);
      case 3: return (std::size_t{1} << (k % 64)) + (kind >> 3) - 16;
      case 4: return std::size_t{1} << (k % 31);
      default: return bytes(8);
    }
  }
};

// What a live object holds: its tag in every byte, then its size in its first and last
// words (when it has room), so a copy that drops or shifts bytes shows. Filled and checked
// a block at a time (memset, memcmp): per-byte loops would dominate the run.
constexpr std::size_t kBlock = 4096;
const std::uint8_t* tagBlock(std::uint8_t tag) {
  static std::uint8_t blocks[256][kBlock];
  static bool ready = false;
  if (!ready) {
    for (int t = 0; t < 256; ++t) std::memset(blocks[t], t, kBlock);
    ready = true;
  }
  return blocks[tag];
}

struct Object {
  std::size_t size;
  std::uint8_t tag;
};

template <class Shim>
class Driver {
 public:
  ~Driver() {
    for (auto& [address, object] : live_) release(reinterpret_cast<void*>(address), object);
  }

  void run(Input& in) {
    while (!in.empty()) step(in);
  }

 private:
  // One allocation call through the shim, chosen by the next input byte, checked against the
  // live objects. A switch over every entry point, kept whole (longer than 80 lines) on
  // purpose: each case is a few lines, and the entry points read side by side.
  void step(Input& in) {
    const std::uint8_t op = in.byte();
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    switch (op % 12) {
      case 0: {
        const std::size_t n = in.size();
        errno = 0;
        admit(Shim::malloc(n), n, 16, strata::fuzz::mallocOutcome(n), in.byte());
        return;
      }
      case 1: {
        const std::size_t n = in.size(), m = in.size();
        std::size_t total = 0;
        const bool overflow = __builtin_mul_overflow(n, m, &total);
        // Any size: calloc of a huge object must not make it resident (libFuzzer's RSS
        // limit catches a heap that writes zeros over a reused multi-GiB chunk).
        errno = 0;
        void* p = Shim::calloc(n, m);
        if (p != nullptr && !overflow) checkZero(p, total);
        admit(p, total, 16, strata::fuzz::callocOutcome(n, m), in.byte());
        return;
      }
      case 2: {
        const std::size_t a = in.alignment(), n = in.size();
        errno = 0;
        admit(Shim::memalign(a, n), n, effectiveAlign(a), strata::fuzz::memalignOutcome(a, n),
              in.byte());
        return;
      }
      case 3: {
        const std::size_t a = in.alignment(), n = in.size();
        errno = 0;
        admit(Shim::aligned_alloc(a, n), n, effectiveAlign(a),
              strata::fuzz::alignedAllocOutcome(a, n), in.byte());
        return;
      }
      case 4: {
        const std::size_t a = in.alignment(), n = in.size();
        void* p = nullptr;
        errno = 4242;  // posix_memalign never changes errno
        const int rc = Shim::posix_memalign(&p, a, n);
        if (errno != 4242) fail("posix_memalign changed errno", a, n);
        const Outcome want = strata::fuzz::posixMemalignOutcome(a, n);
        if (rc == 0) {
          errno = 0;
          admit(p, n, effectiveAlign(a), want, in.byte());
        } else {
          if (p != nullptr) fail("posix_memalign failed but set *out", a, n);
          if (rc != (want == Outcome::kInval ? EINVAL : ENOMEM) || want == Outcome::kOk)
            fail("posix_memalign's code differs from glibc's", a, n);
        }
        return;
      }
      case 5: {
        const std::size_t n = in.size();
        errno = 0;
        admit(Shim::valloc(n), n, page, strata::fuzz::memalignOutcome(page, n), in.byte());
        return;
      }
      case 6: {
        const std::size_t n = in.size();
        errno = 0;
        void* p = Shim::pvalloc(n);
        std::size_t rounded = n == 0 ? page : (n + page - 1) & ~(page - 1);
        if (p != nullptr && Shim::malloc_usable_size(p) < rounded) fail("pvalloc short", n, 0);
        admit(p, n, page, strata::fuzz::pvallocOutcome(n, page), in.byte());
        return;
      }
      case 7:
      case 8: {  // free, or free_sized / free_aligned_sized, which the shim maps to free
        if (live_.empty()) return;
        auto it = pick(in);
        release(reinterpret_cast<void*>(it->first), it->second);
        live_.erase(it);
        return;
      }
      case 9: realloc(in, false); return;
      case 10: realloc(in, true); return;
      default: {  // realloc / malloc_usable_size / free of nullptr
        errno = 0;
        if (Shim::malloc_usable_size(nullptr) != 0) fail("usable size of nullptr", 0, 0);
        Shim::free(nullptr);
        const std::size_t n = in.size();
        admit(Shim::realloc(nullptr, n), n, 16, strata::fuzz::mallocOutcome(n), in.byte());
        return;
      }
    }
  }

  // realloc or reallocarray of a live object: the contents up to the smaller size survive;
  // 0 frees; a failure leaves the object as it was.
  void realloc(Input& in, bool array) {
    if (live_.empty()) return;
    auto it = pick(in);
    void* p = reinterpret_cast<void*>(it->first);
    const Object old = it->second;
    std::size_t n = in.size(), m = array ? in.size() : 1, total = 0;
    const bool overflow = __builtin_mul_overflow(n, m, &total);
    errno = 0;
    void* q = array ? Shim::reallocarray(p, n, m) : Shim::realloc(p, n);
    if (!overflow && total == 0) {  // freed
      if (q != nullptr) fail("realloc to 0 returned an object", n, m);
      live_.erase(it);
      return;
    }
    const Outcome want = strata::fuzz::callocOutcome(n, m);
    if (q == nullptr) {
      checkFailure(want, total, m);
      checkPattern(p, old);  // intact
      return;
    }
    live_.erase(it);
    checkPrefix(q, old, total < old.size ? total : old.size);
    admit(q, total, 16, want, static_cast<std::uint8_t>(old.tag + 1));
  }

  // The alignment a memalign-style result must have: the request rounded up to a power of
  // two, and at least 16.
  static std::size_t effectiveAlign(std::size_t a) {
    if (a <= 16) return 16;
    if (a > SIZE_MAX / 2 + 1) return 16;  // the call fails anyway
    return strata::fuzz::roundedAlign(a);
  }

  void checkFailure(Outcome want, std::size_t a, std::size_t b) {
    if (want == Outcome::kOk) fail("failed where glibc succeeds", a, b);
    const int expected = want == Outcome::kInval ? EINVAL : ENOMEM;
    if (errno != expected) fail("errno differs from glibc's", a, b);
  }

  // Checks a call's answer p for n bytes aligned to align; keeps it live when it is small.
  void admit(void* p, std::size_t n, std::size_t align, Outcome want, std::uint8_t tag) {
    if (p == nullptr) return checkFailure(want, n, align);
    if (want == Outcome::kNoMem || want == Outcome::kInval)
      fail("succeeded where glibc fails", n, align);
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    if (at % 16 != 0 || at % align != 0) fail("misaligned", n, align);
    const std::size_t usable = Shim::malloc_usable_size(p);
    if (usable < n) fail("usable size below the request", n, usable);
    if (n > kKeep || live_.size() >= kMaxLive || liveBytes_ + n > kMaxLiveBytes) {
      touch(p, n);
      Shim::free(p);
      return;
    }
    auto next = live_.lower_bound(at);
    if (next != live_.end() && next->first < at + (n ? n : 1)) fail("overlap", n, next->second.size);
    if (next != live_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + (prev->second.size ? prev->second.size : 1) > at) fail("overlap", n, 0);
    }
    const Object object{n, tag};
    fill(p, object);
    live_.emplace(at, object);
    liveBytes_ += n;
  }

  // A big object (freed at once): its first and last bytes and 16 pages spread between are
  // writable (touching every page of tens of MiB would dominate the run).
  static void touch(void* p, std::size_t n) {
    if (n == 0) return;
    if (n > strata::fuzz::kSurelyFits) n = strata::fuzz::kSurelyFits;
    auto* bytes = static_cast<volatile std::uint8_t*>(p);
    for (std::size_t i = 0; i < 16; ++i) bytes[n / 16 * i] = 1;
    bytes[n - 1] = 1;
  }

  // calloc's memory reads as zero: all of a kept object, the first and last blocks of a
  // big one.
  static void checkZero(void* p, std::size_t n) {
    if (n > strata::fuzz::kSurelyFits) return;
    const auto* bytes = static_cast<const std::uint8_t*>(p);
    for (std::size_t at = 0; at < n; at += kBlock) {
      if (n > kKeep && at == kBlock) at = (n - 1) / kBlock * kBlock;
      const std::size_t len = std::min(kBlock, n - at);
      if (std::memcmp(bytes + at, tagBlock(0), len) != 0) fail("calloc memory not zero", n, at);
    }
  }

  static void fill(void* p, const Object& object) {
    auto* bytes = static_cast<std::uint8_t*>(p);
    std::memset(bytes, object.tag, object.size);
    if (object.size >= 2 * sizeof(std::size_t)) {
      std::memcpy(bytes, &object.size, sizeof object.size);
      std::memcpy(bytes + object.size - sizeof object.size, &object.size, sizeof object.size);
    }
  }

  // The byte object's i-th position holds (the bulk is its tag, see fill).
  static std::uint8_t expected(const Object& object, std::size_t i) {
    const std::size_t n = object.size, w = sizeof(std::size_t);
    std::uint8_t word[sizeof(std::size_t)];
    std::memcpy(word, &n, w);
    if (n >= 2 * w && i < w) return word[i];
    if (n >= 2 * w && i >= n - w) return word[i - (n - w)];
    return object.tag;
  }

  // p's first m bytes are object's first m bytes (m at most its size).
  static void checkPrefix(const void* p, const Object& object, std::size_t m) {
    const auto* bytes = static_cast<const std::uint8_t*>(p);
    const std::size_t w = sizeof(std::size_t);
    const std::size_t bulkEnd = object.size >= 2 * w ? std::min(m, object.size - w) : m;
    const std::size_t bulkStart = object.size >= 2 * w ? std::min(w, m) : 0;
    for (std::size_t i = 0; i < bulkStart; ++i)
      if (bytes[i] != expected(object, i)) fail("contents changed", object.size, i);
    for (std::size_t at = bulkStart; at < bulkEnd; at += kBlock) {
      const std::size_t len = std::min(kBlock, bulkEnd - at);
      if (std::memcmp(bytes + at, tagBlock(object.tag), len) != 0)
        fail("contents changed", object.size, at);
    }
    for (std::size_t i = std::max(bulkEnd, bulkStart); i < m; ++i)
      if (bytes[i] != expected(object, i)) fail("contents changed", object.size, i);
  }

  static void checkPattern(const void* p, const Object& object) {
    checkPrefix(p, object, object.size);
  }

  std::map<std::uintptr_t, Object>::iterator pick(Input& in) {
    auto it = live_.begin();
    std::advance(it, in.byte() % live_.size());
    return it;
  }

  void release(void* p, const Object& object) {
    checkPattern(p, object);
    liveBytes_ -= object.size;
    Shim::free(p);
  }

  std::map<std::uintptr_t, Object> live_;
  std::size_t liveBytes_ = 0;
};

// One input's calls, then malloc_trim: every object is freed by then, so a heap that can
// give memory back does (the three heaps live for the whole run, and what they keep counts
// against the fuzzer's RSS limit); the next input finds the heap trimmed.
template <class Heap>
void drive(Input& in) {
  {
    Driver<strata::MallocShim<Heap>> driver;
    driver.run(in);
  }
  const int trimmed = strata::MallocShim<Heap>::malloc_trim(0);
  if (trimmed != 0 && trimmed != 1) fail("malloc_trim answered neither 0 nor 1", 0, 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  switch (in.byte() % 3) {
    case 0: drive<strata::StrataHeap>(in); break;
    case 1: drive<KingsleyMallocHeap>(in); break;
    default: drive<LeaMallocHeap>(in); break;
  }
  return 0;
}
