// TraceReader: streams events back out of a trace (docs/toolkit/trace-format.md) chunk by chunk, with
// memory bounded by one chunk, from any read(2)-style source. Every chunk's CRC-32 is checked
// before any of its events is returned; a truncated, corrupt or wrong-version file gives an
// error value naming the file offset of the bad header or chunk and the reason. It never
// aborts and never reads outside its buffer, whatever the input. Cost per event: one decode of
// ~5 bytes of varints; per chunk: one read and one CRC pass, and for a compressed chunk one
// zstd decompression (compiled in with STRATA_TRACE_ZSTD: compression.hpp).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "strata/trace/format.hpp"
#if defined(STRATA_TRACE_ZSTD)
#include "strata/trace/compression.hpp"
#endif
#include "strata/trace/read_error.hpp"
#include "strata/trace/sites.hpp"
#include "strata/trace/sources.hpp"
#include "strata/trace/trailer.hpp"

namespace strata::trace {

enum class ReadStatus : std::uint8_t { Event, End, Error };

// Source: any callable std::ptrdiff_t(unsigned char* out, std::size_t n) that reads up to n
// bytes like read(2): returns the count, 0 at end of file, negative on error. Short reads are
// fine (pipes); the reader loops. Alloc: where the one chunk buffer comes from (a replayer
// keeps it out of the allocator it measures).
template <class Source, class Alloc = std::allocator<unsigned char>>
class TraceReader {
 public:
  explicit TraceReader(Source source) : src_(std::move(source)) {}
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  // Decodes the next event into out. End: the trace ended cleanly at a chunk boundary (check
  // complete() for whether it had its trailer). Error: see error(); further calls repeat it.
  ReadStatus next(Event& out) {
    if (state_ != State::Reading) return state_ == State::Ended ? ReadStatus::End : ReadStatus::Error;
    if (!headerRead_ && !readHeader()) return ReadStatus::Error;
    while (left_ == 0) {
      if (!loadChunk()) return state_ == State::Ended ? ReadStatus::End : ReadStatus::Error;
    }
    if (!decode(out)) return ReadStatus::Error;
    return ReadStatus::Event;
  }

  const TraceError& error() const noexcept { return err_; }
  // True once the reader reached the trailer: the recorded program ended cleanly. A trace
  // that ends at a chunk boundary without one is valid (crash, _exit) but incomplete.
  bool complete() const noexcept { return sawTrailer_; }
  TraceTotals totals() const noexcept { return trailer_; }  // valid when complete()
  std::uint64_t eventsRead() const noexcept { return events_; }
  std::uint64_t objects() const noexcept { return nextId_; }
  std::uint64_t threads() const noexcept { return threads_; }
  std::uint64_t chunksRead() const noexcept { return chunks_; }
  std::uint64_t bytesRead() const noexcept { return offset_; }
  // The file's format version (0 before the first next()).
  std::uint16_t version() const noexcept { return version_; }
  // The program chunk (pid 0 when the trace has none); valid after the first next().
  const ProgramInfo& program() const noexcept { return program_; }
  // Whether the file carries sites (flag SITES); valid after the first next(). Then every
  // creating event's `site` names a site of sites() (or kNoSite); otherwise it is kNoSite.
  bool hasSites() const noexcept { return hasSites_; }
  // The sites and modules read so far: every site an event returned so far names is there.
  const SiteTable<Alloc>& sites() const noexcept { return sites_; }

 private:
  enum class State : std::uint8_t { Reading, Ended, Failed };

  bool fail(ErrorKind kind, std::uint64_t offset, std::string detail) {
    err_ = TraceError{kind, offset, std::move(detail)};
    state_ = State::Failed;
    return false;
  }

  // Reads up to n bytes, looping over short reads; returns the count, or -1 on a read error.
  std::ptrdiff_t readFully(unsigned char* out, std::size_t n) {
    std::size_t got = 0;
    while (got < n) {
      const std::ptrdiff_t r = src_(out + got, n - got);
      if (r < 0) return -1;
      if (r == 0) break;
      got += static_cast<std::size_t>(r);
    }
    offset_ += got;
    return static_cast<std::ptrdiff_t>(got);
  }

