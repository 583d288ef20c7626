// The live-bytes curve, the event clock and the moments (site_timeline.hpp).
#include "tracetools/site_timeline.hpp"

#include <algorithm>

namespace strata::tracetools {
namespace {

// The index of the sample whose event is nearest `target` (the earlier one on a tie).
std::size_t nearest(const std::vector<std::uint64_t>& events, std::uint64_t target) {
  const auto it = std::lower_bound(events.begin(), events.end(), target);
  std::size_t i = static_cast<std::size_t>(it - events.begin());
  if (i == events.size()) return i - 1;
  if (i > 0 && target - events[i - 1] <= events[i] - target) --i;
  return i;
}

}  // namespace

void LiveCurveBuilder::closeBucket() {
  buckets_.push_back(current_);
  inBucket_ = 0;
  if (buckets_.size() < kMaxBuckets) return;
  // Every bucket is full: merge pairs (the left one's point on a tie: the first).
  for (std::size_t i = 0; i < buckets_.size() / 2; ++i) {
    const Bucket& a = buckets_[2 * i];
    const Bucket& b = buckets_[2 * i + 1];
    buckets_[i] = Bucket{b.min.live < a.min.live ? b.min : a.min,
                         b.max.live > a.max.live ? b.max : a.max};
  }
  buckets_.resize(buckets_.size() / 2);
  width_ *= 2;
}

LiveCurve LiveCurveBuilder::finish() const {
  LiveCurve c;
  auto put = [&c](const Point& p) {
    if (!c.events.empty() && c.events.back() >= p.event) return;
    c.events.push_back(p.event);
    c.ns.push_back(p.ns);
    c.liveBytes.push_back(p.live);
  };
  auto putBucket = [&put](const Bucket& b) {
    put(b.min.event <= b.max.event ? b.min : b.max);
    put(b.min.event <= b.max.event ? b.max : b.min);
  };
  for (const Bucket& b : buckets_) putBucket(b);
  if (inBucket_ != 0) putBucket(current_);
  if (last_.event != 0) put(last_);
  return c;
}

void EventClock::sample(std::uint64_t event, std::uint64_t ns) {
  events_.push_back(event);
  ns_.push_back(ns);
  if (events_.size() < kMaxSamples) return;
  // Keep the multiples of the doubled stride: samples 1, 3, 5... (stride * 2, * 4, ...).
  std::size_t kept = 0;
  for (std::size_t i = 1; i < events_.size(); i += 2, ++kept) {
    events_[kept] = events_[i];
    ns_[kept] = ns_[i];
  }
  events_.resize(kept);
  ns_.resize(kept);
  stride_ *= 2;
}

Moments EventClock::samples() const {
  Moments m{events_, ns_};
  if (lastEvent_ != 0 && (m.events.empty() || m.events.back() != lastEvent_)) {
    m.events.push_back(lastEvent_);
    m.ns.push_back(lastNs_);
  }
  return m;
}

Moments chooseMoments(const EventClock& clock, std::uint64_t events, std::size_t count,
                      std::uint64_t peakEvent, std::uint64_t peakNs) {
  const Moments s = clock.samples();
  Moments m;
  if (events == 0 || s.events.empty() || count == 0) return m;
  const std::uint64_t k = std::min<std::uint64_t>(count, events);
  for (std::uint64_t j = 1; j <= k; ++j) {
    // ceil(j * events / k), without overflow for any trace length.
    const std::uint64_t target = j * (events / k) + (j * (events % k) + k - 1) / k;
    const std::size_t i = nearest(s.events, target);
    if (!m.events.empty() && m.events.back() >= s.events[i]) continue;
    m.events.push_back(s.events[i]);
    m.ns.push_back(s.ns[i]);
  }
  if (peakEvent != 0) {
    const auto at = std::lower_bound(m.events.begin(), m.events.end(), peakEvent);
    if (at == m.events.end() || *at != peakEvent) {
      const auto offset = at - m.events.begin();
      m.events.insert(at, peakEvent);
      m.ns.insert(m.ns.begin() + offset, peakNs);
    }
  }
  return m;
}

}  // namespace strata::tracetools
