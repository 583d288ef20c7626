// libFuzzer target: the replay's plan decoder (toolkit/replay/plan.hpp) and the whole replay
// pipeline on arbitrary bytes.
//
// 1. replayMemory with the do-nothing allocator, as `strata replay` runs a trace (trailer or
//    scan, lifecycle or pool, windows, leftovers freed): it must answer Ok or TraceError with
//    a reason, and on Ok have consumed every event the reader reads.
// 2. The decoder alone, on one list with tiny windows, checked against a model of what a plan
//    may contain: a slot holds a new object only when it is empty and was not emptied in the
//    same window, a Touch comes just before the operation that creates its object, a free or
//    a realloc names a live object and frees it with the call matching how it was made, the
//    live bytes the decoder reports are the model's, no slot lies beyond the decoder's count,
//    and the leftovers it frees at the end are exactly the objects still live.
// 3. The decoder in lifecycle mode with tiny windows: a window starts only threads that are
//    not alive and ends only threads that are.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "replay/engine.hpp"
#include "replay/plan.hpp"
#include "replay/scan.hpp"

namespace {

using namespace strata;
using replay::OpKind;
using replay::PlanOp;

[[noreturn]] void fail(const char* what, std::uint64_t object) {
  std::fprintf(stderr, "plan_fuzz: %s (object %llu)\n", what,
               static_cast<unsigned long long>(object));
  __builtin_trap();
}

// What the plan has done to each slot so far.
struct PlanModel {
  enum State : std::uint8_t { Empty, Malloc, New, Aligned };
  std::vector<std::uint8_t> state;
  std::vector<std::uint8_t> align;     // NewAligned: log2
  std::vector<std::uint64_t> size;
  std::vector<std::uint64_t> emptied;  // the window that last emptied the slot (0: none)
  std::uint64_t window = 1;            // the window being applied
  std::uint64_t liveBytes = 0;
  std::int64_t touchFor = -1;  // the slot the last Touch announced

  void grow(std::uint64_t id) {
    if (id < state.size()) return;
    const std::size_t n = static_cast<std::size_t>(id) + 1;
    state.resize(n, Empty);
    align.resize(n, 0);
    size.resize(n, 0);
    emptied.resize(n, 0);
  }

