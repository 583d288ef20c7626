// Replay plans: the trace decoded, one window at a time, into compact operations (plan_op.hpp)
// the replay loop (replay_loop.hpp) can walk without decoding anything. The decoder streams
// the trace through a TraceReader, so a trace larger than memory replays; it turns the reap
// API into plain malloc/free (reap_clear and reap_destroy become one free per live object of
// the reap and of every reap created under it), drops events recorded as FAILED, and keeps the
// live-byte count (the sum of requested sizes of live objects) in trace order, so the replay
// loop need not. Its tables come from the replayer's own memory (own_memory.hpp), not the
// allocator's.
//
// Operations name slots, not the trace's object ids: a trace gives every object a new id, so
// a table indexed by id grows with the recording's length. The decoder maps the ids live at
// the moment to slots (a LiveTable) and hands a freed slot out again from the next window on,
// never in the window that freed it: within a window a slot has one object, so the threads of
// a window can wait on a slot for its object (replay_loop.hpp), and the replayer's memory
// follows the most objects live at once, not the number ever made.
//
// Touches (scan.hpp) become a Touch operation just before the operation creating the object,
// which limits how many bytes of it the replay loop writes. In lifecycle mode each recorded
// thread gets its own operation list, and the window says which threads start and end in it;
// a window ends early rather than start a thread after one ended in it, so the replay, which
// starts a window's threads at its start and ends them at its end, never has more threads
// alive at once than the program had (and never two lives of one thread in a window).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <functional>
#include <utility>
#include <vector>

#include "replay/own_memory.hpp"
#include "replay/plan_op.hpp"
#include "replay/scan.hpp"
#include "strata/trace/format.hpp"
#include "strata/trace/live_table.hpp"
#include "strata/trace/reader.hpp"

namespace strata::replay {

// The decoder. Source is a TraceReader source (FdSource for files, MemorySource in tests).
// threads: replay threads; recorded thread t goes to replay thread t % threads, or, with
// lifecycle set, to its own list t (threads is then the recorded thread count, a hint).
// touches: from scanTrace, or null. Memory: about 30 bytes per object live at once (its slot
// in the id table, its size and state), plus a window's operations.
template <class Source>
class PlanDecoder {
 public:
  PlanDecoder(Source source, unsigned threads, const OwnVector<TouchEntry>* touches = nullptr,
              bool lifecycle = false)
      : reader_(std::move(source)), threads_(threads == 0 ? 1 : threads), touches_(touches),
        lifecycle_(lifecycle) {}

  // Decodes events into w (cleared first) until maxEvents events were consumed, the
  // window's allocations reach byteBudget (0: no budget), or the trace ends. Returns false
  // when nothing was left to decode (w empty) or on an error (see failed(), error()).
  bool decodeWindow(PlanWindow& w, std::uint64_t maxEvents, std::uint64_t byteBudget) {
    w.clear();
    if (lifecycle_ ? w.ops.size() < threads_ : w.ops.size() != threads_) w.ops.resize(threads_);
    ++window_;
    // The slots the last window freed are free from this one on.
    free_.insert(free_.end(), freedInWindow_.begin(), freedInWindow_.end());
    freedInWindow_.clear();
    if (done_ && !havePending_) return false;
    trace::Event e;
    while (w.events < maxEvents && (byteBudget == 0 || w.allocatedBytes < byteBudget)) {
      if (havePending_) {
        e = pending_;
        havePending_ = false;
      } else {
        if (done_) break;
        const trace::ReadStatus s = reader_.next(e);
        if (s == trace::ReadStatus::End) {
          done_ = true;
          break;
        }
        if (s == trace::ReadStatus::Error) {
          done_ = true;
          failed_ = true;
          return false;
        }
      }
      if (lifecycle_ && !trackThread(e, w)) {
        pending_ = e;  // the thread ended in this window: its next life starts the next one
        havePending_ = true;
        break;
      }
      ++w.events;
      ++counts_.events;
      if (!apply(e, w)) {
        done_ = true;
        failed_ = true;
        return false;
      }
    }
    w.endEvent = counts_.events;
    w.liveBytesAtEnd = counts_.liveBytes;
    return w.events != 0;
  }

