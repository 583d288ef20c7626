// The bytes live over a trace's run, for the figures by site (site_stats.hpp) and the sites
// document (sites_document.hpp): the program's live bytes downsampled as the trace is read
// (LiveCurveBuilder), the timestamps of evenly spaced events (EventClock) and the moments at
// which every site's live bytes are taken (chooseMoments; those bytes are SiteHistory's,
// site_history.hpp). Events are counted from 1, as SiteStats::peakEvent; an object is live at
// event m when it was born at or before m and died after m (or never). Memory stays bounded
// however long the trace: a few thousand points each.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::tracetools {

// The program's live bytes over the run, downsampled (SiteStats::curve): points in event
// order; every bucket of events keeps its minimum and its maximum, so the peak is one of the
// points, and the last event is the last point.
struct LiveCurve {
  std::vector<std::uint64_t> events, ns, liveBytes;
};

// The moments of a timeline: sorted event indices and their timestamps.
struct Moments {
  std::vector<std::uint64_t> events, ns;
};

// Builds the LiveCurve while the trace is read: buckets of `width` events, the width doubling
// (pairs of buckets merged) whenever kMaxBuckets are full, so at most 2 * kMaxBuckets + 1 points.
class LiveCurveBuilder {
 public:
  static constexpr std::size_t kMaxBuckets = 2000;

  // The live bytes after event `event` (each event once, in order), at time `ns`.
  void add(std::uint64_t event, std::uint64_t ns, std::uint64_t live) {
    const Point p{event, ns, live};
    if (inBucket_ == 0) {
      current_ = Bucket{p, p};
    } else {
      if (live < current_.min.live) current_.min = p;  // strict: the first of equal points
      if (live > current_.max.live) current_.max = p;
    }
    last_ = p;
    if (++inBucket_ == width_) closeBucket();
  }
  LiveCurve finish() const;

 private:
  struct Point {
    std::uint64_t event = 0, ns = 0, live = 0;
  };
  struct Bucket {
    Point min, max;
  };
  void closeBucket();

  std::vector<Bucket> buckets_;
  Bucket current_;
  Point last_;
  std::uint64_t width_ = 1, inBucket_ = 0;
};

// The timestamps of every `stride`-th event, the stride doubling (every other sample dropped)
// when kMaxSamples are held, and of the last event: where the moments' times come from.
// Between 512 and 1,024 samples over any trace past its first halving: a few for each of the
// timeline's moments, so that each is within 1/1,024 of the trace of even spacing, and few
// enough that a history of every site at every sample (site_history.hpp) stays small.
class EventClock {
 public:
  static constexpr std::size_t kMaxSamples = 1024;

  void add(std::uint64_t event, std::uint64_t ns) {
    lastEvent_ = event;
    lastNs_ = ns;
    if ((event & (stride_ - 1)) == 0) sample(event, ns);
  }
  // The samples and the last event, in event order.
  Moments samples() const;

 private:
  void sample(std::uint64_t event, std::uint64_t ns);

  std::vector<std::uint64_t> events_, ns_;
  std::uint64_t stride_ = 1, lastEvent_ = 0, lastNs_ = 0;
};

// At most `count` moments evenly spaced in events over the trace's `events` (the event at
// each j * events / count, j = 1..count, or the nearest sampled one for a long trace), and
// the peak's event inserted in its place when it is not one of them.
Moments chooseMoments(const EventClock& clock, std::uint64_t events, std::size_t count,
                      std::uint64_t peakEvent, std::uint64_t peakNs);

}  // namespace strata::tracetools