  bool readHeader() {
    headerRead_ = true;
    unsigned char h[kFileHeaderSize];
    const std::ptrdiff_t got = readFully(h, sizeof h);
    if (got < 0) return fail(ErrorKind::ReadFailed, 0, "reading the file header");
    const std::size_t magicBytes =
        static_cast<std::size_t>(got) < sizeof kFileMagic ? static_cast<std::size_t>(got)
                                                           : sizeof kFileMagic;
    if (std::memcmp(h, kFileMagic, magicBytes) != 0)
      return fail(ErrorKind::BadMagic, 0, "expected \"STRATATR\"");
    if (static_cast<std::size_t>(got) < sizeof h)
      return fail(ErrorKind::TruncatedHeader, 0,
                  "file has " + std::to_string(got) + " of 16 header bytes");
    version_ = getU16(h + 8);
    if (version_ < kOldestFormatVersion || version_ > kFormatVersion)
      return fail(ErrorKind::BadVersion, 8,
                  "version " + std::to_string(version_) + ", this reader reads versions " +
                      std::to_string(kOldestFormatVersion) + " to " +
                      std::to_string(kFormatVersion));
    opCount_ = version_ == 1 ? kOpCountV1 : kOpCount;
    const std::uint16_t flags = getU16(h + 10);
    const std::uint16_t known = version_ >= 2 ? kKnownFileFlags : 0;
    if ((flags & ~known) != 0 || getU32(h + 12) != 0)
      return fail(ErrorKind::BadFileFlags, 10,
                  "flags 0x" + hex(flags) + ": only SITES (0x0001, version 2 and later) is known; "
                  "reserved bytes must be zero");
    hasSites_ = (flags & kFileFlagSites) != 0;
    return true;
  }

  // Reads and checks the next chunk. Returns true with left_ events to decode, or false with
  // state_ Ended (clean end of file at a chunk boundary or after the trailer) or Failed.
  bool loadChunk() {
    chunkOffset_ = offset_;
    unsigned char h[kChunkHeaderSize];
    const std::ptrdiff_t got = readFully(h, sizeof h);
    if (got < 0) return fail(ErrorKind::ReadFailed, chunkOffset_, "reading a chunk header");
    if (got == 0) {
      state_ = State::Ended;
      return false;
    }
    if (static_cast<std::size_t>(got) < sizeof h)
      return fail(ErrorKind::TruncatedChunk, chunkOffset_,
                  "file ends " + std::to_string(got) + " bytes into the chunk header");
    const std::uint32_t magic = getU32(h);
    const std::uint32_t len = getU32(h + 4);
    const std::uint32_t count = getU32(h + 8);
    const bool programChunk = magic == kProgramChunkMagic && version_ >= 2;
    const bool packed = magic == kCompressedChunkMagic;
    if (packed && version_ < 3)
      return fail(ErrorKind::BadChunkMagic, chunkOffset_,
                  "a compressed event chunk in a version " + std::to_string(version_) +
                      " file (compressed chunks are version 3)");
    const bool siteChunk = magic == kSitesChunkMagic || magic == kModulesChunkMagic;
    if (siteChunk && !hasSites_)
      return fail(ErrorKind::BadChunkMagic, chunkOffset_,
                  std::string(magic == kSitesChunkMagic ? "a sites" : "a modules") +
                      " chunk in a trace without the SITES flag");
    if (magic != kEventChunkMagic && magic != kTrailerChunkMagic && !programChunk && !siteChunk &&
        !packed)
      return fail(ErrorKind::BadChunkMagic, chunkOffset_, "magic 0x" + hex(magic));
    if (programChunk && (chunkOffset_ != kFileHeaderSize || count != 0))
      return fail(ErrorKind::BadChunkMagic, chunkOffset_,
                  "a program chunk must come first, right after the file header, with count 0");
    if (len > kMaxChunkPayload)
      return fail(ErrorKind::ChunkTooLarge, chunkOffset_,
                  "payload length " + std::to_string(len));
    setSize(payload_, len);
    const std::ptrdiff_t pgot = readFully(payload_.data(), len);
    if (pgot < 0) return fail(ErrorKind::ReadFailed, chunkOffset_, "reading a chunk payload");
    if (static_cast<std::size_t>(pgot) < len)
      return fail(ErrorKind::TruncatedChunk, chunkOffset_,
                  "payload of " + std::to_string(len) + " bytes, file has " +
                      std::to_string(pgot));
    if (crc32(payload_.data(), len) != getU32(h + 12))
      return fail(ErrorKind::CrcMismatch, chunkOffset_, "payload of " + std::to_string(len) + " bytes");
    p_ = payload_.data();
    end_ = p_ + len;
    if (magic == kTrailerChunkMagic) return readTrailer(count);
    if (programChunk) return readProgram();
    if (siteChunk) return readSites(magic, count);
    if (packed && !unpack()) return false;

    std::uint64_t base = 0;
    p_ = getVarint(p_, end_, base);
    if (p_ == nullptr) return fail(ErrorKind::BadEvent, chunkOffset_, "no base object id");
    if (base != nextId_)
      return fail(ErrorKind::Discontinuity, chunkOffset_,
                  "base object id " + std::to_string(base) + ", expected " +
                      std::to_string(nextId_));
    if (count > static_cast<std::size_t>(end_ - p_) / 2)  // every event takes >= 2 bytes
      return fail(ErrorKind::BadEvent, chunkOffset_,
                  "event count " + std::to_string(count) + " does not fit the payload");
    if (count == 0 && p_ != end_)
      return fail(ErrorKind::BadEvent, chunkOffset_, "bytes after the last event");
    left_ = count;
    index_ = 0;
    prevThread_ = 0;
    prevTime_ = 0;
    ++chunks_;
    return true;
  }

