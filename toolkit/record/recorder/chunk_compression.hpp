// The recorder's event-chunk compressor: zstd at kDefaultCompressionLevel on memory the
// recorder maps itself (a static compression context and one compressed chunk), so that
// compressing a chunk never calls malloc. STRATA_TRACE_PLAIN turns it off (plain chunks,
// format version 2).
#pragma once
#include "strata/trace/writer.hpp"

namespace strata::record {

// Reads STRATA_TRACE_PLAIN and, unless it is on, maps the compressor's memory. Once, when
// the recorder starts; without the memory the trace is written plain.
void initChunkCompression() noexcept;

// What the writer is given: the compressor, or none (plain chunks).
strata::trace::ChunkCompressor chunkCompressor() noexcept;

}  // namespace strata::record
