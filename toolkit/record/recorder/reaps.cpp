// Recording the reap, region and obstack APIs (reaps.hpp).
#include "record/recorder/reaps.hpp"

#include <sys/mman.h>

#include <algorithm>

#include "record/recorder/events.hpp"
#include "record/recorder/mapped_memory.hpp"
#include "record/recorder/site_recording.hpp"
#include "strata/platform/memory.hpp"

namespace strata::record {

using strata::trace::kFlagFailed;
using strata::trace::kFlagNull;

namespace {

// The id of the live reap whose handle is h, or kNoObject (under the lock).
uint64_t reapId(const void* h) {
  if (h == nullptr) return kNoObject;
  Entry e;
  return (gCore.map.find(reinterpret_cast<uintptr_t>(h), &e) && metaIsReap(e.meta)) ? e.id
                                                                                    : kNoObject;
}

// recordReapMalloc under the lock, stamped t, from allocation site `site`.
void reapMallocLocked(uint64_t t, const void* r, uint64_t size, void* p, uint64_t site) {
  const uint64_t rid = reapId(r);
  if (rid == kNoObject) {
    if (p == nullptr) return;
    createLocked(threadIndex(), Op::Malloc, 0, t, size, reinterpret_cast<uintptr_t>(p), 0, site);
    return;
  }
  const uint64_t id = append(Op::ReapMalloc, p == nullptr ? kFlagFailed : 0, t, size, kNoObject,
                             rid, 0, site);
  if (p != nullptr && id < Writer::kRejected) {
    gCore.map.insert(Entry{reinterpret_cast<uintptr_t>(p), id, size, makeMeta(rid, false, 0)});
    dragCreate(id, reinterpret_cast<uintptr_t>(p), size);
  }
}

// recordReapFree under the lock, stamped t.
void reapFreeLocked(uint64_t t, const void* r, void* p) {
  const uint64_t rid = reapId(r);
  if (rid == kNoObject) {
    if (p != nullptr) {  // an object we saw as a plain malloc (its reap was unknown)
      Entry e;
      if (gCore.map.find(reinterpret_cast<uintptr_t>(p), &e) && !metaIsReap(e.meta) &&
          metaReap(e.meta) == kNoObject)
        releaseLocked(threadIndex(), Op::Free, t, e.addr, kNoTouch);
    }
    return;
  }
  if (p == nullptr) {
    append(Op::ReapFree, kFlagNull, t, 0, kNoObject, rid, 0);
    return;
  }
  Entry e;
  if (!gCore.map.find(reinterpret_cast<uintptr_t>(p), &e) || metaIsReap(e.meta) ||
      metaReap(e.meta) != rid)
    return;
  append(Op::ReapFree, 0, t, 0, e.id, rid, 0);
  gCore.map.erase(e.addr);
  dragRelease(e.addr);
}

// The ids of reap rid and its descendants (found by repeated scans of the map's rare entries
// for children of the set), in mmap memory; n == 0 when out of memory.
struct ReapSet {
  uint64_t* ids = nullptr;
  size_t n = 0, cap = 0;

