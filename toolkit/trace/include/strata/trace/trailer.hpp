// The trace's trailer (docs/toolkit/trace-format.md): the totals it holds, the one decoder of
// its payload (the reader's and trailerFromTail's), and finding it in a file's last bytes, for
// a caller that needs the totals before reading the events.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "strata/trace/format.hpp"

namespace strata::trace {

// Totals from the trailer chunk.
struct TraceTotals {
  std::uint64_t events = 0;
  std::uint64_t objects = 0;
  std::uint64_t threads = 0;
  friend bool operator==(const TraceTotals&, const TraceTotals&) = default;
};

// A trailer chunk's payload, [p, end): three varints (events, objects, threads) and nothing
// after them. Empty when malformed. The one decoder of the payload: the reader's and
// trailerFromTail's.
inline std::optional<TraceTotals> decodeTrailerPayload(const unsigned char* p,
                                                       const unsigned char* end) noexcept {
  TraceTotals t;
  if ((p = getVarint(p, end, t.events)) == nullptr || (p = getVarint(p, end, t.objects)) == nullptr ||
      (p = getVarint(p, end, t.threads)) == nullptr || p != end)
    return std::nullopt;
  return t;
}

// The longest trailer chunk: its header and three 10-byte varints.
inline constexpr std::size_t kMaxTrailerBytes = kChunkHeaderSize + 30;

// Totals from a trace's trailer, found in the last n bytes of the file (read kMaxTrailerBytes
// of them, or the whole file when shorter): a chunk header with magic STTL, count 0 and the
// length of the rest, then its CRC-checked payload. Empty when the tail holds none. It checks
// nothing else of the trace: a wrong guess is impossible in practice and caught by a reader
// of the whole trace, which checks the trailer against the events. For a caller that needs
// the totals before the events (TraceReader gives totals() only once it has read them all).
inline std::optional<TraceTotals> trailerFromTail(const unsigned char* tail, std::size_t n) noexcept {
  for (std::size_t start = 0; start + kChunkHeaderSize + 3 <= n; ++start) {
    const unsigned char* h = tail + start;
    const std::size_t len = n - start - kChunkHeaderSize;
    if (getU32(h) != kTrailerChunkMagic || getU32(h + 4) != len || getU32(h + 8) != 0) continue;
    const unsigned char* p = h + kChunkHeaderSize;
    if (crc32(p, len) != getU32(h + 12)) continue;
    if (const std::optional<TraceTotals> t = decodeTrailerPayload(p, p + len)) return t;
  }
  return std::nullopt;
}

}  // namespace strata::trace