  // Appends a free operation (matching how it was allocated) for every object still live,
  // so a replay can release what the program never freed.
  template <class Vec>
  void freeLiveObjects(Vec& out) const {
    for (std::uint32_t slot = 0; slot < state_.size(); ++slot) {
      const std::uint8_t s = state_[slot];
      if (s == kMallocFamily) out.push_back(PlanOp::make(OpKind::Free, slot));
      else if (s == kNew) out.push_back(PlanOp::make(OpKind::Delete, slot));
      else if (s >= kAlignedNew)
        out.push_back(PlanOp::make(OpKind::DeleteAligned, slot, 0,
                                   static_cast<std::uint8_t>(s - kAlignedNew)));
    }
  }

  bool failed() const noexcept { return failed_; }
  // Lifecycle: whether recorded thread t is alive after the windows decoded so far.
  bool threadLive(std::uint32_t t) const noexcept { return t < live_.size() && live_[t] != 0; }
  // The reader's error (with its byte offset), or the decoder's own (too many objects live).
  std::string errorMessage() const {
    if (!ownError_.empty()) return ownError_;
    return reader_.error().message();
  }
  const PlanCounts& counts() const noexcept { return counts_; }
  // Requested size of the object in every slot (the replay loop reads it for realloc and
  // verify). Valid until the next decodeWindow, which may move it.
  const std::uint64_t* sizes() const noexcept { return sizes_.data(); }
  // Slots handed out so far: the replay's object table needs this many entries.
  std::uint64_t slotCount() const noexcept { return sizes_.size(); }

 private:
  // Per-slot state: dead (free), a live reap, or a live object and the family that freeing
  // it must use: the malloc family, operator new, or aligned new (kAlignedNew + log2).
  static constexpr std::uint8_t kDead = 0;
  static constexpr std::uint8_t kReap = 1;
  static constexpr std::uint8_t kMallocFamily = 2;
  static constexpr std::uint8_t kNew = 3;
  static constexpr std::uint8_t kAlignedNew = 4;  // 4 + log2, up to 4 + 63
  static constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};

  // The slot of live object (or reap) id, or kNoSlot.
  std::uint32_t slotOf(std::uint64_t id) const {
    if (id == trace::kNoObject) return kNoSlot;
    const std::uint32_t* s = slots_.find(id);
    return s == nullptr ? kNoSlot : *s;
  }
  // The state of object id: kDead when it is not live.
  std::uint8_t stateOf(std::uint64_t id) const {
    const std::uint32_t s = slotOf(id);
    return s == kNoSlot ? kDead : state_[s];
  }

