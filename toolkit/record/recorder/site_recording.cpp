// Allocation sites (site_recording.hpp): start, the walk, interning, and writing the modules.
#include "record/recorder/site_recording.hpp"

#include <errno.h>
#include <sys/single_threaded.h>
#include <unistd.h>

#include "record/recorder/events.hpp"
#include "record/recorder/mapped_memory.hpp"
#include "record/recorder/stack_walk.hpp"

namespace strata::record {

constinit Sites gSites;

namespace {

// The writer's site buffer: new sites wait there until the event chunk that names them is
// written (a chunk's worth of them at most, then both are written).
constexpr size_t kSiteBufferBytes = size_t{64} << 10;
// The site table's first size (it doubles as sites are added).
constexpr size_t kInitialSiteSlots = 1024;
// The modules kept: objects a program loads over its whole run, paths included (address
// space: only what is written becomes memory).
constexpr size_t kMaxModules = 4096;
constexpr size_t kModulePathBytes = size_t{4} << 20;

// Under the lock: adds the scanned modules not known yet to gSites.modules and writes them
// (when a writer is running).
void mergeModulesLocked(const ModuleList& scanned) {
  strata::trace::ModuleInfo batch[32];
  size_t n = 0;
  auto write = [&] {
    if (n != 0 && gCore.writer != nullptr) gCore.writer->addModules(batch, n);
    n = 0;
  };
  for (size_t i = 0; i < scanned.size(); ++i) {
    if (!gSites.modules.add(scanned[i])) continue;
    batch[n++] = gSites.modules[gSites.modules.size() - 1].info();
    if (n == sizeof batch / sizeof batch[0]) write();
  }
  write();
  gSites.modules.setGeneration(scanned.generation());
}

// Scans the loaded objects and merges them in (outside the lock; takes it to merge, when
// recording).
void scanModules(bool recordingNow) {
  ModuleList scanned;
  if (!scanLoaded(scanned, gSites.exe)) return;
  if (recordingNow) {
    Locked lock;
    if (on()) mergeModulesLocked(scanned);
  } else {
    mergeModulesLocked(scanned);
  }
  scanned.release();
}

// captureSite, inlined into its caller: each frame walked costs as much as a frame kept, so
// the create path (logCreateWithSite) walks from its own frame, not from one more.
[[gnu::always_inline]] inline void capture(SiteStack* s) {
  const int savedErrno = errno;
  Guard g;  // whatever the walk or the scan allocates passes through
  s->depth = static_cast<uint32_t>(
      walkStack(s->frames, kSiteFrames, gSites.selfStart, gSites.selfEnd));
  size_t hint = 0;
  for (uint32_t i = 0; i < s->depth; ++i) {
    if (gSites.modules.contains(s->frames[i], &hint)) continue;
    // A frame in no known object: one was loaded since (or it is code no object holds, as
    // a JIT's: then the loader's count is unchanged and nothing is scanned).
    if (gSites.scans && loadGeneration() != gSites.modules.generation()) scanModules(true);
    break;
  }
  errno = savedErrno;
}

}  // namespace

bool initSites() noexcept {
  const ssize_t n = ::readlink("/proc/self/exe", gSites.exe, sizeof gSites.exe - 1);
  gSites.exe[n > 0 ? n : 0] = '\0';
  gSites.buffer = static_cast<unsigned char*>(mapPages(kSiteBufferBytes));
  if (gSites.buffer == nullptr || !gSites.table.init(kInitialSiteSlots) ||
      !gSites.modules.init(kMaxModules, kModulePathBytes))
    return false;
  SiteStack warmUp;  // the C++ runtime's unwinder, used in a fork child (see below)
  walkStack(warmUp.frames, kSiteFrames, 0, 0);
  loadFastWalker();
  scanModules(false);
  const size_t self = gSites.modules.find(reinterpret_cast<uintptr_t>(&initSites));
  if (self < gSites.modules.size()) {
    gSites.selfStart = gSites.modules[self].start;
    gSites.selfEnd = gSites.modules[self].end;
  }
  walkStack(warmUp.frames, kSiteFrames, gSites.selfStart, gSites.selfEnd);
  gSites.on = true;
  return true;
}

strata::trace::SiteBuffer siteBuffer() noexcept {
  if (!gSites.on) return {};
  return {gSites.buffer, kSiteBufferBytes};
}

void startSites() noexcept {
  if (!gSites.on) return;
  gSites.table.release();
  if (!gSites.table.init(kInitialSiteSlots)) return;  // no sites in this trace: events say 0
  strata::trace::ModuleInfo batch[32];
  size_t n = 0;
  for (size_t i = 0; i < gSites.modules.size(); ++i) {
    batch[n++] = gSites.modules[i].info();
    if (n == sizeof batch / sizeof batch[0] || i + 1 == gSites.modules.size()) {
      gCore.writer->addModules(batch, n);
      n = 0;
    }
  }
}

void captureSite(SiteStack* s) noexcept { capture(s); }

uint64_t siteOfSlow(const SiteStack& s) noexcept {
  return gSites.table.intern(s, [](const uint64_t* frames, size_t depth) {
    return gCore.writer->defineSite(frames, depth);
  });
}

void logCreateWithSite(Op op, uint8_t flags, uint64_t size, void* p, unsigned align) noexcept {
  SiteStack s;
  capture(&s);
  const uint64_t t = nowNs();
  Locked lock;
  if (!on()) return;
  drainRings();
  createLocked(threadIndex(), op, flags, t, size, reinterpret_cast<uintptr_t>(p), align,
               siteOf(s));
}

void noteLoadedModules() noexcept {
  if (!gSites.on || !gSites.scans) return;
  const int savedErrno = errno;
  Guard g;
  if (loadGeneration() != gSites.modules.generation()) scanModules(true);
  errno = savedErrno;
}

void sitesBeforeFork() noexcept { gSites.forkFromThreads = !__libc_single_threaded; }

void sitesAfterForkChild() noexcept {
  if (!gSites.forkFromThreads) return;
  gSites.scans = false;
  gFastWalker = nullptr;  // its misses look frames up with dl_iterate_phdr, which takes the lock
}

}  // namespace strata::record
