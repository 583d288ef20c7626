// The curves `strata diff` reads from a compare folder: an allocator's heap over events from a
// series file, downsampled keeping each bucket's minimum and maximum, so the peak survives.
// (A trace's live-bytes curve comes downsampled the same way from computeStats: SiteStats.)
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "diff_model.hpp"

namespace strata::diff {

// Points fed in order of x, kept in at most `buckets` buckets of equal count (the width
// doubles when they fill); each bucket gives its minimum and maximum point, in order of x.
class Downsampler {
 public:
  explicit Downsampler(std::size_t buckets = 1024);
  void add(double x, double y);
  void finish(Curve& curve) const;  // appends the points to curve.xs, curve.ys

 private:
  struct Bucket {
    double minX = 0, minY = 0, maxX = 0, maxY = 0;
  };
  void halve();
  std::size_t max_;
  std::uint64_t width_ = 1, points_ = 0;
  std::vector<Bucket> buckets_;
};

// The column `yColumn` over the column `xColumn` of a CSV file with a header line (a compare
// series file). Throws support::Error naming the file when it cannot be read or lacks them.
Curve csvCurve(const std::string& path, const std::string& xColumn, const std::string& yColumn);

}  // namespace strata::diff
