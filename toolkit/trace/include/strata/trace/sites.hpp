// Allocation sites and modules in a trace (docs/toolkit/trace-format.md, "Sites"): the encoding of one
// site and one module entry, shared by TraceWriter (no allocation: it encodes into its own
// buffers) and the table TraceReader fills from sites and modules chunks. A site is a short
// stack of return addresses, innermost first; a module is a loaded object with its bias, so a
// tool can turn an address back into a function and a source line.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "strata/trace/format.hpp"

namespace strata::trace {

// Encodes one site: varint depth, the innermost frame as a varint, then each further frame as
// zigzag(frame - previous frame). Frames of one module lie close together, so a caller costs
// two or three bytes instead of eight. Writes at most kMaxSiteBytes. The caller checks
// 1 <= depth <= kMaxSiteDepth.
inline unsigned char* putSite(unsigned char* p, const std::uint64_t* frames,
                              std::size_t depth) noexcept {
  p = putVarint(p, depth);
  p = putVarint(p, frames[0]);
  for (std::size_t i = 1; i < depth; ++i) p = putVarint(p, zigzag(frames[i] - frames[i - 1]));
  return p;
}

// The bytes putModule writes for m (paths and build ids already cut to their limits).
inline std::size_t moduleBytes(const ModuleInfo& m) noexcept {
  return 5 * 10 + m.pathLength + m.buildIdLength;
}

// Encodes one module entry: varint start, varint size (end - start), varint bias, varint path
// length, the path, varint build-id length, the build id.
inline unsigned char* putModule(unsigned char* p, const ModuleInfo& m) noexcept {
  p = putVarint(p, m.start);
  p = putVarint(p, m.end - m.start);
  p = putVarint(p, m.bias);
  p = putVarint(p, m.pathLength);
  if (m.pathLength != 0) std::memcpy(p, m.path, m.pathLength);
  p += m.pathLength;
  p = putVarint(p, m.buildIdLength);
  if (m.buildIdLength != 0) std::memcpy(p, m.buildId, m.buildIdLength);
  return p + m.buildIdLength;
}

// The sites and modules read so far. Alloc: where its storage comes from (the reader's own
// allocator, so a replayer keeps it out of the heap it measures). Memory: 8 bytes a frame and
// 8 a site, plus each module's path.
template <class Alloc = std::allocator<unsigned char>>
class SiteTable {
  template <class T>
  using Vec = std::vector<T, typename std::allocator_traits<Alloc>::template rebind_alloc<T>>;

 public:
  // Sites defined so far; ids run from 1 to siteCount().
  std::uint64_t siteCount() const noexcept { return starts_.size(); }
  // The frames of site `id` (1 <= id <= siteCount()), innermost first; empty for kNoSite or an
  // id not defined.
  std::span<const std::uint64_t> frames(std::uint64_t id) const noexcept {
    if (id == kNoSite || id > starts_.size()) return {};
    const std::size_t b = starts_[id - 1];
    const std::size_t e = id < starts_.size() ? starts_[id] : frames_.size();
    return {frames_.data() + b, e - b};
  }
  std::size_t moduleCount() const noexcept { return modules_.size(); }
  // Module i in the order read; its path and build id point into this table.
  ModuleInfo module(std::size_t i) const noexcept {
    const Stored& s = modules_[i];
    const char* b = bytes_.data();
    return ModuleInfo{s.start, s.end, s.bias, b + s.path, s.pathLength,
                      reinterpret_cast<const unsigned char*>(b + s.buildId), s.buildIdLength};
  }

  // Decodes `count` sites from [p, end), the payload of a sites chunk after its base-site
  // varint. Returns nullptr on success, else what is wrong (nothing is added then).
  const char* addSites(const unsigned char* p, const unsigned char* end, std::uint64_t count) {
    if (count > static_cast<std::size_t>(end - p) / 2) return "site count does not fit the payload";
    const std::size_t oldFrames = frames_.size(), oldSites = starts_.size();
    const char* why = nullptr;
    for (std::uint64_t i = 0; i < count && why == nullptr; ++i) {
      std::uint64_t depth = 0, v = 0;
      if ((p = getVarint(p, end, depth)) == nullptr) why = "bad site depth varint";
      else if (depth == 0 || depth > kMaxSiteDepth) why = "site depth not within 1 to 64";
      else if ((p = getVarint(p, end, v)) == nullptr) why = "bad frame varint";
      if (why != nullptr) break;
      starts_.push_back(frames_.size());
      frames_.push_back(v);
      for (std::uint64_t k = 1; k < depth && why == nullptr; ++k) {
        if ((p = getVarint(p, end, v)) == nullptr) why = "bad frame varint";
        else frames_.push_back(frames_.back() + unzigzag(v));
      }
    }
    if (why == nullptr && p != end) why = "bytes after the last site";
    if (why != nullptr) {
      frames_.resize(oldFrames);
      starts_.resize(oldSites);
    }
    return why;
  }

  // Decodes `count` module entries from [p, end), a modules chunk's payload. Returns nullptr on
  // success, else what is wrong (nothing is added then).
  const char* addModules(const unsigned char* p, const unsigned char* end, std::uint64_t count) {
    if (count > static_cast<std::size_t>(end - p) / 5) return "module count does not fit the payload";
    const std::size_t oldModules = modules_.size(), oldBytes = bytes_.size();
    const char* why = nullptr;
    for (std::uint64_t i = 0; i < count && why == nullptr; ++i) {
      Stored m;
      std::uint64_t size = 0, pathLen = 0, idLen = 0;
      if ((p = getVarint(p, end, m.start)) == nullptr || (p = getVarint(p, end, size)) == nullptr ||
          (p = getVarint(p, end, m.bias)) == nullptr || (p = getVarint(p, end, pathLen)) == nullptr)
        why = "malformed module entry";
      else if (size == 0 || m.start + size < m.start) why = "module address range empty or past 2^64";
      else if (pathLen > kMaxModulePath || pathLen > static_cast<std::size_t>(end - p))
        why = "module path too long";
      if (why != nullptr) break;
      m.end = m.start + size;
      m.path = bytes_.size();
      m.pathLength = static_cast<std::size_t>(pathLen);
      bytes_.insert(bytes_.end(), p, p + pathLen);
      p += pathLen;
      if ((p = getVarint(p, end, idLen)) == nullptr || idLen > kMaxBuildId ||
          idLen > static_cast<std::size_t>(end - p)) {
        why = "bad module build id";
        break;
      }
      m.buildId = bytes_.size();
      m.buildIdLength = static_cast<std::size_t>(idLen);
      bytes_.insert(bytes_.end(), p, p + idLen);
      p += idLen;
      modules_.push_back(m);
    }
    if (why == nullptr && p != end) why = "bytes after the last module";
    if (why != nullptr) {
      modules_.resize(oldModules);
      bytes_.resize(oldBytes);
    }
    return why;
  }

 private:
  // A module as kept: its path and build id are offsets into bytes_ (which moves as it grows).
  struct Stored {
    std::uint64_t start = 0, end = 0, bias = 0;
    std::size_t path = 0, pathLength = 0, buildId = 0, buildIdLength = 0;
  };

  Vec<std::uint64_t> frames_;  // every site's frames, one after another
  Vec<std::size_t> starts_;    // where site id k's frames start: starts_[k - 1]
  Vec<Stored> modules_;
  Vec<char> bytes_;
};

}  // namespace strata::trace
