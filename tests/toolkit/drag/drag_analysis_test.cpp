// Drag analysis (drag_analysis.hpp) on traces and last-use files built by hand, the answers
// worked out in the comments. The clock after event s is the bytes created up to s; an
// object's areas are size x (end - creation) (actual) and size x (last use - creation)
// (ideal); samples follow every creating event.
#include <cmath>
#include <string>
#include <vector>

#include "support/error.hpp"
#include "drag/drag_analysis.hpp"
#include "drag_test_util.hpp"

namespace {

using namespace dragtest;
using strata::trace::kFlagNull;

TEST(DragAnalysis, PromptFreeingHasDragOne) {
  TempDir dir;
  // 0 malloc 100 -> id0 (clock 100); 1 malloc 50 -> id1 (150); 2 free 0; 3 free 1.
  // id0 used up to event 1 (clock 150), ended at 2 (150); id1 used up to 2, ended at 3.
  // Actual = ideal = 100 x 50 = 5000: drag 1. Samples 100, 150 for both curves.
  const dg::DragResult r = analyze(
      dir, encode({ev(Op::Malloc, 100), ev(Op::Malloc, 50), ev(Op::Free, 0, kNoObject, 0),
                   ev(Op::Free, 0, kNoObject, 1)}),
      {{0, 1, 2}, {1, 2, 3}});
  EXPECT_EQ(r.drag, 1.0);
  EXPECT_EQ(r.actualArea, 5000.0);
  EXPECT_EQ(r.idealArea, 5000.0);
  EXPECT_EQ(r.peakActual, 150u);
  EXPECT_EQ(r.peakIdeal, 150u);
  EXPECT_EQ(r.increasePercent, 0.0);
  EXPECT_EQ(r.curve, (std::vector<dg::DragPoint>{{100, 100, 100}, {150, 150, 150}}));
  EXPECT_EQ(r.events, 4u);
  EXPECT_EQ(r.finalClock, 150u);
  EXPECT_EQ(r.objectCount, 2u);
  EXPECT_EQ(r.uncoveredObjects, 0u);
  EXPECT_EQ(r.releaseMismatches, 0u);
  EXPECT_TRUE(r.traceComplete);
  EXPECT_TRUE(r.lastUseComplete);
  EXPECT_FALSE(r.sites.present);
}

TEST(DragAnalysis, ObjectsKeptAfterAnEarlyLastUseAndTheirSites) {
  TempDir dir;
  // 0 malloc 100 -> id0 (site 1, clock 100); 1 malloc 100 -> id1 (site 2, 200);
  // 2 malloc 100 -> id2 (site 2, 300); 3 free 1; 4 free 2; 5 free 0.
  // id0 never used after its creation (last use 0, clock 100), ended at 300: actual
  //   100 x 200 = 20000, ideal 0, drag 20000 at site 1.
  // id1 used up to 2 (300), ended at 300: 100 x 100 = 10000 both.  id2: 0 both.
  // Drag = 30000 / 10000 = 3. Actual samples 100, 200, 300; ideal 100 (id0 at its creation),
  // 100 (id1), 200 (id1, id2): peaks 300 and 200, +50%.
  const auto trace =
      sitesTrace({ev(Op::Malloc, 100), ev(Op::Malloc, 100), ev(Op::Malloc, 100),
                  ev(Op::Free, 0, kNoObject, 1), ev(Op::Free, 0, kNoObject, 2),
                  ev(Op::Free, 0, kNoObject, 0)},
                 {1, 2, 2});
  Objects objs;
  const dg::DragResult r =
      analyze(dir, trace, {{1, 2, 3}, {2, 3, 4}, {0, 0, 5}}, {}, "t.trace", &objs);
  EXPECT_EQ(r.actualArea, 30000.0);
  EXPECT_EQ(r.idealArea, 10000.0);
  EXPECT_EQ(r.drag, 3.0);
  EXPECT_EQ(r.peakActual, 300u);
  EXPECT_EQ(r.peakIdeal, 200u);
  EXPECT_EQ(r.increasePercent, 50.0);
  EXPECT_EQ(r.curve, (std::vector<dg::DragPoint>{{100, 100, 100}, {200, 200, 100},
                                                  {300, 300, 200}}));
  const dg::DragObject& o = objs.at(0);
  EXPECT_EQ(o.created, 100u);
  EXPECT_EQ(o.lastUse, 100u);
  EXPECT_EQ(o.ended, 300u);
  EXPECT_EQ(o.endSeq, 5u);
  EXPECT_EQ(o.end, dg::DragEnd::Release);
  ASSERT_TRUE(r.sites.present);
  ASSERT_EQ(r.siteDrag.size(), 3u);
  EXPECT_EQ(r.siteDrag[1].drag, 20000.0);
  EXPECT_EQ(r.siteDrag[1].objects, 1u);
  EXPECT_EQ(r.siteDrag[2].drag, 0.0);
  EXPECT_EQ(r.siteDrag[2].bytes, 200u);
  EXPECT_EQ(r.sites.bySite[2].allocations, 2u);
  EXPECT_EQ(r.sites.frames[2], (std::vector<std::uint64_t>{0x2000, 0x3000}));
  const std::vector<dg::SiteDrag> top = dg::topDragSites(r, 5);
  ASSERT_EQ(top.size(), 1u);  // site 2 has no drag
  EXPECT_EQ(top[0].site, 1u);
}

TEST(DragAnalysis, AReapWhoseObjectsDieEarlyButIsClearedLate) {
  TempDir dir;
  // 0 reap_create -> id0 (a reap, clock 0); 1 reap_malloc 64 -> id1 (64);
  // 2 reap_malloc 64 -> id2 (128); 3 malloc 32 -> id3 (160); 4 free 3;
  // 5 malloc 40 -> id4 (200); 6 reap_clear 0 (ends id1, id2 at 200); 7 free 4.
  // id1: last use 2 (128): actual 64 x 136 = 8704, ideal 64 x 64 = 4096.
  // id2: last use 3 (160): actual 64 x 72 = 4608, ideal 64 x 32 = 2048.  id3, id4: 0.
  // Drag = 13312 / 6144 = 13 / 6. Samples (actual, ideal): x=0 (0, 0), 64 (64, 64),
  // 128 (128, 128), 160 (160, 96: id1 is past its last use), 200 (168, 40): +31.25%.
  Objects objs;
  const dg::DragResult r = analyze(dir, encode(reapTrace()),
                                   {{1, 2, 6}, {2, 3, 6}, {3, 3, 4}, {4, 6, 7}}, {}, "t.trace",
                                   &objs);
  EXPECT_EQ(r.actualArea, 13312.0);
  EXPECT_EQ(r.idealArea, 6144.0);
  EXPECT_DOUBLE_EQ(r.drag, 13.0 / 6.0);
  EXPECT_EQ(r.curve, (std::vector<dg::DragPoint>{{0, 0, 0}, {64, 64, 64}, {128, 128, 128},
                                                  {160, 160, 96}, {200, 168, 40}}));
  EXPECT_EQ(r.peakActual, 168u);
  EXPECT_EQ(r.peakIdeal, 128u);
  EXPECT_EQ(r.increasePercent, 31.25);
  EXPECT_EQ(r.objectCount, 4u);  // the reap is not an object
  EXPECT_EQ(objs.size(), 4u);
  EXPECT_EQ(objs.count(0), 0u);  // the reap
  EXPECT_EQ(objs.at(1).family, dg::DragFamily::InReap);
  EXPECT_EQ(objs.at(1).end, dg::DragEnd::Reap);
  EXPECT_EQ(objs.at(1).endSeq, 6u);
  EXPECT_EQ(objs.at(1).reap, 0u);
  EXPECT_EQ(r.releaseMismatches, 0u);
  // The same file, with id2's release said to be event 5: counted, the trace decides.
  const dg::DragResult m = analyze(
      dir, encode(reapTrace()), {{1, 2, 6}, {2, 3, 5}, {3, 3, 4}, {4, 6, 7}});
  EXPECT_EQ(m.releaseMismatches, 1u);
  EXPECT_EQ(m.actualArea, 13312.0);
}

TEST(DragAnalysis, ReallocIsALastUse) {
  TempDir dir;
  // 0 malloc 100 -> id0 (100); 1 realloc 0 to 200 -> id1 (300); 2 malloc 10 -> id2 (310);
  // 3 free 1; 4 free 2. The file says id0 was last used at 0, but the realloc moves its
  // data: last use 1 (300), so 100 x 200 = 20000 in both areas. id1 is never used after the
  // realloc: actual 200 x 10 = 2000, ideal 0. Drag = 22000 / 20000 = 1.1. Samples:
  // 100 (100, 100), 300 (200, 200), 310 (210, 10): +5%.
  Objects objs;
  const dg::DragResult r = analyze(
      dir, encode({ev(Op::Malloc, 100), ev(Op::Realloc, 200, 0), ev(Op::Malloc, 10),
                   ev(Op::Free, 0, kNoObject, 1), ev(Op::Free, 0, kNoObject, 2)}),
      {{0, 0, 1}, {1, 1, 3}, {2, 3, 4}}, {}, "t.trace", &objs);
  EXPECT_EQ(r.actualArea, 22000.0);
  EXPECT_EQ(r.idealArea, 20000.0);
  EXPECT_DOUBLE_EQ(r.drag, 1.1);
  EXPECT_EQ(objs.at(0).end, dg::DragEnd::Realloc);
  EXPECT_EQ(objs.at(0).lastUseSeq, 1u);
  EXPECT_EQ(objs.at(0).lastUse, 300u);
  EXPECT_EQ(r.curve, (std::vector<dg::DragPoint>{{100, 100, 100}, {300, 200, 200},
                                                  {310, 210, 10}}));
  EXPECT_DOUBLE_EQ(r.increasePercent, 5.0);
}

TEST(DragAnalysis, NeverUsedObjectsAndAZeroIdealArea) {
  TempDir dir;
  // malloc 10 -> id0 (10), free 0: never used, but freed at once: both areas 0, drag 1.
  dg::DragResult r = analyze(dir, encode({ev(Op::Malloc, 10), ev(Op::Free, 0, kNoObject, 0)}),
                             {{0, 0, 1}});
  EXPECT_EQ(r.drag, 1.0);
  EXPECT_FALSE(r.dragUnbounded);
  // malloc 10 -> id0 (10), malloc 10 -> id1 (20), free 0, free 1, neither used: actual
  // 10 x 10 = 100, ideal 0: infinite drag.
  r = analyze(dir, encode({ev(Op::Malloc, 10), ev(Op::Malloc, 10), ev(Op::Free, 0, kNoObject, 0),
                           ev(Op::Free, 0, kNoObject, 1)}),
              {{0, 0, 2}, {1, 1, 3}});
  EXPECT_TRUE(r.dragUnbounded);
  EXPECT_TRUE(std::isinf(r.drag));
  EXPECT_EQ(r.peakIdeal, 10u);
  EXPECT_EQ(r.increasePercent, 100.0);
  // A last use recorded before the creation counts as at the creation; objects live at the
  // end end at the final clock: malloc 10 -> id0, malloc 30 -> id1 (40), no free; id1
  // "used" at 0: actual 10 x 30 + 0, ideal 10 x 30 (id0 used up to 1) + 0.
  Objects objs;
  r = analyze(dir, encode({ev(Op::Malloc, 10), ev(Op::Malloc, 30)}, /*trailer=*/false),
              {{0, 1, kAtExit}, {1, 0, kAtExit}}, {}, "t.trace", &objs);
  EXPECT_EQ(objs.at(1).lastUseSeq, 1u);
  EXPECT_EQ(objs.at(0).end, dg::DragEnd::Live);
  EXPECT_EQ(objs.at(0).ended, 40u);
  EXPECT_EQ(r.drag, 1.0);
  EXPECT_FALSE(r.traceComplete);
}

TEST(DragAnalysis, AnIncompleteLastUseFileLeavesObjectsUncovered) {
  TempDir dir;
  // 0 malloc 10 -> id0 (10); 1 malloc 20 -> id1 (30); 2 free 0; 3 malloc 30 -> id2 (60);
  // 4 free 1; 5 free 2. The file (killed) holds id0 only, last use 0: 10 x 20 = 200 actual,
  // 0 ideal. id1, id2 uncovered, in use until they end: 20 x 30 = 600 in both; id2 0.
  // Drag = 800 / 600.
  std::vector<unsigned char> file = lastUseBytes({{0, 0, 2}, {1, 4, 4}}, /*trailer=*/false);
  file.erase(file.end() - 5, file.end());  // the second record cut short
  const dg::LastUseData lu = dg::parseLastUse(file.data(), file.size());
  const std::string path =
      dir.write("t.trace", encode({ev(Op::Malloc, 10), ev(Op::Malloc, 20),
                                   ev(Op::Free, 0, kNoObject, 0), ev(Op::Malloc, 30),
                                   ev(Op::Free, 0, kNoObject, 1), ev(Op::Free, 0, kNoObject, 2)}))
          .string();
  Objects objs;
  dg::DragOptions options;
  collectObjects(options, &objs);
  const dg::DragResult r = dg::analyzeDrag(path, lu, options);
  EXPECT_FALSE(r.lastUseComplete);
  EXPECT_EQ(r.uncoveredObjects, 2u);
  EXPECT_EQ(r.uncoveredBytes, 50u);
  EXPECT_EQ(r.actualArea, 800.0);
  EXPECT_EQ(r.idealArea, 600.0);
  EXPECT_FALSE(objs.at(1).covered);
  EXPECT_EQ(objs.at(1).lastUse, objs.at(1).ended);
}

TEST(DragAnalysis, CurvesKeepEachBucketsPeak) {
  TempDir dir;
  // Ten mallocs of 10 bytes, never freed, all uncovered (ideal = actual): clocks 10..100.
  // Three buckets of the range [0, 100]: clock x goes to x * 3 / 101: 10..30, 40..60, 70..100.
  std::vector<Event> evs(10, ev(Op::Malloc, 10));
  dg::DragOptions o;
  o.maxPoints = 3;
  const dg::DragResult r = analyze(dir, encode(evs), {}, o);
  EXPECT_EQ(r.samples, 10u);
  EXPECT_EQ(r.curve, (std::vector<dg::DragPoint>{{30, 30, 30}, {60, 60, 60}, {100, 100, 100}}));
  o.maxPoints = 0;
  EXPECT_EQ(analyze(dir, encode(evs), {}, o).curve.size(), 10u);
}

// The error message analyzeDrag throws (empty when none).
std::string analyzeError(const std::vector<Event>& evs, const std::vector<Rec>& recs) {
  TempDir dir;
  try {
    (void)analyze(dir, encode(evs), recs);
  } catch (const strata::support::Error& e) {
    return e.what();
  }
  return "";
}

TEST(DragAnalysis, BadInputsAreErrors) {
  // Nothing allocated: only a reap, or a failed malloc.
  EXPECT_TRUE(contains(analyzeError({ev(Op::ReapCreate, 0, kNoObject, kNoObject, kFlagNull)}, {}),
                       "the program allocated nothing"));
  EXPECT_TRUE(contains(analyzeError({ev(Op::Malloc, 8, kNoObject, kNoObject,
                                        strata::trace::kFlagFailed)}, {}),
                       "the program allocated nothing"));
  // A record of an id the trace does not have (at byte offset 48), or of a reap.
  const std::string e = analyzeError({ev(Op::Malloc, 8)}, {{0, 0, kAtExit}, {7, 0, kAtExit}});
  EXPECT_TRUE(contains(e, "object 7 (at byte offset 48)")) << e;
  EXPECT_TRUE(contains(e, "the trace created only 1 ids")) << e;
  EXPECT_TRUE(contains(analyzeError({ev(Op::ReapCreate, 0, kNoObject, kNoObject, kFlagNull),
                                     ev(Op::Malloc, 8)},
                                    {{0, 0, kAtExit}}),
                       "which is a reap"));
  // Object 0 twice: records at 24 and 72; the second one is named (the pass sorts by id).
  const std::string twice = analyzeError({ev(Op::Malloc, 8), ev(Op::Malloc, 8)},
                                         {{0, 1, kAtExit}, {1, 1, kAtExit}, {0, 0, kAtExit}});
  EXPECT_TRUE(contains(twice, "object 0 has a second record (the first at byte offset 24) at "
                              "byte offset 72"))
      << twice;
  // A bad trace names its file.
  TempDir dir;
  const std::string path = dir.write("bad.trace", std::vector<unsigned char>{'x'}).string();
  try {
    (void)dg::analyzeDrag(path, lastUse({}));
    ADD_FAILURE() << "no error";
  } catch (const strata::support::Error& ex) {
    EXPECT_TRUE(contains(ex.what(), path + ": not a Strata trace")) << ex.what();
  }
}

}  // namespace