  // A slot for the new object id: a free one, or a new one. kNoSlot (and the decoder's
  // error) when the slots would no longer fit an operation's 32 bits.
  std::uint32_t takeSlot(std::uint64_t id) {
    std::uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      if (sizes_.size() >= kMaxReplaySlots) {
        ownError_ = "the trace has more than " + std::to_string(kMaxReplaySlots) +
                    " objects live at once, more than replay supports";
        return kNoSlot;
      }
      slot = static_cast<std::uint32_t>(sizes_.size());
      sizes_.push_back(0);
      state_.push_back(kDead);
    }
    slots_[id] = slot;
    return slot;
  }

  // The object in slot is gone (its id already out of the id table): the slot is free from
  // the next window on.
  void vacate(std::uint32_t slot) {
    state_[slot] = kDead;
    freedInWindow_.push_back(slot);
  }
  void releaseSlot(std::uint64_t id, std::uint32_t slot) {
    slots_.erase(id);
    vacate(slot);
  }

  // Records a new live object in its slot, and its live bytes.
  void create(std::uint32_t slot, std::uint64_t size, std::uint8_t family) {
    sizes_[slot] = size;
    state_[slot] = family;
    counts_.liveBytes += size;
    ++counts_.liveObjects;
    if (counts_.liveBytes > counts_.peakLiveBytes) counts_.peakLiveBytes = counts_.liveBytes;
  }

  // Lifecycle: notes e's thread in the window (started, ended, has events). False when the
  // event starts a thread after a thread ended in this window: it must open the next window.
  bool trackThread(const trace::Event& e, PlanWindow& w) {
    const std::uint32_t t = e.thread;
    if (t >= live_.size()) {
      const std::size_t n = std::max<std::size_t>(std::size_t{t} + 1, live_.size() * 2);
      live_.resize(n, 0);
      seen_.resize(n, 0);
    }
    if (!live_[t] && lastEnd_ == window_) return false;
    if (w.ops.size() <= t) w.ops.resize(std::size_t{t} + 1);
    if (seen_[t] != window_) {
      seen_[t] = window_;
      w.threads.push_back(t);
    }
    if (!live_[t]) {
      live_[t] = 1;
      w.started.push_back(t);
    }
    if (e.op == trace::Op::ThreadEnd) {
      live_[t] = 0;
      lastEnd_ = window_;
      w.ended.push_back(t);
    }
    return true;
  }

  // Emits a Touch operation before the one creating object id (in slot) when the program
  // touched only part of it. Ids are created in increasing order, so a cursor walks the
  // sorted touches.
  void touchFor(std::uint64_t id, std::uint32_t slot, OwnVector<PlanOp>& out) {
    if (touches_ == nullptr) return;
    const OwnVector<TouchEntry>& t = *touches_;
    while (touchAt_ < t.size() && t[touchAt_].object < id) ++touchAt_;
    if (touchAt_ < t.size() && t[touchAt_].object == id)
      out.push_back(PlanOp::make(OpKind::Touch, slot, std::min(t[touchAt_].touched, PlanOp::kMaxSize)));
  }

  // Emits the free of the live object in slot (its id already out of the id table) with the
  // call matching how it was created.
  void emitFree(std::uint32_t slot, OwnVector<PlanOp>& out) {
    const std::uint8_t s = state_[slot];
    if (s == kMallocFamily) out.push_back(PlanOp::make(OpKind::Free, slot));
    else if (s == kNew) out.push_back(PlanOp::make(OpKind::Delete, slot));
    else out.push_back(PlanOp::make(OpKind::DeleteAligned, slot, 0,
                                    static_cast<std::uint8_t>(s - kAlignedNew)));
    counts_.liveBytes -= sizes_[slot];
    --counts_.liveObjects;
    vacate(slot);
  }
  // The same for object id when it is a live object (not a reap, not dead); false otherwise.
  bool freeIfLive(std::uint64_t id, OwnVector<PlanOp>& out) {
    std::uint32_t slot;
    if (id == trace::kNoObject || !slots_.take(id, slot)) return false;
    if (state_[slot] < kMallocFamily) {  // a reap: not freed this way
      slots_[id] = slot;
      return false;
    }
    emitFree(slot, out);
    return true;
  }

  // Frees every live object of reap r and of the reaps under it, and destroys those reaps
  // (r itself too when destroy is set). Iterative, so deep nesting cannot overflow the stack.
  void clearReap(std::uint64_t r, bool destroy, OwnVector<PlanOp>& out) {
    OwnVector<std::uint64_t> work{r};
    while (!work.empty()) {
      const std::uint64_t cur = work.back();
      work.pop_back();
      auto it = reaps_.find(cur);
      if (it == reaps_.end()) continue;
      ReapInfo info = std::move(it->second);
      for (std::uint64_t o : info.objects) freeIfLive(o, out);
      for (std::uint64_t c : info.children)
        if (stateOf(c) == kReap) work.push_back(c);
      if (cur != r || destroy) {
        reaps_.erase(cur);
        releaseSlot(cur, slotOf(cur));
      } else {
        it = reaps_.find(cur);
        it->second = ReapInfo{};
      }
    }
  }

  // Turns one trace event into operations for the replay thread of its recorded thread.
  bool apply(const trace::Event& e, PlanWindow& w) {
    OwnVector<PlanOp>& out = w.ops[lifecycle_ ? e.thread : e.thread % threads_];
    if (e.flags & trace::kFlagFailed) {
      ++counts_.failedEvents;
      // realloc(p, 0) that freed p and returned null: the old object is gone.
      if (e.op == trace::Op::Realloc && e.size == 0) freeIfLive(e.target, out);
      return true;
    }
    std::uint32_t slot = kNoSlot;
    if (trace::opCreates(e.op)) {
      counts_.objects = e.object + 1;
      if ((slot = takeSlot(e.object)) == kNoSlot) return false;
      touchFor(e.object, slot, out);
    }
    const std::uint64_t size = e.size > PlanOp::kMaxSize ? PlanOp::kMaxSize : e.size;
    switch (e.op) {
      case trace::Op::Malloc: case trace::Op::ReapMalloc: case trace::Op::Calloc:
      case trace::Op::Memalign: case trace::Op::New:
        allocate(e, slot, size, out);
        w.allocatedBytes += size;
        break;
      case trace::Op::Realloc:
        reallocate(e, slot, size, out);
        w.allocatedBytes += size;
        break;
      case trace::Op::Free: case trace::Op::Delete: case trace::Op::ReapFree:
        if (e.object == trace::kNoObject) break;  // free(NULL): nothing to replay
        if (!freeIfLive(e.object, out)) ++counts_.ignoredFrees;
        break;
      case trace::Op::ReapCreate:
        state_[slot] = kReap;
        reaps_[e.object];
        if (stateOf(e.target) == kReap) reaps_[e.target].children.push_back(e.object);
        break;
      case trace::Op::ReapClear: case trace::Op::ReapDestroy:
        if (stateOf(e.target) == kReap) clearReap(e.target, e.op == trace::Op::ReapDestroy, out);
        break;
      case trace::Op::Touch: case trace::Op::ThreadStart: case trace::Op::ThreadEnd:
        break;
    }
    return true;
  }

  // malloc, reap_malloc (a malloc the reap keeps track of), calloc, memalign, operator new.
  void allocate(const trace::Event& e, std::uint32_t slot, std::uint64_t size,
                OwnVector<PlanOp>& out) {
    switch (e.op) {
      case trace::Op::Calloc:
        out.push_back(PlanOp::make(OpKind::Calloc, slot, size));
        break;
      case trace::Op::Memalign:
        out.push_back(PlanOp::make(OpKind::Memalign, slot, size, e.alignLog2));
        break;
      case trace::Op::New:
        if (e.flags & trace::kFlagAligned) {
          out.push_back(PlanOp::make(OpKind::NewAligned, slot, size, e.alignLog2));
          create(slot, size, static_cast<std::uint8_t>(kAlignedNew + e.alignLog2));
        } else {
          out.push_back(PlanOp::make(OpKind::New, slot, size));
          create(slot, size, kNew);
        }
        return;
      default:  // Malloc, ReapMalloc
        out.push_back(PlanOp::make(OpKind::Malloc, slot, size));
        break;
    }
    create(slot, size, kMallocFamily);
    if (e.op == trace::Op::ReapMalloc && stateOf(e.target) == kReap)
      reaps_[e.target].objects.push_back(e.object);
  }

  // realloc of a live object of the malloc family; else (realloc(NULL, n), of an object not
  // from malloc, or already freed) a free the way the old object was made, then a malloc.
  void reallocate(const trace::Event& e, std::uint32_t slot, std::uint64_t size,
                  OwnVector<PlanOp>& out) {
    const std::uint32_t old = slotOf(e.target);
    if (old != kNoSlot && state_[old] == kMallocFamily) {
      out.push_back(PlanOp::make(OpKind::Realloc, slot, size, 0, old));
      counts_.liveBytes -= sizes_[old];
      --counts_.liveObjects;
      releaseSlot(e.target, old);
    } else {
      if (old != kNoSlot) freeIfLive(e.target, out);
      out.push_back(PlanOp::make(OpKind::Malloc, slot, size));
    }
    create(slot, size, kMallocFamily);
  }

  // What a reap holds: the objects allocated from it (some maybe freed since; skipped by
  // their state) and the reaps created under it.
  struct ReapInfo {
    OwnVector<std::uint64_t> objects;
    OwnVector<std::uint64_t> children;
  };

  trace::TraceReader<Source, OwnAllocator<unsigned char>> reader_;  // its buffer: not the heap
  unsigned threads_;
  const OwnVector<TouchEntry>* touches_;
  std::size_t touchAt_ = 0;
  bool lifecycle_;
  trace::LiveTable<std::uint32_t, OwnAllocator<std::uint32_t>> slots_;  // live id -> slot
  OwnVector<std::uint64_t> sizes_;             // by slot
  OwnVector<std::uint8_t> state_;              // by slot
  OwnVector<std::uint32_t> free_;              // slots free now
  OwnVector<std::uint32_t> freedInWindow_;     // slots freed in this window: free from the next
  std::unordered_map<std::uint64_t, ReapInfo, std::hash<std::uint64_t>, std::equal_to<>,
                     OwnAllocator<std::pair<const std::uint64_t, ReapInfo>>>
      reaps_;  // by the reap's id
  // Lifecycle: per recorded thread, alive now and the last window with one of its events;
  // the last window a thread ended in.
  OwnVector<std::uint8_t> live_;
  OwnVector<std::uint64_t> seen_;
  std::uint64_t lastEnd_ = 0;
  std::uint64_t window_ = 0;
  trace::Event pending_;
  bool havePending_ = false;
  PlanCounts counts_;
  std::string ownError_;
  bool done_ = false;
  bool failed_ = false;
};

}  // namespace strata::replay