  // Replaces the compressed payload [p_, end_) by what it decompresses to, in raw_: the
  // decompressed length first (at most kMaxChunkPayload, so a corrupt one cannot make the
  // reader allocate more than a chunk), then exactly that many bytes from the zstd frame.
  bool unpack() {
    const std::size_t len = static_cast<std::size_t>(end_ - p_);
    if (len < kCompressedPrefix)
      return fail(ErrorKind::BadCompression, chunkOffset_,
                  "payload of " + std::to_string(len) + " bytes has no decompressed length");
    const std::uint32_t raw = getU32(p_);
    if (raw > kMaxChunkPayload)
      return fail(ErrorKind::ChunkTooLarge, chunkOffset_,
                  "decompressed length " + std::to_string(raw));
#if defined(STRATA_TRACE_ZSTD)
    setSize(raw_, raw);
    std::size_t got = 0;
    const char* why =
        zstd_.decompress(p_ + kCompressedPrefix, len - kCompressedPrefix, raw_.data(), raw, got);
    if (why != nullptr)
      return fail(ErrorKind::BadCompression, chunkOffset_,
                  std::string(why) + " (" + std::to_string(raw) + " bytes" +
                      (got != 0 ? ", gave " + std::to_string(got) : std::string()) + ")");
    p_ = raw_.data();
    end_ = p_ + raw;
    return true;
#else
    return fail(ErrorKind::BadCompression, chunkOffset_,
                "a compressed event chunk, and this reader was built without zstd "
                "(define STRATA_TRACE_ZSTD and link libzstd to read it)");
#endif
  }

  // Makes `buffer` n bytes long, its old contents dropped: a larger buffer is allocated only
  // after the old one is freed, so the two are never resident at once (a replayer's peak
  // memory would count both).
  static void setSize(std::vector<unsigned char, Alloc>& buffer, std::size_t n) {
    if (n > buffer.capacity()) {
      buffer.clear();
      buffer.shrink_to_fit();
      buffer.reserve(std::max(n, std::min(kMaxChunkPayload, n + n / 8)));  // room to vary
    }
    buffer.resize(n);
  }

