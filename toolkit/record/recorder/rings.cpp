// The ring registry (rings.hpp): rings and the merge's cursors live in mmap memory, so the
// recorder never calls the malloc it records.
#include "record/recorder/rings.hpp"

#include <sys/mman.h>

#include <new>

#include "record/recorder/mapped_memory.hpp"
#include "strata/platform/memory.hpp"

namespace strata::record {

bool RingSet::growCursors() noexcept {
  const size_t cap = cursorCap_ == 0 ? 64 : cursorCap_ * 2;
  auto* bigger = static_cast<Cursor*>(mapPages(cap * sizeof(Cursor)));
  if (bigger == nullptr) return false;
  if (cursors_ != nullptr) platform::unmap(cursors_, cursorCap_ * sizeof(Cursor));
  cursors_ = bigger;
  cursorCap_ = cap;
  return true;
}

Ring* RingSet::acquire(uint32_t thread) noexcept {
  Ring* r = first_;
  while (r != nullptr && r->inUse) r = r->next;
  if (r == nullptr) {
    if (count_ == cursorCap_ && !growCursors()) return nullptr;
    void* mem = mapPages(sizeof(Ring));
    if (mem == nullptr) return nullptr;
    r = new (mem) Ring;
    r->next = first_;
    first_ = r;
    ++count_;
  }
  r->inUse = true;
  r->thread = thread;
  r->cachedTail = r->tail.load(std::memory_order_relaxed);
  return r;
}

void RingSet::release(Ring* r) noexcept {
  r->dropAll();
  r->inUse = false;
}

void RingSet::resetAfterFork(const Ring* keep) noexcept {
  for (Ring* r = first_; r != nullptr; r = r->next) {
    r->head.store(0, std::memory_order_relaxed);
    r->tail.store(0, std::memory_order_relaxed);
    r->cachedTail = 0;
    r->inUse = r == keep;
  }
}

}  // namespace strata::record
