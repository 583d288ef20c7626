// Tests for compressed event chunks (format version 3, strata/trace/compression.hpp,
// docs/toolkit/trace-format.md "Compressed event chunk"): round trips against plain chunks,
// the fall-back to a plain chunk, that the compressing writer does not allocate, every kind
// of damage to a compressed chunk an error naming its offset, and older versions still read.
// links: strata_trace_zstd
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "strata/trace/compression.hpp"
#include "strata/trace/format.hpp"
#include "strata/trace/reader.hpp"
#include "strata/trace/writer.hpp"
#include "toolkit/trace/counting_new.hpp"
#include "toolkit/trace/trace_test_events.hpp"

namespace {

using namespace strata::trace;
using namespace strata::trace::testing;

// The first chunk after the file header of a trace without a program chunk.
constexpr std::size_t kFirstChunk = kFileHeaderSize;

// The header's CRC made right again after a test changed the payload of the chunk at `at`.
void fixCrc(Bytes& b, std::size_t at) {
  const std::uint32_t len = getU32(b.data() + at + 4);
  putU32(b.data() + at + 12, crc32(b.data() + at + kChunkHeaderSize, len));
}

// A compressed trace of realistic events in one chunk, and that chunk's decompressed length.
Written oneCompressedChunk() {
  Written w = writeTrace(2000, 64 * 1024, 7, 4, Mix::Realistic, Compress::Yes);
  EXPECT_EQ(getU32(w.bytes.data() + kFirstChunk), kCompressedChunkMagic);
  return w;
}

// Reads `b` expecting an error of `kind` at `offset`, whose message holds `words`.
void expectError(const Bytes& b, ErrorKind kind, std::uint64_t offset, const std::string& words) {
  std::vector<Event> back;
  TraceError err;
  ASSERT_EQ(readAll(b, back, &err), ReadStatus::Error);
  EXPECT_EQ(err.kind, kind) << err.message();
  EXPECT_EQ(err.offset, offset) << err.message();
  EXPECT_NE(err.message().find(words), std::string::npos) << err.message();
}

TEST(TraceCompression, RandomAndRealisticEventsReadBackAsTheirPlainTwin) {
  for (const Mix mix : {Mix::Random, Mix::Realistic}) {
    const Written plain = writeTrace(200'000, 64 * 1024, 3, 16, mix, Compress::No);
    const Written packed = writeTrace(200'000, 64 * 1024, 3, 16, mix, Compress::Yes);
    ASSERT_EQ(plain.events, packed.events);  // the same events went in
    std::vector<Event> a, b;
    TraceError err;
    ASSERT_EQ(readAll(plain.bytes, a), ReadStatus::End);
    ASSERT_EQ(readAll(packed.bytes, b, &err), ReadStatus::End) << err.message();
    EXPECT_EQ(a, plain.events);
    EXPECT_EQ(b, plain.events);
    EXPECT_EQ(getU16(plain.bytes.data() + 8), kPlainFormatVersion);
    EXPECT_EQ(getU16(packed.bytes.data() + 8), kFormatVersion);
    EXPECT_GT(packed.compressedChunks, 0u);
    EXPECT_LT(packed.bytes.size(), plain.bytes.size());
  }
}

// Chunks of 256 bytes: those of a regular loop (malloc 32 bytes, free it) shrink to a few
// bytes, those of random events with random sizes and times do not (zstd's frame costs more
// than it saves there) and are written plain, in the same version 3 file.
TEST(TraceCompression, AChunkThatDoesNotShrinkIsWrittenPlain) {
  Bytes out;
  Bytes buffer(256);
  TestCompressor zstd(buffer.size());
  TraceWriter writer(buffer.data(), buffer.size(), VectorSink{&out, nullptr}, SiteBuffer{},
                     zstd.get());
  EventSource random(11, 4, false);
  std::vector<Event> expected;
  const auto append = [&](const Event& e) {
    const std::uint64_t id = writer.append(e);
    ASSERT_NE(id, decltype(writer)::kRejected);
    expected.push_back(random.record(e, id));
  };
  for (int round = 0; round < 4; ++round) {
    for (std::uint64_t i = 0; i < 2000; ++i) {
      const std::uint64_t t = expected.empty() ? 0 : expected.back().timeNs + 50;
      append(Event{Op::Malloc, 0, 0, 0, t, kNoObject, kNoObject, 32});
      append(Event{Op::Free, 0, 0, 0, t + 10, expected.back().object, kNoObject, 0});
    }
    for (int i = 0; i < 2000; ++i) append(random.make());
  }
  ASSERT_TRUE(writer.finish());
  EXPECT_GT(writer.compressedChunks(), 0u);
  EXPECT_LT(writer.compressedChunks(), writer.chunks());
  std::uint64_t plainChunks = 0, packedChunks = 0;
  for (std::size_t at = kFileHeaderSize; at < out.size();) {
    const std::uint32_t magic = getU32(out.data() + at);
    plainChunks += magic == kEventChunkMagic;
    packedChunks += magic == kCompressedChunkMagic;
    at += kChunkHeaderSize + getU32(out.data() + at + 4);
  }
  EXPECT_EQ(packedChunks, writer.compressedChunks());
  EXPECT_EQ(plainChunks + packedChunks, writer.chunks());
  std::vector<Event> back;
  TraceError err;
  ASSERT_EQ(readAll(out, back, &err), ReadStatus::End) << err.message();
  EXPECT_EQ(back, expected);
}

TEST(TraceCompression, ACompressorThatFailsLeavesPlainChunks) {
  Bytes out;
  Bytes buffer(4096), scratch(4096);
  const ChunkCompressor never{[](void*, const unsigned char*, std::size_t, unsigned char*,
                                 std::size_t) noexcept -> std::size_t { return 0; },
                              nullptr, scratch.data(), scratch.size()};
  TraceWriter writer(buffer.data(), buffer.size(), VectorSink{&out, nullptr}, SiteBuffer{}, never);
  for (int i = 0; i < 2000; ++i) writer.append(Event{Op::Malloc, 0, 0, 0, std::uint64_t(i), 0, 0, 32});
  ASSERT_TRUE(writer.finish());
  EXPECT_EQ(writer.compressedChunks(), 0u);
  std::vector<Event> back;
  ASSERT_EQ(readAll(out, back), ReadStatus::End);
  EXPECT_EQ(back.size(), 2000u);
  // A scratch buffer smaller than the event buffer is refused at construction.
  Bytes small(1000);
  TraceWriter refused(buffer.data(), buffer.size(), VectorSink{&out, nullptr}, SiteBuffer{},
                      ChunkCompressor{never.compress, nullptr, small.data(), small.size()});
  EXPECT_FALSE(refused.ok());
}

TEST(TraceCompression, CompressingWriterDoesNotAllocate) {
  Bytes out;
  out.reserve(std::size_t{8} << 20);
  Bytes buffer(64 * 1024), scratch(64 * 1024);
  std::vector<std::uint64_t> workspace(ZstdCompressor::workspaceSize(1) / 8 + 1);
  ZstdCompressor zstd(workspace.data(), workspace.size() * 8, 1);
  ASSERT_TRUE(zstd.ok());
  TraceWriter writer(buffer.data(), buffer.size(), VectorSink{&out, nullptr}, SiteBuffer{},
                     zstd.chunkCompressor(scratch.data(), scratch.size()));
  const std::size_t before = gNewCalls.load();
  std::uint64_t id = 0;
  for (int i = 0; i < 200'000; ++i) {
    id = writer.append(Event{Op::Malloc, 0, 0, 0, std::uint64_t(i) * 50, 0, 0, std::uint64_t(16 + i % 64)});
    writer.append(Event{Op::Free, 0, 0, 0, std::uint64_t(i) * 50 + 20, id, 0, 0});
  }
  ASSERT_TRUE(writer.finish());
  EXPECT_EQ(gNewCalls.load(), before);
  EXPECT_GT(writer.compressedChunks(), 5u);
}

TEST(TraceCompressionErrors, ABadCrcNamesTheChunk) {
  Written w = oneCompressedChunk();
  w.bytes[kFirstChunk + kChunkHeaderSize + 10] ^= 0x40;
  expectError(w.bytes, ErrorKind::CrcMismatch, kFirstChunk, "payload of");
}

TEST(TraceCompressionErrors, ADecompressedLengthOverTheBoundIsRefusedUnread) {
  Written w = oneCompressedChunk();
  putU32(w.bytes.data() + kFirstChunk + kChunkHeaderSize,
         static_cast<std::uint32_t>(kMaxChunkPayload + 1));
  fixCrc(w.bytes, kFirstChunk);
  expectError(w.bytes, ErrorKind::ChunkTooLarge, kFirstChunk, "decompressed length 16777217");
}

TEST(TraceCompressionErrors, AWrongDecompressedLengthIsAnError) {
  const Written w = oneCompressedChunk();
  const std::uint32_t raw = getU32(w.bytes.data() + kFirstChunk + kChunkHeaderSize);
  Bytes shorter = w.bytes, longer = w.bytes;
  putU32(shorter.data() + kFirstChunk + kChunkHeaderSize, raw - 1);
  fixCrc(shorter, kFirstChunk);
  expectError(shorter, ErrorKind::BadCompression, kFirstChunk, "more bytes than its header");
  putU32(longer.data() + kFirstChunk + kChunkHeaderSize, raw + 1);
  fixCrc(longer, kFirstChunk);
  expectError(longer, ErrorKind::BadCompression, kFirstChunk, "fewer bytes than its header");
}

TEST(TraceCompressionErrors, AFrameThatIsNotZstdOrHasNoLengthIsAnError) {
  Written w = oneCompressedChunk();
  Bytes garbage = w.bytes;
  for (std::size_t i = 4; i < 12; ++i) garbage[kFirstChunk + kChunkHeaderSize + i] ^= 0x5a;
  fixCrc(garbage, kFirstChunk);
  expectError(garbage, ErrorKind::BadCompression, kFirstChunk, "bytes");
  // A payload of 2 bytes: not even the decompressed length.
  Bytes tiny(w.bytes.begin(), w.bytes.begin() + kFirstChunk + kChunkHeaderSize + 2);
  putU32(tiny.data() + kFirstChunk + 4, 2);
  fixCrc(tiny, kFirstChunk);
  expectError(tiny, ErrorKind::BadCompression, kFirstChunk, "no decompressed length");
}

TEST(TraceCompressionErrors, TruncatedMidChunkNamesTheChunk) {
  const Written w = oneCompressedChunk();
  const Bytes cut(w.bytes.begin(), w.bytes.begin() + kFirstChunk + kChunkHeaderSize + 40);
  expectError(cut, ErrorKind::TruncatedChunk, kFirstChunk, "file has 40");
}

TEST(TraceCompressionErrors, ACompressedChunkInAnOlderVersionIsRefused) {
  for (const std::uint16_t version : {std::uint16_t{1}, std::uint16_t{2}}) {
    Written w = oneCompressedChunk();
    putU16(w.bytes.data() + 8, version);
    expectError(w.bytes, ErrorKind::BadChunkMagic, kFirstChunk,
                "compressed event chunk in a version " + std::to_string(version));
  }
}

// Every cut and every single-bit flip of a compressed trace is an error at some chunk or a
// clean prefix of its events: never a crash, never a wrong event.
TEST(TraceCompressionErrors, EveryCutAndBitFlipIsCaught) {
  const Written w = writeTrace(3000, 1024, 5, 4, Mix::Realistic, Compress::Yes);
  ASSERT_GT(w.compressedChunks, 3u);
  for (std::size_t n = 0; n < w.bytes.size(); n += 7) {
    const Bytes cut(w.bytes.begin(), w.bytes.begin() + static_cast<std::ptrdiff_t>(n));
    std::vector<Event> back;
    readAll(cut, back);
    ASSERT_LE(back.size(), w.events.size());
    ASSERT_TRUE(std::equal(back.begin(), back.end(), w.events.begin())) << "cut at " << n;
  }
  for (std::size_t bit = 0; bit < w.bytes.size() * 8; bit += 13) {
    Bytes flipped = w.bytes;
    flipped[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    std::vector<Event> back;
    TraceError err;
    const ReadStatus s = readAll(flipped, back, &err);
    ASSERT_LE(back.size(), w.events.size());
    if (s == ReadStatus::End && back.size() == w.events.size()) continue;  // a header bit
    EXPECT_FALSE(err.message().empty());
  }
}

// Versions 1 and 2 read by a reader that knows version 3: the fixtures of the fuzz corpus
// (version 2, written before compression) give the events their trailer counts, and give
// them again rewritten compressed; a version 1 file reads as before.
TEST(TraceCompression, OlderVersionsStillRead) {
  const std::filesystem::path corpus = std::filesystem::path(STRATA_SOURCE_DIR) / "fuzz/corpus/trace_reader";
  int read = 0;
  for (const char* name : {"editor.trace", "server.trace", "web-proxy.trace", "threads-reaps-touch.trace"}) {
    std::ifstream in(corpus / name, std::ios::binary);
    ASSERT_TRUE(in) << name;
    const Bytes b{std::istreambuf_iterator<char>(in), {}};
    ASSERT_EQ(getU16(b.data() + 8), 2) << name;
    std::vector<Event> back;
    TraceError err;
    bool complete = false;
    ASSERT_EQ(readAll(b, back, &err, &complete), ReadStatus::End) << name << ": " << err.message();
    EXPECT_TRUE(complete) << name;
    const Bytes again = rewrite(back, Compress::Yes);
    std::vector<Event> twice;
    ASSERT_EQ(readAll(again, twice, &err), ReadStatus::End) << name << ": " << err.message();
    EXPECT_EQ(twice, back) << name;
    ++read;
  }
  EXPECT_EQ(read, 4);
  const Written w = writeTrace(5000, 4096, 9, 4, Mix::Realistic, Compress::No);
  Bytes v1 = w.bytes;
  putU16(v1.data() + 8, 1);
  std::vector<Event> back;
  ASSERT_EQ(readAll(v1, back), ReadStatus::End);
  EXPECT_EQ(back, w.events);
}

}  // namespace
