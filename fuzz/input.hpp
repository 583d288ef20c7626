// ByteReader: a fuzz input read front to back as the small numbers a target decodes its
// calls from. Past the end every read answers 0, so any input, even an empty one, is a whole
// sequence of calls. Each target derives its own reader with the size (and alignment)
// distributions it needs: those decide what its corpus means, so they stay the target's own.
#pragma once
#include <cstddef>
#include <cstdint>

namespace strata::fuzz {

class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : at_(data), end_(data + size) {}

  bool empty() const { return at_ == end_; }

  std::uint8_t byte() { return at_ == end_ ? 0 : *at_++; }

  // Two bytes, the first the low one (read in that order, whatever the compiler's order of
  // evaluating operands).
  std::uint16_t u16() {
    const std::uint16_t low = byte();
    return static_cast<std::uint16_t>(low | byte() << 8);
  }

  // k bytes (at most 8), the first the most significant.
  std::uint64_t bytes(int k) {
    std::uint64_t v = 0;
    for (int i = 0; i < k; ++i) v = v << 8 | byte();
    return v;
  }

 private:
  const std::uint8_t* at_;
  const std::uint8_t* end_;
};

}  // namespace strata::fuzz
