// Helpers shared by the drag tests: last-use files built by hand (toolkit/protocol/include/strata/drag/
// protocol.h) and a trace plus its last-use file analysed in one call.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "drag/drag_analysis.hpp"
#include "strata/protocol/drag.h"
#include "test_util.hpp"

namespace dragtest {

using namespace tttest;
namespace tt = strata::tracetools;
namespace dg = strata::drag;

struct Rec {
  std::uint64_t id, lastUse, release;
};
inline constexpr std::uint64_t kAtExit = STRATA_DRAG_AT_EXIT;

inline void putU64(std::vector<unsigned char>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

// A last-use file: header (pid 4242), the records, the trailer when `trailer`.
inline std::vector<unsigned char> lastUseBytes(const std::vector<Rec>& recs, bool trailer = true) {
  const char magic[] = STRATA_DRAG_MAGIC;
  std::vector<unsigned char> out(magic, magic + 8);
  putU64(out, STRATA_DRAG_VERSION);
  putU64(out, 4242);
  for (const Rec& r : recs) {
    putU64(out, r.id);
    putU64(out, r.lastUse);
    putU64(out, r.release);
  }
  if (trailer) {
    putU64(out, STRATA_DRAG_END);
    putU64(out, recs.size());
    putU64(out, 0);
  }
  return out;
}

inline dg::LastUseData lastUse(const std::vector<Rec>& recs, bool trailer = true) {
  const std::vector<unsigned char> b = lastUseBytes(recs, trailer);
  return dg::parseLastUse(b.data(), b.size());
}

// Each object's results by id, as DragOptions::onObject reports them.
using Objects = std::map<std::uint64_t, dg::DragObject>;
inline void collectObjects(dg::DragOptions& options, Objects* objects) {
  if (objects == nullptr) return;
  objects->clear();
  options.onObject = [objects](std::uint64_t id, const dg::DragObject& o) {
    EXPECT_TRUE(objects->emplace(id, o).second) << "object " << id << " reported twice";
  };
}

// Writes `trace` into dir as NAME and analyses it with `recs` (temporary files in dir),
// filling *objects when given.
inline dg::DragResult analyze(const TempDir& dir, const std::vector<unsigned char>& trace,
                              const std::vector<Rec>& recs, dg::DragOptions options = {},
                              const std::string& name = "t.trace", Objects* objects = nullptr) {
  if (options.tempDir.empty()) options.tempDir = dir.path().string();
  collectObjects(options, objects);
  return dg::analyzeDrag(dir.write(name, trace).string(), lastUse(recs), options);
}

// The reap trace of the tests: 0 reap_create -> id0 (a reap); 1 reap_malloc 64 -> id1;
// 2 reap_malloc 64 -> id2; 3 malloc 32 -> id3; 4 free 3; 5 malloc 40 -> id4;
// 6 reap_clear 0 (frees id1, id2); 7 free 4.
inline std::vector<Event> reapTrace() {
  return {ev(Op::ReapCreate, 0, kNoObject, kNoObject, strata::trace::kFlagNull),
          ev(Op::ReapMalloc, 64, 0), ev(Op::ReapMalloc, 64, 0), ev(Op::Malloc, 32),
          ev(Op::Free, 0, kNoObject, 3), ev(Op::Malloc, 40), ev(Op::ReapClear, 0, 0),
          ev(Op::Free, 0, kNoObject, 4)};
}

// A trace with two sites (site 1: frame 0x1000; site 2: frames 0x2000, 0x3000) and `events`,
// whose creating events carry the sites in `sites` (one per creating event, in order).
inline std::vector<unsigned char> sitesTrace(std::vector<Event> events,
                                             const std::vector<std::uint64_t>& sites) {
  std::vector<unsigned char> out, buf(4096), sbuf(4096);
  auto sink = [&out](const unsigned char* d, std::size_t n) {
    out.insert(out.end(), d, d + n);
    return true;
  };
  strata::trace::TraceWriter<decltype(sink)> w(buf.data(), buf.size(), sink,
                                               strata::trace::SiteBuffer{sbuf.data(), sbuf.size()});
  const std::uint64_t f1[] = {0x1000}, f2[] = {0x2000, 0x3000};
  w.defineSite(f1, 1);
  w.defineSite(f2, 2);
  std::size_t k = 0;
  for (Event& e : events) {
    if (strata::trace::opCreates(e.op)) e.site = sites.at(k++);
    EXPECT_NE(w.append(e), decltype(w)::kRejected);
  }
  EXPECT_TRUE(w.finish());
  return out;
}

}  // namespace dragtest