  bool readTrailer(std::uint32_t count) {
    const std::optional<TraceTotals> decoded =
        count == 0 ? decodeTrailerPayload(p_, end_) : std::nullopt;
    if (!decoded) return fail(ErrorKind::BadTrailer, chunkOffset_, "malformed trailer payload");
    const TraceTotals t = *decoded;
    if (t != TraceTotals{events_, nextId_, threads_})
      return fail(ErrorKind::BadTrailer, chunkOffset_,
                  "trailer says " + std::to_string(t.events) + " events, " +
                      std::to_string(t.objects) + " objects, " + std::to_string(t.threads) +
                      " threads; read " + std::to_string(events_) + ", " +
                      std::to_string(nextId_) + ", " + std::to_string(threads_));
    unsigned char extra;
    const std::uint64_t at = offset_;
    const std::ptrdiff_t got = readFully(&extra, 1);
    if (got < 0) return fail(ErrorKind::ReadFailed, at, "after the trailer");
    if (got != 0) return fail(ErrorKind::DataAfterTrailer, at, "the trailer must be last");
    sawTrailer_ = true;
    trailer_ = t;
    state_ = State::Ended;
    return false;
  }

  // The program chunk: varint pid, varint parent pid, varint length, the path's bytes.
  // Returns true with no events to decode (the caller reads the next chunk).
  bool readProgram() {
    std::uint64_t len = 0;
    if ((p_ = getVarint(p_, end_, program_.pid)) == nullptr ||
        (p_ = getVarint(p_, end_, program_.parentPid)) == nullptr ||
        (p_ = getVarint(p_, end_, len)) == nullptr || len > kMaxProgramPath ||
        len != static_cast<std::uint64_t>(end_ - p_))
      return fail(ErrorKind::BadEvent, chunkOffset_, "malformed program chunk");
    std::memcpy(program_.path, p_, static_cast<std::size_t>(len));
    program_.path[len] = '\0';
    p_ = end_;
    left_ = 0;
    return true;
  }

  // A sites chunk (varint base-site, then `count` sites) or a modules chunk (`count` entries).
  // Returns true with no events to decode (the caller reads the next chunk).
  bool readSites(std::uint32_t magic, std::uint32_t count) {
    const char* why;
    if (magic == kSitesChunkMagic) {
      std::uint64_t base = 0;
      if ((p_ = getVarint(p_, end_, base)) == nullptr)
        return fail(ErrorKind::BadSites, chunkOffset_, "no base site");
      if (base != sites_.siteCount())
        return fail(ErrorKind::Discontinuity, chunkOffset_,
                    "sites chunk starts at site " + std::to_string(base + 1) + ", expected " +
                        std::to_string(sites_.siteCount() + 1));
      why = sites_.addSites(p_, end_, count);
    } else {
      why = sites_.addModules(p_, end_, count);
    }
    if (why != nullptr) return fail(ErrorKind::BadSites, chunkOffset_, why);
    p_ = end_;
    left_ = 0;
    return true;
  }

  bool badEvent(const char* what) {
    return fail(ErrorKind::BadEvent, chunkOffset_,
                "event " + std::to_string(index_) + " of the chunk: " + what);
  }

