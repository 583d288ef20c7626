// Large objects: those whose Touch event says how much of them the program touched (the page
// logic is touch.hpp's). An object is large when its requested size is at least two pages: a
// smaller one holds at most one whole page inside it (none when it straddles a page
// boundary), so giving its pages back would save a replay at most a page of writes while
// costing two system calls per object and a page fault per touched page. Every object made
// by malloc, calloc, realloc, the memalign family or operator new of that size has its whole
// interior pages given back to the kernel at creation ("prepared"), and only those go into
// the table, with their requested size (by the creating thread, before the program sees the
// object): the thread that frees one measures it before the free, and the exit path lists the
// live ones. Reap objects are never prepared.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "record/recorder/object_map.hpp"
#include "record/recorder/prepared_table.hpp"
#include "strata/platform/page.hpp"
#include "record/recorder/touch.hpp"

namespace strata::record {

// threshold is ~0 until the recorder starts; it and pageSize are read-only afterwards. The
// table of prepared objects is lock-free (prepared_table.hpp).
struct LargeObjects {
  uint64_t threshold = ~uint64_t{0};
  size_t pageSize = platform::kPageSize;
  PreparedTable prepared;
};
[[gnu::visibility("hidden")]] extern LargeObjects gLarge;

// "No Touch measured", passed to the release paths.
inline constexpr uint64_t kNoTouch = kTouchUnknown;

// The size from which objects are large: two pages, or `setting` (STRATA_TRACE_TOUCH_MIN)
// bytes when that is a larger number, or never when it is "off" (a warning on stderr when
// it is neither). Measuring costs the program a page fault per page it touches of every
// large object (the pages it would have reused resident were given back), so a program with
// many large short-lived objects that it writes whole records faster with a larger
// threshold or none.
uint64_t largeThreshold(const char* setting) noexcept;

// Whether the map entry e is the object a table entry of `prepared` bytes was made for: the
// same requested size, and not a reap or a reap's object (an entry left by an object whose
// free the recorder did not see must not stand for the one now at its address).
inline bool isPrepared(const Entry& e, uint64_t prepared) {
  return prepared != 0 && prepared == e.size && !metaIsReap(e.meta) &&
         metaReap(e.meta) == kNoObject;
}

// Notes that the object at p of `size` bytes, at least the threshold, was just created: in
// the table when it was prepared (true when it is there), else out of it (an entry left at
// that address by an object whose free the recorder did not see must not stand for this one).
[[gnu::noinline]] bool noteLarge(uintptr_t p, uint64_t size, bool prepared) noexcept;

// Appends a Touch event for every live prepared large object (under the lock, the rings
// merged): the end of the trace ends them too, and a replay must know what they held.
void touchLiveLarge() noexcept;

// Whether the block p (from glibc's malloc, or null) is big enough to hold a large object:
// its chunk size, in the word before it (flags in the low 3 bits), is at least the threshold.
// A free reads that word first anyway, so this costs no cache miss; the requested size is
// never larger than the chunk, so no large object is missed, and the few blocks that pass
// without holding one are looked up and let go.
inline bool mayBeLarge(const void* p) {
  if (p == nullptr) return false;
  const size_t chunk = static_cast<const size_t*>(p)[-1] & ~size_t{7};
  return chunk >= gLarge.threshold;
}

}  // namespace strata::record