  explicit ReapSet(uint64_t rid) {
    ids = static_cast<uint64_t*>(mapPages(64 * sizeof(uint64_t)));
    if (ids == nullptr) return;
    cap = 64;
    ids[n++] = rid;
    for (bool changed = true; changed;) {
      changed = false;
      Entry* s = gCore.map.rareSlots();
      for (size_t i = 0; i < gCore.map.rareCapacity(); ++i) {
        if (s[i].addr == 0 || !metaIsReap(s[i].meta) || s[i].size == kNoObject) continue;
        if (!contains(s[i].size) || contains(s[i].id)) continue;
        if (n == cap && !grow()) break;
        ids[n++] = s[i].id;
        changed = true;
      }
    }
  }
  ~ReapSet() {
    if (ids != nullptr) platform::unmap(ids, cap * sizeof(uint64_t));
  }
  ReapSet(const ReapSet&) = delete;
  ReapSet& operator=(const ReapSet&) = delete;
  bool contains(uint64_t id) const {
    for (size_t i = 0; i < n; ++i)
      if (ids[i] == id) return true;
    return false;
  }
  bool grow() {
    auto* bigger = static_cast<uint64_t*>(mapPages(2 * cap * sizeof(uint64_t)));
    if (bigger == nullptr) return false;
    std::copy(ids, ids + n, bigger);
    platform::unmap(ids, cap * sizeof(uint64_t));
    ids = bigger;
    cap *= 2;
    return true;
  }
};

}  // namespace

// The creating calls walk their stack first when sites are on (site_recording.hpp).
void recordReapCreate(const void* parent, void* r) noexcept {
  SiteStack stack;
  if (gSites.on) captureSite(&stack);
  const uint64_t t = nowNs();
  Locked lock;
  if (!on()) return;
  drainRings();
  const uint64_t parentId = reapId(parent);
  uint8_t flags = parentId == kNoObject ? kFlagNull : 0;
  if (r == nullptr) flags |= kFlagFailed;
  const uint64_t id = append(Op::ReapCreate, flags, t, 0, kNoObject, parentId, 0, siteOf(stack));
  if (r != nullptr && id < Writer::kRejected)
    gCore.map.insert(
        Entry{reinterpret_cast<uintptr_t>(r), id, parentId, makeMeta(kNoObject, true, 0)});
}

void recordReapMalloc(const void* r, uint64_t size, void* p) noexcept {
  SiteStack stack;
  if (gSites.on) captureSite(&stack);
  const uint64_t t = nowNs();
  Locked lock;
  if (!on()) return;
  drainRings();
  reapMallocLocked(t, r, size, p, siteOf(stack));
}

void recordReapFree(const void* r, void* p) noexcept {
  const uint64_t t = nowNs();
  Locked lock;
  if (!on()) return;
  drainRings();
  reapFreeLocked(t, r, p);
}

void recordReapClear(const void* r, bool destroy) noexcept {
  const uint64_t t = nowNs();
  Locked lock;
  if (!on()) return;
  drainRings();
  const uint64_t rid = reapId(r);
  if (rid == kNoObject) return;
  append(destroy ? Op::ReapDestroy : Op::ReapClear, 0, t, 0, kNoObject, rid, 0);
  const ReapSet set(rid);
  if (set.n == 0) return;
  gCore.map.retainRare([&](const Entry& e) {
    if (metaIsReap(e.meta)) return !set.contains(e.id) || (e.id == rid && !destroy);
    if (!set.contains(metaReap(e.meta))) return true;
    dragRelease(e.addr);  // freed by this clear or destroy
    return false;
  });
}

void recordObstackFree(const void* h, const void* obj) noexcept {
  if (obj == nullptr) {
    recordReapClear(h, true);
    return;
  }
  const uint64_t t = nowNs();
  Locked lock;
  if (!on()) return;
  drainRings();
  const uint64_t rid = reapId(h);
  Entry e;
  if (rid == kNoObject || !gCore.map.find(reinterpret_cast<uintptr_t>(obj), &e) ||
      metaIsReap(e.meta) || metaReap(e.meta) != rid)
    return;
  // The objects of h from obj's id on (ids grow in the order objects are made), newest first.
  const uint64_t from = e.id;
  size_t n = 0;
  Entry* s = gCore.map.rareSlots();
  for (size_t i = 0; i < gCore.map.rareCapacity(); ++i)
    n += s[i].addr != 0 && !metaIsReap(s[i].meta) && metaReap(s[i].meta) == rid && s[i].id >= from;
  auto* freed = static_cast<Entry*>(mapPages(n * sizeof(Entry)));
  if (freed == nullptr) return;
  size_t k = 0;
  for (size_t i = 0; i < gCore.map.rareCapacity() && k < n; ++i)
    if (s[i].addr != 0 && !metaIsReap(s[i].meta) && metaReap(s[i].meta) == rid && s[i].id >= from)
      freed[k++] = s[i];
  std::sort(freed, freed + k, [](const Entry& a, const Entry& b) { return a.id > b.id; });
  for (size_t i = 0; i < k; ++i) {
    append(Op::ReapFree, 0, t, 0, freed[i].id, rid, 0);
    gCore.map.erase(freed[i].addr);
    dragRelease(freed[i].addr);
  }
  platform::unmap(freed, n * sizeof(Entry));
}

// As in recordResize (events.cpp): merge, take the old object out of the map, call, merge
// again, log.
void* recordReapRealloc(strata_reap* r, void* p, size_t size,
                        void* (*real)(strata_reap*, void*, size_t)) noexcept {
  SiteStack stack;
  if (gSites.on) captureSite(&stack);
  const uint64_t t = nowNs();
  Locked lock;
  const bool recordingNow = on();
  uint64_t rid = kNoObject;
  Entry e;
  bool matches = false;
  if (recordingNow) {
    drainRings();
    rid = reapId(r);
    matches = rid != kNoObject && p != nullptr &&
              gCore.map.find(reinterpret_cast<uintptr_t>(p), &e) && !metaIsReap(e.meta) &&
              metaReap(e.meta) == rid;
    if (matches) gCore.map.erase(e.addr);
  }
  void* q;
  {
    Guard g;
    q = real(r, p, size);
  }
  lock.keepErrno();
  if (!recordingNow) return q;
  drainRings();
  const uint64_t site = siteOf(stack);
  if (!matches) {
    // reap_realloc(r, NULL, n), or p unknown: at most a new object.
    if (p == nullptr || q != nullptr) reapMallocLocked(t, r, size, q, site);
    return q;
  }
  const uint64_t oldId = e.id;
  if (size == 0) {  // frees p
    append(Op::ReapFree, 0, t, 0, oldId, rid, 0);
    dragRelease(e.addr);
    return q;
  }
  if (q == nullptr) {  // failed: p is untouched
    append(Op::ReapMalloc, kFlagFailed, t, size, kNoObject, rid, 0, site);
    gCore.map.insert(e);
    return q;
  }
  const uint64_t id = append(Op::ReapMalloc, 0, t, size, kNoObject, rid, 0, site);
  append(Op::ReapFree, 0, t, 0, oldId, rid, 0);
  dragRelease(e.addr);  // first: the new object may be at the same address
  if (id < Writer::kRejected) {
    gCore.map.insert(Entry{reinterpret_cast<uintptr_t>(q), id, size, makeMeta(rid, false, 0)});
    dragCreate(id, reinterpret_cast<uintptr_t>(q), size);
  }
  return q;
}

}  // namespace strata::record
