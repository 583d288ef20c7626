// MallocShim: the C and C++ allocation interface (malloc, free, calloc, realloc, the aligned
// forms, malloc_usable_size, mallinfo2, operator new/delete ...) over one process-wide heap,
// and STRATA_DEFINE_MALLOC, which exports it, so any thread-safe heap composition becomes a
// malloc replacement usable by LD_PRELOAD or by linking.
//
// What H must offer (MallocShimHeap below): malloc, free and getSize (the usable size), safe
// to call from any thread, default-constructible without calling malloc, and never calling
// malloc itself. The shim builds it on the first call with placement new into static storage
// (before TLS exists, while dlsym allocates) and never destroys it: objects may be freed by
// exit handlers after every destructor has run. Optional members, used when present:
//   void* memalign(size_t align, size_t n)   native aligned allocation (any power of two up
//                                            to 1 GiB), the result freed by free;
//   void* reallocInPlace(void* p, size_t n)  p resized where it is, or nullptr, p untouched;
//   void* reallocMoving(void* p, size_t n)   p grown to n without copying (its pages moved,
//                                            as mremap does), or nullptr, p untouched;
//   void* mallocZeroed(size_t n)             n bytes that read as zero (calloc), for a heap
//                                            that knows which of its memory is still zero;
//   int trim(size_t pad)                     malloc_trim: 1 if memory went back, else 0;
//   void prepareFork() / parentAfterFork() / childAfterFork()   registered with
//                                            pthread_atfork once the heap is built;
//   strata::MallocStats stats()              what mallinfo2 and malloc_stats report (or any
//                                            struct with MallocStats's three fields);
//   void foreignPointer(void* p)             told of each pointer the shim finds foreign
//                                            (a hardened heap reports it and aborts).
//
// Semantics (glibc's where C leaves a choice):
//  - every result is aligned to 16; malloc(0) returns a unique pointer that free takes;
//  - a request above PTRDIFF_MAX, an overflowing calloc/reallocarray/pvalloc size, or a heap
//    that runs dry: nullptr with errno = ENOMEM (posix_memalign returns ENOMEM instead, and
//    leaves errno alone; it returns EINVAL when the alignment is not a power of two multiple
//    of sizeof(void*));
//  - memalign rounds a non-power-of-two alignment up to the next power of two, as glibc does;
//    aligned_alloc rejects one (EINVAL), as glibc 2.38 and C17 do; an alignment above
//    SIZE_MAX / 2 + 1 is EINVAL, 2^63 (and, over a heap with memalign, anything above 1 GiB)
//    is ENOMEM;
//  - realloc(nullptr, n) is malloc(n); realloc(p, 0) frees p and returns nullptr (glibc's
//    behaviour; C23 leaves it undefined); a grow or shrink keeps p when H::reallocInPlace
//    manages it (for an aligned object, on the block it was carved from), or when n fits
//    p's usable size and wastes at most half of it plus 4 KiB;
//    on failure p is left intact and the result is nullptr with errno = ENOMEM;
//  - free_sized and free_aligned_sized are free (the size is not checked);
//  - operator new loops on the new_handler and throws std::bad_alloc; the nothrow forms
//    return nullptr; sized delete ignores the size.
//
// Aligned allocation over a heap without memalign: the shim asks H for n + align - 16
// bytes and returns the first aligned address q inside. When that is not the block's own
// start, the word just below q gets kAlignedMark (kFlagFirstInRun alone) with the distance
// back to the block's start above the flag bits. No live object of a header-keeping Strata
// heap ever carries that pattern: SizeHeap's header has no flags, MmapHeap's has
// kFlagMmapped and a live CoalesceableHeap block has kFlagInUse. So free and getSize look
// at the word below any pointer and step back to the real block when they find the mark.
// This needs H's objects to carry the shared header word (strata/detail/header.hpp) just
// below them; a heap whose objects do not (size-class pages without headers) must provide
// memalign, and then the shim never reads below a pointer.
//
// Foreign pointers (never handed out by this heap): what is detected, cheaply, is exactly
//  - a pointer that is not 16-byte aligned (free, realloc and malloc_usable_size ignore it;
//    realloc returns nullptr and malloc_usable_size 0), and
//  - over a heap without memalign, a pointer whose header word carries the aligned mark with
//    a distance of 0 or above 2^40 (ignored the same way).
// Builds without NDEBUG also print "strata malloc: ignoring foreign pointer" on stderr.
// Anything else (an aligned interior pointer, a double free) is trusted and passed to H,
// whose own checks, if any, apply.
//
// The parts, one header each: process_heap.hpp (building H once, fork), malloc_stats.hpp
// (mallinfo2 and malloc_stats), operator_new.hpp (the C++ operators over the C entry points),
// entry_points.hpp (the list STRATA_DEFINE_MALLOC exports).
#pragma once
#include <malloc.h>

