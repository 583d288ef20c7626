// Replay plans: the trace decoded, one window at a time, into compact operations (plan_op.hpp)
// the replay loop (replay_loop.hpp) can walk without decoding anything. The decoder streams
// the trace through a TraceReader, so a trace larger than memory replays; it turns the reap
// API into plain malloc/free (reap_clear and reap_destroy become one free per live object of
// the reap and of every reap created under it), drops events recorded as FAILED, and keeps the
// live-byte count (the sum of requested sizes of live objects) in trace order, so the replay
// loop need not. Its tables come from the replayer's own memory (own_memory.hpp), not the
// allocator's.
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
#include "strata/trace/reader.hpp"

namespace strata::replay {

// The decoder. Source is a TraceReader source (FdSource for files, MemorySource in tests).
// objects: the trace's total object count (from the trailer or a counting pass); the decoder
// keeps a few bytes of state per object. threads: replay threads; recorded thread t goes to
// replay thread t % threads, or, with lifecycle set, to its own list t (threads is then the
// recorded thread count, a hint). touches: from scanTrace, or null.
template <class Source>
class PlanDecoder {
 public:
  PlanDecoder(Source source, std::uint64_t objects, unsigned threads,
              const OwnVector<TouchEntry>* touches = nullptr, bool lifecycle = false)
      : reader_(std::move(source)), threads_(threads == 0 ? 1 : threads), touches_(touches),
        lifecycle_(lifecycle) {
    sizes_.assign(objects, 0);
    state_.assign(objects, kDead);
  }

  // Decodes events into w (cleared first) until maxEvents events were consumed, the
  // window's allocations reach byteBudget (0: no budget), or the trace ends. Returns false
  // when nothing was left to decode (w empty) or on an error (see failed(), error()).
  bool decodeWindow(PlanWindow& w, std::uint64_t maxEvents, std::uint64_t byteBudget) {
    w.clear();
    if (lifecycle_ ? w.ops.size() < threads_ : w.ops.size() != threads_) w.ops.resize(threads_);
    ++window_;
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
    for (std::uint64_t id = 0; id < state_.size(); ++id) {
      const std::uint8_t s = state_[id];
      const auto oid = static_cast<std::uint32_t>(id);
      if (s == kMallocFamily) out.push_back(PlanOp::make(OpKind::Free, oid));
      else if (s == kNew) out.push_back(PlanOp::make(OpKind::Delete, oid));
      else if (s >= kAlignedNew)
        out.push_back(PlanOp::make(OpKind::DeleteAligned, oid, 0,
                                   static_cast<std::uint8_t>(s - kAlignedNew)));
    }
  }

  bool failed() const noexcept { return failed_; }
  // Lifecycle: whether recorded thread t is alive after the windows decoded so far.
  bool threadLive(std::uint32_t t) const noexcept { return t < live_.size() && live_[t] != 0; }
  // The reader's error (with its byte offset), or the decoder's own (too many objects).
  std::string errorMessage() const {
    if (!ownError_.empty()) return ownError_;
    return reader_.error().message();
  }
  const PlanCounts& counts() const noexcept { return counts_; }
  // Requested size of every object, by id (the replay loop reads it for realloc and verify).
  const std::uint64_t* sizes() const noexcept { return sizes_.data(); }
  std::uint64_t objectCapacity() const noexcept { return sizes_.size(); }

 private:
  // Per-object state: dead, a live reap, or a live object and the family that freeing it
  // must use: the malloc family, operator new, or aligned new (kAlignedNew + log2).
  static constexpr std::uint8_t kDead = 0;
  static constexpr std::uint8_t kReap = 1;
  static constexpr std::uint8_t kMallocFamily = 2;
  static constexpr std::uint8_t kNew = 3;
  static constexpr std::uint8_t kAlignedNew = 4;  // 4 + log2, up to 4 + 63

