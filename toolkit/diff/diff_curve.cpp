// The downsampler and the series-file reader (diff_curve.hpp).
#include "diff_curve.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "error.hpp"

namespace strata::diff {

Downsampler::Downsampler(std::size_t buckets) : max_(buckets < 2 ? 2 : buckets & ~std::size_t{1}) {}

void Downsampler::add(double x, double y) {
  std::uint64_t index = points_ / width_;
  if (index >= max_) {
    halve();
    index = points_ / width_;
  }
  ++points_;
  if (index == buckets_.size()) {
    buckets_.push_back({x, y, x, y});
    return;
  }
  Bucket& b = buckets_.back();
  if (y < b.minY) b.minX = x, b.minY = y;
  if (y > b.maxY) b.maxX = x, b.maxY = y;
}

// Merges neighbouring buckets: twice the width, half the count (all of them full).
void Downsampler::halve() {
  std::vector<Bucket> merged;
  merged.reserve(buckets_.size() / 2);
  for (std::size_t i = 0; i + 1 < buckets_.size(); i += 2) {
    Bucket m = buckets_[i];
    const Bucket& n = buckets_[i + 1];
    if (n.minY < m.minY) m.minX = n.minX, m.minY = n.minY;
    if (n.maxY > m.maxY) m.maxX = n.maxX, m.maxY = n.maxY;
    merged.push_back(m);
  }
  buckets_ = std::move(merged);
  width_ *= 2;
}

void Downsampler::finish(Curve& curve) const {
  for (const Bucket& b : buckets_) {
    const bool minFirst = b.minX <= b.maxX;
    curve.xs.push_back(minFirst ? b.minX : b.maxX);
    curve.ys.push_back(minFirst ? b.minY : b.maxY);
    if (b.minX == b.maxX) continue;
    curve.xs.push_back(minFirst ? b.maxX : b.minX);
    curve.ys.push_back(minFirst ? b.maxY : b.minY);
  }
}

namespace {

std::vector<std::string> splitCsv(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
  return cells;
}

std::size_t columnIndex(const std::vector<std::string>& header, const std::string& name,
                        const std::string& path) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  throw support::Error(path + ": no column '" + name + "' in its header line");
}

}  // namespace

Curve csvCurve(const std::string& path, const std::string& xColumn, const std::string& yColumn) {
  std::ifstream in(path);
  if (!in) throw support::Error(path + ": cannot open: " + std::strerror(errno));
  std::string line;
  if (!std::getline(in, line)) throw support::Error(path + ": empty (no header line)");
  const std::vector<std::string> header = splitCsv(line);
  const std::size_t xi = columnIndex(header, xColumn, path),
                    yi = columnIndex(header, yColumn, path);
  Downsampler sampler;
  for (std::size_t row = 2; std::getline(in, line); ++row) {
    if (line.empty()) continue;
    const std::vector<std::string> cells = splitCsv(line);
    char* endX = nullptr;
    char* endY = nullptr;
    const double x = xi < cells.size() ? std::strtod(cells[xi].c_str(), &endX) : 0;
    const double y = yi < cells.size() ? std::strtod(cells[yi].c_str(), &endY) : 0;
    if (endX == nullptr || endY == nullptr || *endX != '\0' || *endY != '\0' ||
        endX == cells[xi].c_str() || endY == cells[yi].c_str())
      throw support::Error(path + ":" + std::to_string(row) + ": not a row of numbers");
    sampler.add(x, y);
  }
  Curve c{.label = yColumn,
          .run = "",
          .x = xColumn == "event" ? "events" : xColumn,
          .xs = {},
          .ys = {}};
  sampler.finish(c);
  return c;
}

}  // namespace strata::diff