#include <algorithm>
#include <cerrno>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "strata/detail/align.hpp"
#include "strata/detail/header.hpp"
#include "strata/platform/page.hpp"
#include "strata/shim/entry_points.hpp"
#include "strata/shim/malloc_stats.hpp"
#include "strata/shim/operator_new.hpp"
#include "strata/shim/process_heap.hpp"

namespace strata {

// The minimum H must offer the shim.
template <class H>
concept MallocShimHeap = std::default_initializable<H> && requires(H& h, std::size_t n, void* p) {
  { h.malloc(n) } -> std::same_as<void*>;
  { h.free(p) } -> std::same_as<void>;
  { h.getSize(p) } -> std::same_as<std::size_t>;
};

template <MallocShimHeap H>
class MallocShim : public OperatorNew<MallocShim<H>> {
 public:
  static constexpr std::size_t kMinAlign = 16;
  static constexpr std::size_t kAlignedMark = detail::kFlagFirstInRun;
  static constexpr std::size_t kMaxMarkOffset = std::size_t{1} << 40;
  static constexpr std::size_t kMaxNativeAlign = std::size_t{1} << 30;  // H::memalign's limit
  static constexpr bool kNativeMemalign = requires(H& h, std::size_t n) {
    { h.memalign(n, n) } -> std::same_as<void*>;
  };
  static constexpr bool kNativeReallocInPlace = requires(H& h, void* p, std::size_t n) {
    { h.reallocInPlace(p, n) } -> std::same_as<void*>;
  };

  // realloc keeps p when n fits its usable size and wastes at most half of it plus this
  // much: a policy (small shrinks keep their block), not the page size.
  static constexpr std::size_t kReallocSlack = 4096;

  // The process-wide heap, built on first use. Fast path: an acquire load and a branch.
  static H& heap() noexcept { return ProcessHeap<H>::get(); }

  // ---- C entry points. Each costs H's own call plus a compare or two.

  // H's malloc, with 0 made 1 (a unique object) and ENOMEM on failure. Fast path: H's
  // malloc plus two compares.
  static void* malloc(std::size_t n) noexcept {
    if (n > PTRDIFF_MAX) [[unlikely]] return outOfMemory();
    void* p = heap().malloc(n == 0 ? 1 : n);
    if (p == nullptr) [[unlikely]] return outOfMemory();
    return p;
  }

  // Back to H, at the block's real start. Fast path: H's free plus an alignment test and,
  // over a heap without memalign, one header load (for the aligned mark).
  static void free(void* p) noexcept {
    if (p == nullptr) return;
    void* block = realBlock(p);
    if (block == nullptr) [[unlikely]] return;
    heap().free(block);
  }

  // H's mallocZeroed when it has one (it knows which memory is still zero); else malloc
  // plus a memset of the n*m bytes asked for. Over a heap without memalign (so with
  // the shared header word), an object whose header has kFlagMmapped is a fresh mapping
  // (MmapHeap never recycles one), already zero: its pages are not touched.
  static void* calloc(std::size_t n, std::size_t m) noexcept {
    std::size_t total;
    if (!detail::checked_mul(n, m, total)) return outOfMemory();
    if constexpr (requires(H& h) { { h.mallocZeroed(total) } -> std::same_as<void*>; }) {
      if (total > PTRDIFF_MAX) return outOfMemory();
      void* z = heap().mallocZeroed(total == 0 ? 1 : total);
      return z != nullptr ? z : outOfMemory();
    }
    void* p = malloc(total);
    if (p == nullptr) return nullptr;
    if constexpr (!kNativeMemalign) {
      if ((detail::header_word(p) & detail::kFlagMmapped) != 0) return p;
    }
    std::memset(p, 0, total);
    return p;
  }

