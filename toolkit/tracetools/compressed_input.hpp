// CompressedInput: the lines of a file that may be zstd- or gzip-compressed, decompressed as
// they are read (for importers of other tools' recordings: heaptrack writes .zst or .gz). The
// format is told by the first bytes, not the file name: zstd frames (28 b5 2f fd), gzip
// members (1f 8b), anything else is plain text. Decompression goes through libzstd and zlib
// in memory, so a corrupt or truncated stream is an error with the offset, never a crash.
#pragma once
#include <cstdint>
#include <istream>
#include <memory>
#include <string>


namespace strata::tracetools {

enum class Compression { None, Zstd, Gzip };

class CompressedInput {
 public:
  // Reads from `in` (named `name` in messages), which must outlive this object.
  CompressedInput(std::istream& in, std::string name);
  ~CompressedInput();
  CompressedInput(const CompressedInput&) = delete;
  CompressedInput& operator=(const CompressedInput&) = delete;

  // The next line, without its '\n', into `line`; false at the end of the input. Throws
  // support::Error "NAME: corrupt zstd data at compressed byte N: REASON" or "NAME: the
  // gzip stream ends early (truncated file?)" and the like.
  bool getLine(std::string& line);
  // What the first bytes said (known after the first getLine).
  Compression compression() const { return compression_; }

 private:
  struct Decoder;
  // Refills text_ from the input; false at its end.
  bool refill();
  // Reads the next block of input into raw_ when it is used up; true when the input ended.
  bool readRaw();
  // From the first bytes: which decoder, started.
  void startDecoder();
  // Decode what raw_ holds from rawPos_, appending to text_ (from its size `before`).
  void decodeZstd(std::size_t before);
  void decodeGzip(std::size_t before);
  // At the end of the input with nothing decoded: fails unless a frame or member just ended.
  void checkComplete() const;
  [[noreturn]] void fail(const std::string& why) const;

  std::istream& in_;
  std::string name_;
  Compression compression_ = Compression::None;
  bool started_ = false;
  bool ended_ = false;
  std::unique_ptr<Decoder> decoder_;
  std::string raw_;         // compressed bytes read but not yet decoded
  std::size_t rawPos_ = 0;
  std::uint64_t rawOffset_ = 0;  // input bytes consumed before raw_[0]
  std::string text_;        // decoded bytes not yet returned
  std::size_t textPos_ = 0;
};

}  // namespace strata::tracetools
