// The figures by site that computeStats keeps as it reads (site_stats.hpp, site_history.hpp),
// against a reference kept here: a record per object ever allocated (site, size, birth and
// death events), from which every figure and every moment's live bytes are worked out at the
// end, as the tally did before it was bounded by what is live. Random traces of mallocs,
// reallocs and frees over a few sites, long enough that the clock halves its samples many
// times, with a peak in the middle.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "tracetools/site_timeline.hpp"
#include "tracetools/trace_stats.hpp"

namespace {

using namespace tttest;
namespace trace = strata::trace;
namespace tt = strata::tracetools;
using U = std::vector<std::uint64_t>;

constexpr std::uint64_t kNever = ~std::uint64_t{0};

// One object as the reference keeps it.
struct Object {
  std::uint64_t site = 0, size = 0, birth = 0, death = kNever;
};

// The reference: the figures of every site from every object, at the end.
struct Reference {
  std::vector<Object> objects;  // by id
  std::vector<tt::SiteFigures> bySite;
  std::uint64_t lastBorn = kNever, peakEvent = 0, peakNs = 0, peakBytes = 0, live = 0;
  tt::EventClock clock;
  std::uint64_t events = 0;

  explicit Reference(std::size_t sites) : bySite(sites + 1) {
    for (std::size_t i = 0; i < bySite.size(); ++i) bySite[i].site = i;
  }
  void born(std::uint64_t site, std::uint64_t size) {
    lastBorn = objects.size();
    objects.push_back(Object{site, size, events + 1, kNever});
    live += size;
  }
  void died(std::uint64_t id) {
    objects[id].death = events + 1;
    live -= objects[id].size;
    if (id != lastBorn) return;
    lastBorn = kNever;
    ++bySite[objects[id].site].temporaryAllocations;
    bySite[objects[id].site].temporaryBytes += objects[id].size;
  }
  // After each event, at time `ns`; `birth`: the event created an object.
  void tick(std::uint64_t ns, bool birth) {
    ++events;
    if (birth && live > peakBytes) {
      peakBytes = live;
      peakEvent = events;
      peakNs = ns;
    }
    clock.add(events, ns);
  }
  tt::SiteTimeline finish() {
    for (const Object& o : objects) {
      tt::SiteFigures& f = bySite[o.site];
      ++f.allocations;
      f.bytes += o.size;
      if (o.birth <= peakEvent && o.death > peakEvent) {
        ++f.peakLiveObjects;
        f.peakLiveBytes += o.size;
      }
      if (o.death == kNever) {
        ++f.neverFreedObjects;
        f.neverFreedBytes += o.size;
      }
    }
    const tt::Moments m = tt::chooseMoments(clock, events, tt::kTimelineMoments, peakEvent, peakNs);
    tt::SiteTimeline t{m.events, m.ns, U(bySite.size() * m.events.size(), 0)};
    for (const Object& o : objects)
      for (std::size_t j = 0; j < m.events.size(); ++j)
        if (o.birth <= m.events[j] && o.death > m.events[j])
          t.liveBytes[o.site * m.events.size() + j] += o.size;
    for (tt::SiteFigures& f : bySite) {
      const auto row = t.site(f.site);
      if (!row.empty()) f.maxLiveBytes = *std::max_element(row.begin(), row.end());
    }
    return t;
  }
};

// A trace of `events` random events over `sites` sites (0: unknown) written to `path`, its
// figures worked out by `ref`: live objects grow to about `peakLive` in the first half and
// shrink in the second, so the peak is somewhere in the middle.
void randomTrace(const std::string& path, std::uint64_t seed, std::uint64_t events,
                 std::size_t sites, std::size_t peakLive, Reference& ref) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> out, buf(1 << 16), sbuf(1 << 12);
  auto sink = [&out](const unsigned char* d, std::size_t n) {
    out.insert(out.end(), d, d + n);
    return true;
  };
  trace::TraceWriter<decltype(sink)> w(buf.data(), buf.size(), sink,
                                       trace::SiteBuffer{sbuf.data(), sbuf.size()});
  for (std::size_t s = 1; s <= sites; ++s) {
    const std::uint64_t frame[] = {0x1000 * s};
    w.defineSite(frame, 1);
  }
  std::vector<std::uint64_t> live;  // ids
  std::uint64_t ns = 0;
  for (std::uint64_t i = 0; i < events; ++i) {
    const std::size_t target = i < events / 2 ? peakLive * (2 * i + 1) / events : peakLive * (2 * (events - i)) / events;
    const bool grow = live.size() < target ? rng() % 4 != 0 : rng() % 4 == 0;
    const std::uint64_t site = rng() % 8 == 0 ? 0 : 1 + rng() % sites;
    const std::uint64_t size = 1 + rng() % (rng() % 16 == 0 ? 100000 : 256);
    ns += rng() % 100;
    Event e;
    e.timeNs = ns;
    e.site = site;
    bool birth = false;
    if (live.empty() || (grow && rng() % 8 != 0)) {
      e.op = rng() % 2 ? Op::Malloc : Op::New;
      e.size = size;
      if (rng() % 64 == 0) {
        e.flags = trace::kFlagFailed;  // no object
      } else {
        ref.born(site, size);
        live.push_back(w.append(e));
        birth = true;
        ref.tick(ns, birth);
        continue;
      }
      EXPECT_NE(w.append(e), decltype(w)::kRejected);
    } else {
      const std::size_t k = rng() % live.size();
      const std::uint64_t id = live[k];
      if (rng() % 4 == 0) {  // realloc: the old object dies, a new one is born
        e.op = Op::Realloc;
        e.target = id;
        e.size = size;
        ref.died(id);
        ref.born(site, size);
        live[k] = w.append(e);
        birth = true;
      } else {
        e.op = Op::Free;
        e.object = id;
        e.site = 0;
        ref.died(id);
        live[k] = live.back();
        live.pop_back();
        EXPECT_NE(w.append(e), decltype(w)::kRejected);
      }
    }
    ref.tick(ns, birth);
  }
  EXPECT_TRUE(w.finish());
  writeFile(path, out);
}