  // In place when H::reallocInPlace manages it or the block already fits well (see the top
  // of this file), else malloc, copy, free. Fast path (fits): a getSize and two compares.
  static void* realloc(void* p, std::size_t n) noexcept {
    if (p == nullptr) return malloc(n);
    if (n == 0) {
      free(p);
      return nullptr;
    }
    if (n > PTRDIFF_MAX) return outOfMemory();
    void* block = realBlock(p);
    if (block == nullptr) [[unlikely]] return nullptr;
    const std::size_t have = usableOf(p, block);
    if constexpr (kNativeReallocInPlace) {
      // An aligned object carved out of a block is resized with its block (the bytes before
      // it, and its mark, stay where they are).
      const auto offset = static_cast<std::size_t>(detail::bytes(p) - detail::bytes(block));
      if (heap().reallocInPlace(block, offset + n) != nullptr) return p;
    }
    if (n <= have && have - n <= have / 2 + kReallocSlack) return p;
    if constexpr (requires(H& h) { { h.reallocMoving(p, n) } -> std::same_as<void*>; }) {
      // Moved whole with its block, an aligned object keeps its offset (and its mark);
      // its alignment beyond 16 need not survive a realloc.
      const auto offset = static_cast<std::size_t>(detail::bytes(p) - detail::bytes(block));
      if (void* q = heap().reallocMoving(block, offset + n)) return detail::bytes(q) + offset;
    }
    void* q = malloc(n);
    if (q == nullptr) return nullptr;  // errno set, p intact
    std::memcpy(q, p, n < have ? n : have);
    heap().free(block);
    return q;
  }

  // realloc of n*m bytes, ENOMEM when the product overflows.
  static void* reallocarray(void* p, std::size_t n, std::size_t m) noexcept {
    std::size_t total;
    if (!detail::checked_mul(n, m, total)) return outOfMemory();
    return realloc(p, total);
  }

  // glibc's memalign: a non-power-of-two alignment is rounded up; one that cannot be (above
  // SIZE_MAX / 2 + 1) is EINVAL; 2^63 itself is a valid alignment that no memory satisfies
  // (ENOMEM).
  static void* memalign(std::size_t align, std::size_t n) noexcept {
    if (align <= kMinAlign) return malloc(n);
    if (align > SIZE_MAX / 2 + 1) {
      errno = EINVAL;
      return nullptr;
    }
    if (!detail::is_pow2(align)) align = std::size_t{1} << (64 - __builtin_clzll(align));
    return alignedMalloc(align, n);
  }

  // POSIX: EINVAL for an alignment that is not a power-of-two multiple of sizeof(void*),
  // ENOMEM on failure, 0 and *out set on success; errno is never changed.
  static int posix_memalign(void** out, std::size_t align, std::size_t n) noexcept {
    if (align % sizeof(void*) != 0 || !detail::is_pow2(align)) return EINVAL;
    const int saved = errno;
    void* p = align <= kMinAlign ? malloc(n) : alignedMalloc(align, n);
    errno = saved;
    if (p == nullptr) return ENOMEM;
    *out = p;
    return 0;
  }

  // C11 argument order (alignment first); any power of two, EINVAL otherwise.
  static void* aligned_alloc(std::size_t align, std::size_t n) noexcept {
    if (!detail::is_pow2(align)) {
      errno = EINVAL;
      return nullptr;
    }
    return memalign(align, n);
  }

  // Page-aligned n bytes.
  static void* valloc(std::size_t n) noexcept { return memalign(platform::pageSize(), n); }

  // Page-aligned, n rounded up to whole pages (at least one); ENOMEM when that overflows.
  static void* pvalloc(std::size_t n) noexcept {
    std::size_t rounded;
    const std::size_t page = platform::pageSize();
    if (!detail::checked_align_up(n == 0 ? 1 : n, page, rounded)) return outOfMemory();
    return memalign(page, rounded);
  }

  // The bytes p may use (at least what was asked); 0 for nullptr or a foreign pointer.
  static std::size_t malloc_usable_size(void* p) noexcept {
    if (p == nullptr) return 0;
    void* block = realBlock(p);
    return block == nullptr ? 0 : usableOf(p, block);
  }

  // H's trim when it has one (1 if memory went back to the system), else 0.
  static int malloc_trim(std::size_t pad) noexcept {
    if constexpr (requires(H& h) { { h.trim(pad) } -> std::convertible_to<int>; }) {
      return heap().trim(pad);
    } else {
      return 0;
    }
  }

  // The heap's statistics (zeros when H has no stats()). H::stats() may return MallocStats
  // or any struct with the same three fields.
  static MallocStats stats() noexcept {
    if constexpr (ReportsMallocStats<H>) {
      const auto s = heap().stats();
      return {s.bytesFromSystem, s.bytesInUse, s.peakBytesFromSystem};
    } else {
      return {};
    }
  }

