// The recorder's event-chunk compressor (chunk_compression.hpp).
#include "record/recorder/chunk_compression.hpp"

#include <stdlib.h>

#include <new>

#include "record/recorder/core.hpp"
#include "record/recorder/mapped_memory.hpp"
#include "strata/protocol/recorder_environment.hpp"
#include "strata/trace/compression.hpp"

namespace strata::record {
namespace {

using strata::trace::ZstdCompressor;

// The compressor lives in static storage (its constructor is not constexpr) and works on
// mapped pages: the context (about 570 KiB at level 1) and one compressed chunk.
struct Compression {
  alignas(ZstdCompressor) unsigned char storage[sizeof(ZstdCompressor)];
  ZstdCompressor* zstd = nullptr;
  unsigned char* packed = nullptr;  // kBufferBytes
};
constinit Compression gCompression{};

}  // namespace

void initChunkCompression() noexcept {
  if (protocol::env::settingOn(::getenv(protocol::env::kPlain))) return;
  const int level = strata::trace::kDefaultCompressionLevel;
  const std::size_t size = ZstdCompressor::workspaceSize(level);
  void* workspace = mapPages(size);
  auto* packed = static_cast<unsigned char*>(mapPages(kBufferBytes));
  if (workspace == nullptr || packed == nullptr) return;
  auto* zstd = new (gCompression.storage) ZstdCompressor(workspace, size, level);
  if (!zstd->ok()) return;
  gCompression.zstd = zstd;
  gCompression.packed = packed;
}

strata::trace::ChunkCompressor chunkCompressor() noexcept {
  if (gCompression.zstd == nullptr) return {};
  return gCompression.zstd->chunkCompressor(gCompression.packed, kBufferBytes);
}

}  // namespace strata::record
