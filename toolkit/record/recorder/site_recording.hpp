// Allocation sites (docs/toolkit/recording.md, "Allocation sites"): with STRATA_TRACE_SITES=1 each
// creating call (malloc, calloc, realloc, the aligned calls, operator new, reap_create and
// reap_malloc) walks its stack (stack_walk.hpp) before taking the lock, the stack is interned
// to a site id under the lock (site_table.hpp), and the event carries it; the loaded objects
// (modules.hpp) are written so that the sites can be symbolized. Creating calls then always
// take the lock path (no per-thread rings: rings are not enabled at all), so the paths
// without sites stay as they are but for one test of `gSites.on` on the lock path of a
// create, in realloc and in the reap calls.
#pragma once
#include <stdint.h>

#include "record/recorder/core.hpp"
#include "record/recorder/modules.hpp"
#include "record/recorder/site_table.hpp"

namespace strata::record {

// on: read-only once recording starts. scans: whether the loaded objects may be scanned
// again (not in the fork child of a threaded process: see sitesAfterForkChild). self: the
// recorder's own code (its frames are not part of a site). table: stack -> site id in this
// process's trace, under the lock. modules: every loaded object seen, appended under the
// lock, read without it.
struct Sites {
  bool on = false;
  bool scans = true;
  bool forkFromThreads = false;  // set by sitesBeforeFork
  uintptr_t selfStart = 0, selfEnd = 0;
  unsigned char* buffer = nullptr;  // the writer's site buffer (mmap memory)
  char exe[strata::trace::kMaxModulePath + 1] = {};
  alignas(64) SiteTable<> table;
  ModuleList modules;
};
[[gnu::visibility("hidden")]] extern Sites gSites;

// At start, before the first writer: the recorder's memory for sites, the walker
// (libunwind's when installed, stack_walk.hpp), the objects loaded now, and a first walk with
// each unwinder (whatever it sets up on its first use happens here, not inside a program's
// call). Turns gSites.on on; false (sites stay off) when out of memory.
bool initSites() noexcept;

// The site buffer a new writer gets: none when sites are off.
strata::trace::SiteBuffer siteBuffer() noexcept;

// A new trace (start, fork child; right after its program chunk): forgets the sites of the
// previous trace (their ids were that trace's) and writes every module known.
void startSites() noexcept;

// Walks the calling thread's stack into s, outside the lock (the walk is the costly part of
// a site: other threads go on meanwhile). A frame in no module known yet makes it scan the
// loaded objects, when the loader has loaded any since the last scan, and write the new ones
// first. Keeps errno.
[[gnu::noinline]] void captureSite(SiteStack* s) noexcept;

// Under the lock: the site of a stack captureSite filled (defined in the trace the first
// time), or kNoSite when it is empty (also: sites off, capture not called).
[[gnu::noinline]] uint64_t siteOfSlow(const SiteStack& s) noexcept;
inline uint64_t siteOf(const SiteStack& s) {
  return s.depth == 0 ? strata::trace::kNoSite : siteOfSlow(s);
}

// The lock path of a creating call with sites on (calls.hpp's logCreate): walk, then the
// event with its site.
[[gnu::noinline]] void logCreateWithSite(Op op, uint8_t flags, uint64_t size, void* p,
                                         unsigned align) noexcept;

// Fork (fork.cpp): before it, notes whether the process has other threads; in the child, no
// more scans if it had, since one of them may have held the loader's lock (dl_iterate_phdr
// takes it, and glibc does not reset it in the child): the child's trace names the objects
// the parent knew, and its stacks are walked by the C++ runtime's unwinder, which finds
// frames without that lock (libunwind's walker takes it for a frame it has not seen).
void sitesBeforeFork() noexcept;
void sitesAfterForkChild() noexcept;

// Outside the lock, before the trailer: writes the objects loaded since the last scan, if
// any (modules that produced no site yet, and libraries loaded where an unloaded one was).
void noteLoadedModules() noexcept;

}  // namespace strata::record