  // Decodes one event from the current chunk. Fast path: a handful of one-byte varints.
  bool decode(Event& e) {
    if (p_ == end_) return badEvent("payload ends");
    const unsigned char opByte = *p_++;
    const unsigned opv = opByte & 0x0f;
    if (opv >= opCount_) return badEvent("unknown op");
    e.op = static_cast<Op>(opv);
    e.flags = opByte & kEventFlags;
    if (!flagsValid(e.op, e.flags)) return badEvent("flags not allowed for this op");
    std::uint64_t v;
    if (opByte & kFlagSameThread) {
      if (index_ == 0) return badEvent("first event of a chunk must name its thread");
      e.thread = prevThread_;
    } else {
      if ((p_ = getVarint(p_, end_, v)) == nullptr) return badEvent("bad thread varint");
      if (v > 0xffffffffu) return badEvent("thread index over 32 bits");
      e.thread = static_cast<std::uint32_t>(v);
    }
    if ((p_ = getVarint(p_, end_, v)) == nullptr) return badEvent("bad time varint");
    e.timeNs = prevTime_ + unzigzag(v);
    const bool hasTarget = targetPresent(e.op, e.flags);
    e.target = kNoObject;
    if (hasTarget) {
      if ((p_ = getVarint(p_, end_, v)) == nullptr) return badEvent("bad target varint");
      if (targetIsThread(e.op)) {
        if (v > 0xffffffffu) return badEvent("thread index over 32 bits");
        e.target = v;
        if (v >= threads_) threads_ = v + 1;
      } else {
        if (v >= nextId_) return badEvent("target names an object not yet created");
        e.target = nextId_ - 1 - v;
      }
    }
    e.object = kNoObject;
    if (objectPresent(e.op, e.flags)) {
      if ((p_ = getVarint(p_, end_, v)) == nullptr) return badEvent("bad object varint");
      if (v >= nextId_) return badEvent("object names an object not yet created");
      e.object = nextId_ - 1 - v;
    }
    e.size = 0;
    if (opHasSize(e.op) && (p_ = getVarint(p_, end_, e.size)) == nullptr)
      return badEvent("bad size varint");
    e.alignLog2 = 0;
    if (e.flags & kFlagAligned) {
      if (p_ == end_) return badEvent("missing alignment byte");
      e.alignLog2 = *p_++;
      if (e.alignLog2 > 63) return badEvent("alignment log2 over 63");
    }
    e.site = kNoSite;
    if (hasSites_ && opCreates(e.op)) {
      if ((p_ = getVarint(p_, end_, e.site)) == nullptr) return badEvent("bad site varint");
      if (e.site > sites_.siteCount()) return badEvent("site not yet defined");
    }
    if (opCreates(e.op) && !(e.flags & kFlagFailed)) e.object = nextId_++;
    prevThread_ = e.thread;
    prevTime_ = e.timeNs;
    if (e.thread >= threads_) threads_ = std::uint64_t{e.thread} + 1;
    ++index_;
    ++events_;
    if (--left_ == 0 && p_ != end_) return badEvent("bytes after the last event");
    return true;
  }

  template <class U>
  static std::string hex(U v) {
    static const char* digits = "0123456789abcdef";
    std::string s(2 * sizeof(U), '0');
    for (int i = static_cast<int>(s.size()) - 1; i >= 0; --i, v = static_cast<U>(v >> 4))
      s[static_cast<std::size_t>(i)] = digits[v & 0xf];
    return s;
  }

  Source src_;
  std::vector<unsigned char, Alloc> payload_;
#if defined(STRATA_TRACE_ZSTD)
  std::vector<unsigned char, Alloc> raw_;  // a compressed chunk's payload, decompressed
  ZstdDecompressor<Alloc> zstd_;
#endif
  const unsigned char* p_ = nullptr;
  const unsigned char* end_ = nullptr;
  std::uint64_t offset_ = 0;
  std::uint64_t chunkOffset_ = 0;
  std::uint64_t left_ = 0;
  std::uint64_t index_ = 0;
  std::uint32_t prevThread_ = 0;
  std::uint64_t prevTime_ = 0;
  std::uint64_t nextId_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t threads_ = 0;
  std::uint64_t chunks_ = 0;
  TraceTotals trailer_;
  TraceError err_;
  State state_ = State::Reading;
  bool headerRead_ = false;
  bool sawTrailer_ = false;
  std::uint16_t version_ = 0;
  unsigned opCount_ = kOpCount;
  ProgramInfo program_;
  bool hasSites_ = false;
  SiteTable<Alloc> sites_;
};

// Reads a whole in-memory trace; throws TraceFormatError on any error. For tools and tests;
// streaming callers use TraceReader. Sets *complete (if given) to whether it had a trailer.
// Not declared when compiling without exceptions (-fno-exceptions, as the malloc libraries
// are, which may include strata/strata.hpp).
#if defined(__cpp_exceptions)
inline std::vector<Event> readTrace(const unsigned char* data, std::size_t size,
                                    bool* complete = nullptr) {
  TraceReader<MemorySource> r(MemorySource{data, size});
  std::vector<Event> out;
  Event e;
  ReadStatus s;
  while ((s = r.next(e)) == ReadStatus::Event) out.push_back(e);
  if (s == ReadStatus::Error) throw TraceFormatError(r.error());
  if (complete != nullptr) *complete = r.complete();
  return out;
}
#endif

}  // namespace strata::trace
