// CompressedInput (compressed_input.hpp): plain, zstd or gzip text, one line at a time.
#include "tracetools/compressed_input.hpp"

#include <zlib.h>
#include <zstd.h>

#include <cstring>

#include "support/error.hpp"

namespace strata::tracetools {
namespace {

constexpr std::size_t kReadChunk = std::size_t{1} << 16;
constexpr std::size_t kTextChunk = std::size_t{1} << 17;
// Longer lines are taken for a corrupt file rather than kept in memory without bound (the
// longest lines of real recordings are C++ function names, a few kilobytes).
constexpr std::size_t kMaxLine = std::size_t{4} << 20;

}  // namespace

// The decompression state of a zstd or gzip input.
struct CompressedInput::Decoder {
  ZSTD_DStream* zstd = nullptr;
  std::size_t zstdPending = 0;  // ZSTD_decompressStream's last hint: 0 when a frame just ended
  z_stream gz{};
  bool gzOpen = false;
  bool gzMemberEnded = false;
  ~Decoder() {
    if (zstd != nullptr) ZSTD_freeDStream(zstd);
    if (gzOpen) inflateEnd(&gz);
  }
};

CompressedInput::CompressedInput(std::istream& in, std::string name)
    : in_(in), name_(std::move(name)) {}

CompressedInput::~CompressedInput() = default;

void CompressedInput::fail(const std::string& why) const {
  throw support::Error(name_ + ": " + why);
}

// Alternates reading and decoding until some text comes out or the input ends.
bool CompressedInput::refill() {
  text_.erase(0, textPos_);
  textPos_ = 0;
  while (!ended_) {
    const bool inputEnded = readRaw();
    if (!started_) startDecoder();
    if (inputEnded && compression_ == Compression::None) {
      ended_ = true;
      break;
    }
    const std::size_t before = text_.size();
    if (compression_ == Compression::None) {
      text_.append(raw_, rawPos_);
      rawPos_ = raw_.size();
    } else if (compression_ == Compression::Zstd) {
      decodeZstd(before);
    } else {
      decodeGzip(before);
    }
    if (text_.size() > before) return true;
    if (inputEnded) {
      ended_ = true;
      checkComplete();
    }
  }
  return false;
}

bool CompressedInput::readRaw() {
  if (rawPos_ != raw_.size()) return false;
  rawOffset_ += raw_.size();
  raw_.resize(kReadChunk);
  in_.read(raw_.data(), static_cast<std::streamsize>(raw_.size()));
  raw_.resize(static_cast<std::size_t>(in_.gcount()));
  rawPos_ = 0;
  if (in_.bad()) fail("read error");
  return raw_.empty();
}

void CompressedInput::startDecoder() {
  started_ = true;
  const auto* b = reinterpret_cast<const unsigned char*>(raw_.data());
  decoder_ = std::make_unique<Decoder>();
  if (raw_.size() >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) {
    compression_ = Compression::Zstd;
    decoder_->zstd = ZSTD_createDStream();
    if (decoder_->zstd == nullptr) fail("out of memory for zstd");
    ZSTD_initDStream(decoder_->zstd);
  } else if (raw_.size() >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
    compression_ = Compression::Gzip;
    if (inflateInit2(&decoder_->gz, 15 + 16) != Z_OK) fail("cannot start zlib");
    decoder_->gzOpen = true;
  }
}

void CompressedInput::decodeZstd(std::size_t before) {
  text_.resize(before + kTextChunk);
  ZSTD_inBuffer zin{raw_.data(), raw_.size(), rawPos_};
  ZSTD_outBuffer zout{text_.data() + before, kTextChunk, 0};
  const std::size_t r = ZSTD_decompressStream(decoder_->zstd, &zout, &zin);
  text_.resize(before + zout.pos);
  if (ZSTD_isError(r))
    fail("corrupt zstd data near compressed byte " + std::to_string(rawOffset_ + zin.pos) +
         ": " + ZSTD_getErrorName(r));
  // After a frame's end a call with no input asks for the next frame's header: only a
  // call that moved data says whether a frame is unfinished.
  if (zin.pos != rawPos_ || zout.pos != 0) decoder_->zstdPending = r;
  rawPos_ = zin.pos;
}

void CompressedInput::decodeGzip(std::size_t before) {
  z_stream& z = decoder_->gz;
  if (decoder_->gzMemberEnded && rawPos_ < raw_.size()) {
    // Another gzip member follows (gzip files may be concatenated).
    if (inflateReset(&z) != Z_OK) fail("cannot restart zlib");
    decoder_->gzMemberEnded = false;
  }
  text_.resize(before + kTextChunk);
  z.next_in = reinterpret_cast<Bytef*>(raw_.data() + rawPos_);
  z.avail_in = static_cast<uInt>(raw_.size() - rawPos_);
  z.next_out = reinterpret_cast<Bytef*>(text_.data() + before);
  z.avail_out = static_cast<uInt>(kTextChunk);
  const int r = inflate(&z, Z_NO_FLUSH);
  text_.resize(before + (kTextChunk - z.avail_out));
  const std::size_t used = (raw_.size() - rawPos_) - z.avail_in;
  if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR)
    fail("corrupt gzip data near compressed byte " + std::to_string(rawOffset_ + rawPos_ + used) +
         ": " + (z.msg != nullptr ? z.msg : "inflate failed"));
  rawPos_ += used;
  if (r == Z_STREAM_END) decoder_->gzMemberEnded = true;
}

// Nothing more came out of the decoder and nothing more goes in: it must be at the end of a
// frame (zstd) or member (gzip).
void CompressedInput::checkComplete() const {
  if (compression_ == Compression::Zstd && decoder_->zstdPending != 0)
    fail("the zstd stream ends early after " + std::to_string(rawOffset_) +
         " bytes (truncated file?)");
  if (compression_ == Compression::Gzip && !decoder_->gzMemberEnded)
    fail("the gzip stream ends early after " + std::to_string(rawOffset_) +
         " bytes (truncated file?)");
}

bool CompressedInput::getLine(std::string& line) {
  std::size_t searched = textPos_;
  for (;;) {
    const std::size_t nl = text_.find('\n', searched);
    if (nl != std::string::npos) {
      line.assign(text_, textPos_, nl - textPos_);
      textPos_ = nl + 1;
      return true;
    }
    if (text_.size() - textPos_ > kMaxLine)
      fail("a line longer than " + std::to_string(kMaxLine >> 20) + " MiB (not a text file?)");
    searched = text_.size() - textPos_;
    if (!refill()) {
      if (text_.size() == textPos_) return false;
      line.assign(text_, textPos_);  // the last line, without its '\n'
      textPos_ = text_.size();
      return true;
    }
    // refill() moved the unread text to the front: keep searching after what was seen.
  }
}

}  // namespace strata::tracetools