  void create(const PlanOp& op, State s) {
    const std::uint64_t id = op.object;
    grow(id);
    if (state[id] != Empty) fail("an object created in a slot that holds one", id);
    if (emptied[id] == window) fail("a slot reused in the window that emptied it", id);
    if (touchFor >= 0 && static_cast<std::uint64_t>(touchFor) != id)
      fail("a Touch not followed by its object's creation", id);
    touchFor = -1;
    state[id] = s;
    align[id] = static_cast<std::uint8_t>(op.alignLog2());
    size[id] = op.size();
    liveBytes += op.size();
  }
  void release(std::uint64_t id, State expected, unsigned alignLog2) {
    if (id >= state.size() || state[id] == Empty) fail("free of an object that is not live", id);
    if (state[id] != expected) fail("freed with a call not matching its allocation", id);
    if (expected == Aligned && align[id] != alignLog2) fail("aligned delete with another alignment", id);
    state[id] = Empty;
    emptied[id] = window;
    liveBytes -= size[id];
  }
  void apply(const PlanOp& op) {
    if (touchFor >= 0 && op.kind() != OpKind::Malloc && op.kind() != OpKind::Calloc &&
        op.kind() != OpKind::Realloc && op.kind() != OpKind::Memalign &&
        op.kind() != OpKind::New && op.kind() != OpKind::NewAligned)
      fail("a Touch not followed by a creating operation", op.object);
    switch (op.kind()) {
      case OpKind::Malloc: case OpKind::Calloc: case OpKind::Memalign: create(op, Malloc); break;
      case OpKind::New: create(op, New); break;
      case OpKind::NewAligned: create(op, Aligned); break;
      case OpKind::Realloc:
        release(op.other, Malloc, 0);
        create(op, Malloc);
        break;
      case OpKind::Free: release(op.object, Malloc, 0); break;
      case OpKind::Delete: release(op.object, New, 0); break;
      case OpKind::DeleteAligned: release(op.object, Aligned, op.alignLog2()); break;
      case OpKind::Touch:
        if (touchFor >= 0) fail("two Touches in a row", op.object);
        touchFor = op.object;
        break;
      default: fail("unknown operation kind", op.object);
    }
  }
};

void replayWhole(const std::uint8_t* data, std::size_t size) {
  trace::TraceReader<trace::MemorySource> reader(trace::MemorySource{data, size});
  trace::Event e;
  trace::ReadStatus s;
  std::uint64_t events = 0;
  while ((s = reader.next(e)) == trace::ReadStatus::Event) ++events;

  replay::EngineOptions opt;
  opt.allocator = replay::EngineAllocator::None;
  opt.collectSeries = false;
  const replay::ReplayResult r = replay::replayMemory(data, size, opt);
  if (r.status == replay::ReplayStatus::TraceError) {
    if (r.detail.empty()) fail("a trace error without a reason", 0);
  } else if (r.status != replay::ReplayStatus::Ok) {
    fail("a replay on no allocator neither Ok nor TraceError", 0);
  } else if (s == trace::ReadStatus::End && r.events != events) {
    fail("replay Ok without consuming every event", r.events);
  }
}

void decodeSingleList(const std::uint8_t* data, std::size_t size, const replay::TraceScan& scan) {
  replay::PlanDecoder<trace::MemorySource> decoder(trace::MemorySource{data, size}, 1,
                                                   scan.touches.empty() ? nullptr : &scan.touches);
  PlanModel model;
  replay::PlanWindow w;
  std::uint64_t window = 0;
  while (decoder.decodeWindow(w, 1 + window % 5, window % 3 == 0 ? 4096 : 0)) {
    ++window;
    model.window = window;
    for (const PlanOp& op : w.ops[0]) model.apply(op);
    if (w.liveBytesAtEnd != model.liveBytes) fail("live bytes differ from the plan's", model.liveBytes);
    if (model.state.size() > decoder.slotCount()) fail("a slot beyond the decoder's count", model.state.size());
  }
  if (decoder.failed()) {
    if (decoder.errorMessage().empty()) fail("a decoder error without a reason", 0);
    return;
  }
  if (model.touchFor >= 0) fail("a Touch at the end of the plan", static_cast<std::uint64_t>(model.touchFor));
  replay::OwnVector<PlanOp> leftovers;
  decoder.freeLiveObjects(leftovers);
  for (const PlanOp& op : leftovers) model.apply(op);
  for (std::uint64_t id = 0; id < model.state.size(); ++id)
    if (model.state[id] != PlanModel::Empty) fail("an object live after the leftovers were freed", id);
}

void decodeLifecycle(const std::uint8_t* data, std::size_t size, const replay::TraceScan& scan) {
  if (scan.threadIndexTooLarge) return;  // the engine replays such a trace on the pool
  const std::uint64_t threads = std::max<std::uint64_t>(scan.totals.threads, 1);
  replay::PlanDecoder<trace::MemorySource> decoder(trace::MemorySource{data, size},
                                                   static_cast<unsigned>(threads), nullptr, true);
  std::vector<std::uint8_t> alive;
  replay::PlanWindow w;
  std::uint64_t window = 0;
  while (decoder.decodeWindow(w, 1 + window % 4, 0)) {
    ++window;
    for (const std::uint32_t t : w.started) {
      if (t >= alive.size()) alive.resize(std::size_t{t} + 1, 0);
      if (alive[t]) fail("a window starts a thread that is alive", t);
      alive[t] = 1;
    }
    for (const std::uint32_t t : w.ended) {
      if (t >= alive.size() || !alive[t]) fail("a window ends a thread that is not alive", t);
      alive[t] = 0;
    }
    for (const std::uint32_t t : w.threads)
      if (t >= w.ops.size()) fail("a window thread without an operation list", t);
  }
  if (decoder.failed() && decoder.errorMessage().empty()) fail("a decoder error without a reason", 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  replayWhole(data, size);
  const replay::TraceScan scan = replay::scanTrace(trace::MemorySource{data, size});
  if (!scan.error.empty()) return 0;
  decodeSingleList(data, size, scan);
  decodeLifecycle(data, size, scan);
  return 0;
}