  // The statistics as mallinfo2's fields (malloc_stats.hpp says which is which).
  static struct mallinfo2 mallinfo2() noexcept { return detail::toMallinfo2(stats()); }

  // Prints the statistics on stderr in glibc's layout; nothing allocates.
  static void malloc_stats() noexcept { detail::printMallocStats(stats()); }

  // The C++ operators new and delete: OperatorNew (operator_new.hpp), over the above.

 private:
  [[gnu::cold]] static void* outOfMemory() noexcept {
    errno = ENOMEM;
    return nullptr;
  }

  // The block H handed out that p lies in: p itself, or, over a heap without memalign,
  // the block an aligned mark below p points back to. nullptr for a detected foreign pointer.
  static void* realBlock(void* p) noexcept {
    if (!detail::is_aligned(p, kMinAlign)) [[unlikely]] return foreign(p);
    if constexpr (kNativeMemalign) {
      return p;
    } else {
      const std::size_t word = detail::header_word(p);
      if ((word & detail::kFlagMask) != kAlignedMark) [[likely]] return p;
      const std::size_t offset = word & ~detail::kFlagMask;
      if (offset == 0 || offset > kMaxMarkOffset) [[unlikely]] return foreign(p);
      return detail::bytes(p) - offset;
    }
  }

  // The usable size of p, which lies in block.
  static std::size_t usableOf(void* p, void* block) noexcept {
    const std::size_t offset = static_cast<std::size_t>(detail::bytes(p) - detail::bytes(block));
    return heap().getSize(block) - offset;
  }

  // An aligned object: H's own memalign, or carved out of a bigger block and marked.
  static void* alignedMalloc(std::size_t align, std::size_t n) noexcept {
    if (n > PTRDIFF_MAX) return outOfMemory();
    if (n == 0) n = 1;
    if constexpr (kNativeMemalign) {
      if (align > kMaxNativeAlign) return outOfMemory();  // beyond what H::memalign takes
      void* p = heap().memalign(align, n);
      return p != nullptr ? p : outOfMemory();
    } else {
      std::size_t request;
      if (!detail::checked_add(n, align - kMinAlign, request) || request > PTRDIFF_MAX)
        return outOfMemory();
      void* block = heap().malloc(request);
      if (block == nullptr) return outOfMemory();
      if (detail::is_aligned(block, align)) return block;
      const auto at = reinterpret_cast<std::uintptr_t>(block);
      void* q = reinterpret_cast<void*>((at + align - 1) & ~(std::uintptr_t{align} - 1));
      const std::size_t offset = static_cast<std::size_t>(detail::bytes(q) - detail::bytes(block));
      detail::header_word(q) = offset | kAlignedMark;
      return q;
    }
  }

  [[gnu::cold, gnu::noinline]] static void* foreign([[maybe_unused]] void* p) noexcept {
    if constexpr (requires(H& h) { h.foreignPointer(p); }) heap().foreignPointer(p);
#ifndef NDEBUG
    char text[96];
    const int len = std::snprintf(text, sizeof text,
                                  "strata malloc: ignoring foreign pointer %p\n", p);
    if (len > 0)
      platform::writeStderr(text, std::min(static_cast<std::size_t>(len), sizeof text - 1));
#endif
    return nullptr;
  }
};

}  // namespace strata

// STRATA_DEFINE_MALLOC(ShimType): placed once at namespace scope in one .cpp file, defines and
// exports every allocation entry point over ShimType (a strata::MallocShim<H>): the C
// functions, glibc's __libc_* aliases, and every replaceable operator new and delete, as
// listed in entry_points.hpp (the list the recorder interposes too), each calling the
// ShimType member its entry names. A macro because C linkage names cannot come from a
// template. Build the file with -fvisibility=hidden (these stay visible) and -fno-builtin (so
// the compiler does not turn the shim's own code into calls of the functions being defined).
#define STRATA_SHIM_DEFINE_ENTRY_(ShimType, kind, ret, name, params, spec, role, args) \
  [[gnu::visibility("default")]] ret name params spec { return ShimType::role args; }
#define STRATA_DEFINE_MALLOC(ShimType)                                \
  extern "C" {                                                      \
  STRATA_C_ENTRY_POINTS(STRATA_SHIM_DEFINE_ENTRY_, ShimType)        \
  }                                                                 \
  STRATA_CXX_ENTRY_POINTS(STRATA_SHIM_DEFINE_ENTRY_, ShimType)      \
  static_assert(true, "STRATA_DEFINE_MALLOC ends here")