  // Records a new live object and its live bytes.
  void create(std::uint64_t id, std::uint64_t size, std::uint8_t family) {
    sizes_[id] = size;
    state_[id] = family;
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

  // Emits a Touch operation before the one creating object id when the program touched only
  // part of it. Ids are created in increasing order, so a cursor walks the sorted touches.
  void touchFor(std::uint64_t id, OwnVector<PlanOp>& out) {
    if (touches_ == nullptr) return;
    const OwnVector<TouchEntry>& t = *touches_;
    while (touchAt_ < t.size() && t[touchAt_].object < id) ++touchAt_;
    if (touchAt_ < t.size() && t[touchAt_].object == id)
      out.push_back(PlanOp::make(OpKind::Touch, static_cast<std::uint32_t>(id),
                                 std::min(t[touchAt_].touched, PlanOp::kMaxSize)));
  }

  // Emits the free of a live object with the call matching how it was created.
  void emitFree(std::uint64_t id, OwnVector<PlanOp>& out) {
    const std::uint8_t s = state_[id];
    const auto oid = static_cast<std::uint32_t>(id);
    if (s == kMallocFamily) out.push_back(PlanOp::make(OpKind::Free, oid));
    else if (s == kNew) out.push_back(PlanOp::make(OpKind::Delete, oid));
    else out.push_back(PlanOp::make(OpKind::DeleteAligned, oid, 0,
                                    static_cast<std::uint8_t>(s - kAlignedNew)));
    counts_.liveBytes -= sizes_[id];
    --counts_.liveObjects;
    state_[id] = kDead;
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
      for (std::uint64_t o : info.objects)
        if (state_[o] >= kMallocFamily) emitFree(o, out);
      for (std::uint64_t c : info.children)
        if (state_[c] == kReap) work.push_back(c);
      if (cur != r || destroy) {
        reaps_.erase(cur);
        state_[cur] = kDead;
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
      if (e.op == trace::Op::Realloc && e.target != trace::kNoObject && e.size == 0 &&
          state_[e.target] >= kMallocFamily)
        emitFree(e.target, out);
      return true;
    }
    if (trace::opCreates(e.op)) {
      if (!fitsTable(e.object)) return false;
      counts_.objects = e.object + 1;
      touchFor(e.object, out);
    }
    const std::uint64_t size = e.size > PlanOp::kMaxSize ? PlanOp::kMaxSize : e.size;
    switch (e.op) {
      case trace::Op::Malloc: case trace::Op::ReapMalloc: case trace::Op::Calloc:
      case trace::Op::Memalign: case trace::Op::New:
        allocate(e, size, out);
        w.allocatedBytes += size;
        break;
      case trace::Op::Realloc:
        reallocate(e, size, out);
        w.allocatedBytes += size;
        break;
      case trace::Op::Free: case trace::Op::Delete: case trace::Op::ReapFree:
        if (e.object == trace::kNoObject) break;  // free(NULL): nothing to replay
        if (state_[e.object] >= kMallocFamily) emitFree(e.object, out);
        else ++counts_.ignoredFrees;
        break;
      case trace::Op::ReapCreate:
        state_[e.object] = kReap;
        reaps_[e.object];
        if (e.target != trace::kNoObject && state_[e.target] == kReap)
          reaps_[e.target].children.push_back(e.object);
        break;
      case trace::Op::ReapClear: case trace::Op::ReapDestroy:
        if (state_[e.target] == kReap) clearReap(e.target, e.op == trace::Op::ReapDestroy, out);
        break;
      case trace::Op::Touch: case trace::Op::ThreadStart: case trace::Op::ThreadEnd:
        break;
    }
    return true;
  }

  // Whether a created object's id fits the tables, sized from the trailer (or a counting
  // pass): a trace that disagrees with its own trailer is corrupt, and must not write past
  // them. Sets the decoder's error when it does not.
  bool fitsTable(std::uint64_t id) {
    if (id < sizes_.size()) return true;
    ownError_ = "object " + std::to_string(id) + " at event " + std::to_string(counts_.events) +
                " is beyond the " + std::to_string(sizes_.size()) + " objects the trailer announces";
    if (id >= kMaxReplayObjects)
      ownError_ = "the trace has more than " + std::to_string(kMaxReplayObjects) +
                  " objects, more than replay supports";
    return false;
  }

  // malloc, reap_malloc (a malloc the reap keeps track of), calloc, memalign, operator new.
  void allocate(const trace::Event& e, std::uint64_t size, OwnVector<PlanOp>& out) {
    const auto id = static_cast<std::uint32_t>(e.object);
    switch (e.op) {
      case trace::Op::Calloc:
        out.push_back(PlanOp::make(OpKind::Calloc, id, size));
        break;
      case trace::Op::Memalign:
        out.push_back(PlanOp::make(OpKind::Memalign, id, size, e.alignLog2));
        break;
      case trace::Op::New:
        if (e.flags & trace::kFlagAligned) {
          out.push_back(PlanOp::make(OpKind::NewAligned, id, size, e.alignLog2));
          create(e.object, size, static_cast<std::uint8_t>(kAlignedNew + e.alignLog2));
        } else {
          out.push_back(PlanOp::make(OpKind::New, id, size));
          create(e.object, size, kNew);
        }
        return;
      default:  // Malloc, ReapMalloc
        out.push_back(PlanOp::make(OpKind::Malloc, id, size));
        break;
    }
    create(e.object, size, kMallocFamily);
    if (e.op == trace::Op::ReapMalloc && state_[e.target] == kReap)
      reaps_[e.target].objects.push_back(e.object);
  }

  // realloc of a live object of the malloc family; else (realloc(NULL, n), of an object not
  // from malloc, or already freed) a free the way the old object was made, then a malloc.
  void reallocate(const trace::Event& e, std::uint64_t size, OwnVector<PlanOp>& out) {
    const auto id = static_cast<std::uint32_t>(e.object);
    const std::uint64_t old = e.target;
    if (old != trace::kNoObject && state_[old] == kMallocFamily) {
      out.push_back(PlanOp::make(OpKind::Realloc, id, size, 0, static_cast<std::uint32_t>(old)));
      counts_.liveBytes -= sizes_[old];
      --counts_.liveObjects;
      state_[old] = kDead;
    } else {
      if (old != trace::kNoObject && state_[old] >= kMallocFamily) emitFree(old, out);
      out.push_back(PlanOp::make(OpKind::Malloc, id, size));
    }
    create(e.object, size, kMallocFamily);
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
  OwnVector<std::uint64_t> sizes_;
  OwnVector<std::uint8_t> state_;
  std::unordered_map<std::uint64_t, ReapInfo, std::hash<std::uint64_t>, std::equal_to<>,
                     OwnAllocator<std::pair<const std::uint64_t, ReapInfo>>>
      reaps_;
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
