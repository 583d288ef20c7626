// zstd for compressed event chunks (docs/toolkit/trace-format.md, "Compressed event chunk"):
// the compressor a TraceWriter is given and the decompressor a TraceReader keeps. Both run on
// memory their owner supplies (zstd's static contexts), so neither calls malloc: the writer
// runs inside an LD_PRELOADed recorder, the reader inside a replayer that keeps its buffers
// out of the allocator it measures.
//
// The trace format is header-only and does not require zstd: this header is compiled in only
// where STRATA_TRACE_ZSTD is defined (the CMake target strata::trace_zstd defines it and links
// libzstd). Define it for the whole program or for none of it: TraceReader is a template, and
// its instantiations must agree on whether they read compressed chunks.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#define ZSTD_STATIC_LINKING_ONLY  // the static contexts (exported by libzstd.so.1 since 1.4)
#include <zstd.h>
#include <zstd_errors.h>

#include "strata/trace/format.hpp"
#include "strata/trace/writer.hpp"

namespace strata::trace {

// The zstd level the toolkit's writers compress at: zstd's fastest strategy, so that
// compressing stays a small part of what recording costs.
inline constexpr int kDefaultCompressionLevel = 1;

// A zstd compression context on memory the caller supplies (workspaceSize(level) bytes,
// 8-byte aligned, living as long as this object). Never allocates.
class ZstdCompressor {
 public:
  static std::size_t workspaceSize(int level) noexcept { return ZSTD_estimateCCtxSize(level); }

  ZstdCompressor(void* workspace, std::size_t size, int level) noexcept
      : cctx_(ZSTD_initStaticCCtx(workspace, size)), level_(level) {}
  ZstdCompressor(const ZstdCompressor&) = delete;
  ZstdCompressor& operator=(const ZstdCompressor&) = delete;

  // False when the workspace was too small or misaligned.
  bool ok() const noexcept { return cctx_ != nullptr; }

  // The ChunkCompressor a writer takes, compressing into out[0, capacity).
  ChunkCompressor chunkCompressor(unsigned char* out, std::size_t capacity) noexcept {
    if (cctx_ == nullptr) return ChunkCompressor{};
    return ChunkCompressor{&compressThunk, this, out, capacity};
  }

 private:
  static std::size_t compressThunk(void* self, const unsigned char* in, std::size_t n,
                                   unsigned char* out, std::size_t capacity) noexcept {
    auto* z = static_cast<ZstdCompressor*>(self);
    const std::size_t r = ZSTD_compressCCtx(z->cctx_, out, capacity, in, n, z->level_);
    return ZSTD_isError(r) ? 0 : r;
  }

  ZSTD_CCtx* cctx_;
  int level_;
};

// A zstd decompression context on memory from Alloc, made on first use. decompress() says
// why a frame does not give exactly the bytes its chunk header promises.
template <class Alloc = std::allocator<unsigned char>>
class ZstdDecompressor {
 public:
  ZstdDecompressor() = default;
  ZstdDecompressor(const ZstdDecompressor&) = delete;
  ZstdDecompressor& operator=(const ZstdDecompressor&) = delete;

  // Decompresses in[0, n) into out[0, expected). Returns nullptr when it gave exactly
  // `expected` bytes, else why not; `got` holds what it gave when it gave fewer.
  const char* decompress(const unsigned char* in, std::size_t n, unsigned char* out,
                         std::size_t expected, std::size_t& got) {
    got = 0;
    if (dctx_ == nullptr && !init()) return "no memory for the decompression context";
    const std::size_t r = ZSTD_decompressDCtx(dctx_, out, expected, in, n);
    if (ZSTD_isError(r))
      return ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall
                 ? "it decompresses to more bytes than its header says"
                 : ZSTD_getErrorName(r);
    got = r;
    return r == expected ? nullptr : "it decompresses to fewer bytes than its header says";
  }

 private:
  bool init() {
    const std::size_t size = ZSTD_estimateDCtxSize();
    workspace_.resize(size + 8);
    const auto at = reinterpret_cast<std::uintptr_t>(workspace_.data());
    void* aligned = workspace_.data() + ((8 - at % 8) % 8);
    dctx_ = ZSTD_initStaticDCtx(aligned, size);
    return dctx_ != nullptr;
  }

  std::vector<unsigned char, Alloc> workspace_;
  ZSTD_DCtx* dctx_ = nullptr;
};

}  // namespace strata::trace