void expectSame(const tt::SiteStats& s, Reference& ref) {
  const tt::SiteTimeline t = ref.finish();
  EXPECT_EQ(s.peakEvent, ref.peakEvent);
  EXPECT_EQ(s.peakNs, ref.peakNs);
  EXPECT_EQ(s.timeline.events, t.events);
  EXPECT_EQ(s.timeline.ns, t.ns);
  EXPECT_EQ(s.timeline.liveBytes, t.liveBytes);
  ASSERT_EQ(s.bySite.size(), ref.bySite.size());
  for (std::size_t i = 0; i < s.bySite.size(); ++i) {
    const tt::SiteFigures &a = s.bySite[i], &b = ref.bySite[i];
    EXPECT_EQ(a.allocations, b.allocations) << "site " << i;
    EXPECT_EQ(a.bytes, b.bytes) << "site " << i;
    EXPECT_EQ(a.peakLiveBytes, b.peakLiveBytes) << "site " << i;
    EXPECT_EQ(a.peakLiveObjects, b.peakLiveObjects) << "site " << i;
    EXPECT_EQ(a.neverFreedBytes, b.neverFreedBytes) << "site " << i;
    EXPECT_EQ(a.neverFreedObjects, b.neverFreedObjects) << "site " << i;
    EXPECT_EQ(a.temporaryAllocations, b.temporaryAllocations) << "site " << i;
    EXPECT_EQ(a.temporaryBytes, b.temporaryBytes) << "site " << i;
    EXPECT_EQ(a.maxLiveBytes, b.maxLiveBytes) << "site " << i;
  }
}

// Long traces: 300,000 events halve the clock's 1,024 samples nine times over.
TEST(SiteTally, MatchesAPerObjectReferenceOnLongRandomTraces) {
  TempDir dir;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Reference ref(7);
    const std::string path = dir / ("long-" + std::to_string(seed) + ".trace");
    randomTrace(path, seed, 300'000 + seed * 977, 7, 2000, ref);
    tt::SiteStats s;
    tt::computeStats(path, &s);
    expectSame(s, ref);
  }
}

// Short traces, every event a sample of the clock, and traces just past its first halving.
TEST(SiteTally, MatchesAPerObjectReferenceOnShortRandomTraces) {
  TempDir dir;
  const std::uint64_t lengths[] = {1, 2, 150, 1000, 1023, 1024, 1025, 20000};
  for (std::size_t i = 0; i < std::size(lengths); ++i) {
    SCOPED_TRACE(std::to_string(lengths[i]) + " events");
    Reference ref(3);
    const std::string path = dir / ("short-" + std::to_string(i) + ".trace");
    randomTrace(path, 100 + i, lengths[i], 3, 50, ref);
    tt::SiteStats s;
    tt::computeStats(path, &s);
    expectSame(s, ref);
  }
}

}  // namespace
