// Traces with sites built by hand, whose figures the timeline and sites-document tests work
// out: four sites (1: {0x1000}; 2: {0x2000, 0x3000}; 3: {0x1000, 0x3000}, sharing frames with
// the others; 4: {0x4000}), each event n at time 10 * n ns.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace tttest {

// Writes `events` (sites set, times set here) into dir/name as a trace with the four sites.
inline std::string timelineTrace(const TempDir& dir, const std::string& name,
                                 std::vector<Event> events) {
  std::vector<unsigned char> out, buf(1 << 16), sbuf(4096);
  auto sink = [&out](const unsigned char* d, std::size_t n) {
    out.insert(out.end(), d, d + n);
    return true;
  };
  strata::trace::TraceWriter<decltype(sink)> w(buf.data(), buf.size(), sink,
                                               strata::trace::SiteBuffer{sbuf.data(), sbuf.size()});
  const std::uint64_t f1[] = {0x1000}, f2[] = {0x2000, 0x3000}, f3[] = {0x1000, 0x3000},
                      f4[] = {0x4000};
  EXPECT_EQ(w.defineSite(f1, 1), 1u);
  EXPECT_EQ(w.defineSite(f2, 2), 2u);
  EXPECT_EQ(w.defineSite(f3, 2), 3u);
  EXPECT_EQ(w.defineSite(f4, 1), 4u);
  for (std::size_t i = 0; i < events.size(); ++i) {
    events[i].timeNs = 10 * (i + 1);
    EXPECT_NE(w.append(events[i]), decltype(w)::kRejected) << "event " << i + 1;
  }
  EXPECT_TRUE(w.finish());
  return dir.write(name, out).string();
}

inline Event mallocAt(std::uint64_t size, std::uint64_t site) {
  Event e = ev(Op::Malloc, size);
  e.site = site;
  return e;
}

inline Event freeOf(std::uint64_t id) { return ev(Op::Free, 0, kNoObject, id); }

// Twelve events; live bytes after each: 100 110 100 120 150 130 100 600 500 540 40 48.
//   1 o0 = 100 B at site 1        5 o3 = 30 B at site 3     9  free o0
//   2 o1 = 10 B at site 2         6 free o2                 10 o5 = 40 B at site 1 (kept)
//   3 free o1 (temporary)         7 free o3 (temporary)     11 free o4
//   4 o2 = 20 B at site 2         8 o4 = 500 B at site 3    12 o6 = 8 B at site 2 (kept)
inline std::string smallTrace(const TempDir& dir) {
  return timelineTrace(dir, "small.trace",
                       {mallocAt(100, 1), mallocAt(10, 2), freeOf(1), mallocAt(20, 2),
                        mallocAt(30, 3), freeOf(2), freeOf(3), mallocAt(500, 3), freeOf(0),
                        mallocAt(40, 1), freeOf(4), mallocAt(8, 2)});
}

// 1,000 events: event 1 allocates 1000 B at site 1, kept; then 8 B at site 2 on each even
// event, freed on the next; except that event 503 allocates 5000 B at site 3 (the peak,
// 6008 B live), 504 frees it and 505 frees the 8 B of 502. The 8 B of 1000 are kept.
inline std::string spikeTrace(const TempDir& dir) {
  std::vector<Event> events{mallocAt(1000, 1)};
  std::uint64_t nextId = 1, small = 0, spike = 0;
  for (std::uint64_t e = 2; e <= 1000; ++e) {
    if (e == 503) {
      spike = nextId++;
      events.push_back(mallocAt(5000, 3));
    } else if (e == 504) {
      events.push_back(freeOf(spike));
    } else if (e % 2 == 0) {
      small = nextId++;
      events.push_back(mallocAt(8, 2));
    } else {
      events.push_back(freeOf(small));
    }
  }
  return timelineTrace(dir, "spike.trace", std::move(events));
}

// Twelve events for the document's choice of sites; the peak, 1050 B, is event 8.
//   1 o0 = 1000 B at site 1 (kept)   5 free o2 (temporary)     9  free o4 (temporary)
//   2 o1 = 8 B at site 2             6 o3 = 8 B at site 2      10 o5 = 20 B at site 4
//   3 free o1 (temporary)            7 free o3 (temporary)     11 o6 = 1 B at site 2 (kept)
//   4 o2 = 8 B at site 2             8 o4 = 50 B at site 3     12 free o5
inline std::string mixedTrace(const TempDir& dir) {
  return timelineTrace(dir, "mixed.trace",
                       {mallocAt(1000, 1), mallocAt(8, 2), freeOf(1), mallocAt(8, 2), freeOf(2),
                        mallocAt(8, 2), freeOf(3), mallocAt(50, 3), freeOf(4), mallocAt(20, 4),
                        mallocAt(1, 2), freeOf(5)});
}

}  // namespace tttest
