// The ideal trace (drag_ideal_trace.hpp): read back event for event, accepted by the replay
// plan decoder, and analysed again with a last-use file whose last uses are the releases:
// drag 1, and its live bytes are the first analysis's ideal curve.
#include <map>
#include <string>
#include <vector>

#include "support/error.hpp"
#include "drag/drag_ideal_trace.hpp"
#include "drag_test_util.hpp"
#include "tracetools/trace_stats.hpp"
#ifdef STRATA_DRAG_REPLAY_PLAN
#include "replay/plan.hpp"
#include "replay/scan.hpp"
#endif

namespace {

using namespace dragtest;
namespace trace = strata::trace;

// "op object target size @thread", "-" for no object: what the tests compare.
std::string show(const Event& e) {
  auto id = [](std::uint64_t v) { return v == kNoObject ? std::string("-") : std::to_string(v); };
  return std::string(tt::opName(e.op)) + " " + id(e.object) + " " + id(e.target) + " " +
         std::to_string(e.size) + " @" + std::to_string(e.thread);
}
std::vector<std::string> show(const std::vector<Event>& evs) {
  std::vector<std::string> out;
  for (const Event& e : evs) out.push_back(show(e));
  return out;
}

// A last-use file for `evs` in which every object is last used at its release (at the last
// event, released at exit, when it has none). Reaps are not nested in these tests.
std::vector<Rec> lastUseAtRelease(const std::vector<Event>& evs) {
  std::map<std::uint64_t, std::uint64_t> end;
  std::map<std::uint64_t, std::vector<std::uint64_t>> members;
  std::vector<std::uint64_t> objects;
  for (std::uint64_t seq = 0; seq < evs.size(); ++seq) {
    const Event& e = evs[seq];
    if (trace::opCreates(e.op) && !(e.flags & trace::kFlagFailed) && e.op != Op::ReapCreate)
      objects.push_back(e.object);
    if (e.op == Op::ReapMalloc) members[e.target].push_back(e.object);
    if (e.op == Op::Realloc && e.target != kNoObject) end.emplace(e.target, seq);
    if (trace::opFreesObject(e.op) && e.object != kNoObject) end.emplace(e.object, seq);
    if (e.op == Op::ReapClear || e.op == Op::ReapDestroy)
      for (const std::uint64_t id : members[e.target]) end.emplace(id, seq);
  }
  std::vector<Rec> recs;
  for (const std::uint64_t id : objects) {
    const auto it = end.find(id);
    if (it != end.end()) recs.push_back(Rec{id, it->second, it->second});
    else recs.push_back(Rec{id, evs.size() - 1, kAtExit});
  }
  return recs;
}

#ifdef STRATA_DRAG_REPLAY_PLAN
// The replay's plan decoder takes the trace (lifecycle mode, with its touches), frees nothing
// twice and sees the expected peak.
void checkPlan(const std::string& bytes, std::uint64_t peak) {
  const auto* d = reinterpret_cast<const unsigned char*>(bytes.data());
  const strata::replay::TraceScan scan =
      strata::replay::scanTrace(trace::MemorySource{d, bytes.size()});
  ASSERT_TRUE(scan.error.empty()) << scan.error;
  strata::replay::PlanDecoder<trace::MemorySource> dec(trace::MemorySource{d, bytes.size()},
                                                       static_cast<unsigned>(scan.totals.threads),
                                                       &scan.touches, /*lifecycle=*/true);
  strata::replay::PlanWindow w;
  while (dec.decodeWindow(w, 3, 0)) {
  }
  EXPECT_FALSE(dec.failed()) << dec.errorMessage();
  EXPECT_EQ(dec.counts().ignoredFrees, 0u);
  EXPECT_EQ(dec.counts().peakLiveBytes, peak);
  EXPECT_EQ(dec.counts().liveBytes, 0u);  // every object freed after its last use
}
#else
void checkPlan(const std::string&, std::uint64_t) {}
#endif

// Analyses `trace` with `recs`, writes its ideal trace and checks it: read back, the plan
// decoder takes it, and analysed with last uses at its releases it has drag 1 and the first
// analysis's ideal curve as its live bytes. Returns the ideal trace's events.
std::vector<Event> idealOf(const std::vector<unsigned char>& trace, const std::vector<Rec>& recs,
                           dg::IdealTraceCounts* counts = nullptr) {
  TempDir dir;
  const std::string in = dir.write("in.trace", trace).string();
  const std::string out = (dir.path() / "ideal.trace").string();
  const dg::LastUseData lu = lastUse(recs);
  const dg::DragResult first = dg::analyzeDrag(in, lu);
  const dg::IdealTraceCounts c = dg::writeIdealTrace(in, lu, first, out);
  if (counts != nullptr) *counts = c;
  const std::vector<Event> evs = readEvents(out);
  EXPECT_EQ(evs.size(), c.events);
  checkPlan(slurp(out), first.peakIdeal);
  const dg::DragResult again = dg::analyzeDrag(out, lastUse(lastUseAtRelease(evs)));
  EXPECT_EQ(again.drag, 1.0);
  EXPECT_EQ(again.peakActual, first.peakIdeal);
  EXPECT_EQ(again.sites.present, first.sites.present);
  EXPECT_EQ(again.sites.frames, first.sites.frames);
  EXPECT_EQ(again.samples, first.samples);
  for (std::size_t i = 0; i < again.curve.size() && i < first.curve.size(); ++i) {
    EXPECT_EQ(again.curve[i].clock, first.curve[i].clock) << "point " << i;
    EXPECT_EQ(again.curve[i].actualBytes, first.curve[i].idealBytes) << "point " << i;
  }
  return evs;
}

TEST(DragIdealTrace, AReapsObjectsAreFreedFromItAfterTheirLastUse) {
  // reapTrace(), last uses as in the analysis test: id1 at 2, id2 at 3 (both ended by the
  // clear at 6), id3 at 3 (freed at 4: already right after), id4 at 6 (freed at 7: same).
  dg::IdealTraceCounts c;
  const auto evs = idealOf(encode(reapTrace()), {{1, 2, 6}, {2, 3, 6}, {3, 3, 4}, {4, 6, 7}}, &c);
  EXPECT_EQ(show(evs), (std::vector<std::string>{
                           "reap_create 0 - 0 @0", "reap_malloc 1 0 64 @0", "reap_malloc 2 0 64 @0",
                           "reap_free 1 0 0 @0", "malloc 3 - 32 @0", "reap_free 2 0 0 @0",
                           "free 3 - 0 @0", "malloc 4 - 40 @0", "reap_clear - 0 0 @0",
                           "free 4 - 0 @0"}));
  EXPECT_EQ(c.earlyReleases, 2u);
  EXPECT_EQ(c.droppedReleases, 0u);
}

TEST(DragIdealTrace, ReallocKeepsItsTargetAndSitesAreKept) {
  // 0 malloc 100 -> id0 (site 1); 1 realloc 0 -> id1 (site 2); 2 malloc 10 -> id2 (site 1);
  // 3 free 1; 4 free 2. id1 is never used after the realloc: freed after event 1, its free
  // at 3 dropped. id0 keeps its realloc; id2 is freed right after its last use already.
  dg::IdealTraceCounts c;
  const auto evs = idealOf(
      sitesTrace({ev(Op::Malloc, 100), ev(Op::Realloc, 200, 0), ev(Op::Malloc, 10),
                  ev(Op::Free, 0, kNoObject, 1), ev(Op::Free, 0, kNoObject, 2)},
                 {1, 2, 1}),
      {{0, 0, 1}, {1, 1, 3}, {2, 3, 4}}, &c);
  EXPECT_EQ(show(evs), (std::vector<std::string>{"malloc 0 - 100 @0", "realloc 1 0 200 @0",
                                                  "free 1 - 0 @0", "malloc 2 - 10 @0",
                                                  "free 2 - 0 @0"}));
  EXPECT_EQ(evs[3].site, 1u);
  EXPECT_EQ(c.droppedReleases, 1u);
}

TEST(DragIdealTrace, EveryFamilyIsFreedItsWayEvenWhenTheProgramNeverFreed) {
  // 0 malloc 10 -> id0; 1 new 20 -> id1; 2 memalign 30 (64-aligned) -> id2; 3 delete 1;
  // 4 calloc 5 -> id3. Nothing else is freed. Last uses: id0 0, id1 1, id2 4, id3 4.
  Event aligned = ev(Op::Memalign, 30, kNoObject, kNoObject, trace::kFlagAligned);
  aligned.alignLog2 = 6;
  const auto evs = idealOf(
      encode({ev(Op::Malloc, 10), ev(Op::New, 20), aligned, ev(Op::Delete, 0, kNoObject, 1),
              ev(Op::Calloc, 5)}),
      {{0, 0, kAtExit}, {1, 1, 3}, {2, 4, kAtExit}, {3, 4, kAtExit}});
  EXPECT_EQ(show(evs), (std::vector<std::string>{
                           "malloc 0 - 10 @0", "free 0 - 0 @0", "new 1 - 20 @0", "delete 1 - 0 @0",
                           "memalign 2 - 30 @0", "calloc 3 - 5 @0", "free 2 - 0 @0",
                           "free 3 - 0 @0"}));
  EXPECT_EQ(evs[4].alignLog2, 6u);
}

TEST(DragIdealTrace, AReleaseAfterAThreadsEndGoesToTheLowestLiveThread) {
  // 0 malloc 8 -> id0 @0; 1 thread_start @1; 2 malloc 16 -> id1 @1; 3 thread_end @1;
  // 4 free 1 @0; 5 free 0 @0. id0 last used at 0: freed after it, on thread 0. id1 last
  // used at 3, thread 1's end: its free goes on thread 0, the lowest thread still live.
  const auto evs = idealOf(
      encode({ev(Op::Malloc, 8), ev(Op::ThreadStart, 0, 0, kNoObject, 0, 1),
              ev(Op::Malloc, 16, kNoObject, kNoObject, 0, 1), ev(Op::ThreadEnd, 0, kNoObject,
                                                                 kNoObject, 0, 1),
              ev(Op::Free, 0, kNoObject, 1), ev(Op::Free, 0, kNoObject, 0)}),
      {{0, 0, 5}, {1, 3, 4}});
  EXPECT_EQ(show(evs), (std::vector<std::string>{
                           "malloc 0 - 8 @0", "free 0 - 0 @0", "thread_start - 0 0 @1",
                           "malloc 1 - 16 @1", "thread_end - - 0 @1", "free 1 - 0 @0"}));
}

TEST(DragIdealTrace, TouchesMoveBeforeTheEarlyRelease) {
  // 0 malloc 100000 -> id0; 1 malloc 10 -> id1; 2 touch 0 (4096 bytes); 3 free 0; 4 free 1.
  // id0 last used at 0: its touch and free follow event 0; id1 freed right after its last use.
  dg::IdealTraceCounts c;
  const auto evs = idealOf(
      encode({ev(Op::Malloc, 100000), ev(Op::Malloc, 10), ev(Op::Touch, 4096, kNoObject, 0),
              ev(Op::Free, 0, kNoObject, 0), ev(Op::Free, 0, kNoObject, 1)}),
      {{0, 0, 3}, {1, 3, 4}}, &c);
  EXPECT_EQ(show(evs), (std::vector<std::string>{"malloc 0 - 100000 @0", "touch 0 - 4096 @0",
                                                  "free 0 - 0 @0", "malloc 1 - 10 @0",
                                                  "free 1 - 0 @0"}));
  EXPECT_EQ(c.movedTouches, 1u);
}

TEST(DragIdealTrace, APromptProgramIsItsOwnIdeal) {
  const std::vector<Event> in = {ev(Op::Malloc, 100), ev(Op::Malloc, 50),
                                 ev(Op::Free, 0, kNoObject, 0), ev(Op::Free, 0, kNoObject, 1)};
  const auto evs = idealOf(encode(in), {{0, 1, 2}, {1, 2, 3}});
  TempDir dir;
  EXPECT_EQ(show(evs), show(readEvents(dir.write("in.trace", encode(in)).string())));
}

TEST(DragIdealTrace, ATraceThatIsNotTheOneAnalysedIsRefused) {
  TempDir dir;
  const std::string a = dir.write("a.trace", encode({ev(Op::Malloc, 8)})).string();
  const std::string b =
      dir.write("b.trace", encode({ev(Op::Malloc, 8), ev(Op::Malloc, 8)})).string();
  const dg::DragResult r = dg::analyzeDrag(a, lastUse({}));
  EXPECT_THROW(dg::writeIdealTrace(b, lastUse({}), r, (dir.path() / "o.trace").string()),
               strata::support::Error);
}

}  // namespace
