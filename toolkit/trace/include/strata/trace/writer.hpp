// TraceWriter: encodes allocation events into the chunked trace format (docs/toolkit/trace-format.md)
// inside a fixed buffer the caller gives it, and hands each full chunk to a write(2)-style
// sink. Built for an LD_PRELOADed recorder: once constructed it never allocates, never throws
// and calls nothing but the sink, memcpy and its compressor. It is not thread-safe (the recorder serialises or
// keeps one writer per process). Cost per event: about 5 bytes of stores and a few branches;
// per chunk: one CRC-32 pass over the payload and one sink call, and, for a writer given a
// ChunkCompressor, one compression of the payload (which must not allocate either).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cerrno>
#include <cstring>

#include <unistd.h>

#include "strata/trace/format.hpp"
#include "strata/trace/sites.hpp"

namespace strata::trace {

// A sink writing to a file descriptor with write(2): loops over short writes, retries EINTR,
// async-signal-safe (a recorder may flush from a signal handler). Does not own the descriptor.
struct FdSink {
  int fd;
  bool operator()(const unsigned char* data, std::size_t len) const noexcept {
    while (len != 0) {
      const ssize_t w = ::write(fd, data, len);
      if (w < 0) {
        if (errno == EINTR) continue;
        return false;
      }
      data += w;
      len -= static_cast<std::size_t>(w);
    }
    return true;
  }
};

// The second buffer a writer of a trace with sites keeps its new sites in until the events
// that name them are written (at least kMinSiteBuffer bytes).
struct SiteBuffer {
  unsigned char* data = nullptr;
  std::size_t capacity = 0;
};

// How a TraceWriter compresses its event chunks (compression.hpp's ZstdCompressor makes one). compress(state, in, n, out, capacity)
// stores a compressed form of in[0, n) in out[0, capacity) and returns its length, or 0 when
// it does not fit or fails (the writer then writes the plain chunk); it must not allocate.
// `out` is the writer's scratch for one compressed chunk: at least its event buffer's size.
struct ChunkCompressor {
  std::size_t (*compress)(void* state, const unsigned char* in, std::size_t n,
                          unsigned char* out, std::size_t capacity) noexcept = nullptr;
  void* state = nullptr;
  unsigned char* out = nullptr;
  std::size_t capacity = 0;
};

// Sink: any callable bool(const unsigned char* data, std::size_t len) that stores or writes all
// len bytes and returns false on failure (the writer then stops and ok() turns false).
template <class Sink>
class TraceWriter {
 public:
  // Value append() returns for an event it refused (malformed, or writer failed).
  static constexpr std::uint64_t kRejected = kNoObject - 1;

  // Uses buffer[0, capacity) for chunks (at most kChunkHeaderSize + kMaxChunkPayload of it) and
  // writes the file header through the sink at once. A buffer under kMinWriterBuffer bytes
  // leaves the writer failed.
  TraceWriter(unsigned char* buffer, std::size_t capacity, Sink sink) noexcept
      : TraceWriter(buffer, capacity, static_cast<Sink&&>(sink), SiteBuffer{}) {}

  // A writer of a trace with sites (file flag SITES) when `sites` holds a buffer: creating
  // events then carry a site (defineSite). A site buffer under kMinSiteBuffer bytes leaves the
  // writer failed.
  TraceWriter(unsigned char* buffer, std::size_t capacity, Sink sink, SiteBuffer sites) noexcept
      : TraceWriter(buffer, capacity, static_cast<Sink&&>(sink), sites, ChunkCompressor{}) {}

  // A writer that compresses its event chunks when `compressor` has a compress function: the
  // file is then format version 3, and each event chunk is written compressed when that is
  // smaller, plain otherwise. compressor.out must hold as many bytes as the event buffer (the
  // writer fails otherwise). Without a compress function the file is version 2, as above.
  TraceWriter(unsigned char* buffer, std::size_t capacity, Sink sink, SiteBuffer sites,
              ChunkCompressor compressor) noexcept
      : buf_(buffer), cap_(capacity), sink_(static_cast<Sink&&>(sink)),
        sbuf_(sites.data), scap_(sites.capacity), zip_(compressor) {
    if (buf_ == nullptr || cap_ < kMinWriterBuffer ||
        (sbuf_ != nullptr && scap_ < kMinSiteBuffer) ||
        (zip_.compress != nullptr && (zip_.out == nullptr || zip_.capacity < cap_))) {
      failed_ = true;
      return;
    }
    if (cap_ > kChunkHeaderSize + kMaxChunkPayload) cap_ = kChunkHeaderSize + kMaxChunkPayload;
    if (scap_ > kChunkHeaderSize + kMaxChunkPayload) scap_ = kChunkHeaderSize + kMaxChunkPayload;
    unsigned char h[kFileHeaderSize] = {};
    std::memcpy(h, kFileMagic, sizeof kFileMagic);
    putU16(h + 8, compresses() ? kFormatVersion : kPlainFormatVersion);
    putU16(h + 10, sbuf_ != nullptr ? kFileFlagSites : 0);
    emit(h, sizeof h);
  }
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Appends one event. For an op that creates an object (and did not fail) the writer assigns
  // the next dense id, ignoring e.object, and returns it; other events return kNoObject. Fields
  // the op does not use are ignored. Returns kRejected, writing nothing, when the event is
  // malformed: unknown op, flags the op may not carry, an alignment log2 over 63, or an object
  // or target id not yet created, or (in a trace with sites) a site not yet defined. e.site is
  // ignored by a writer without sites. Fast path: no flush, ~50 instructions.
  std::uint64_t append(const Event& e) noexcept {
    if (failed_ || finished_) return kRejected;
    const auto opv = static_cast<unsigned>(e.op);
    if (opv >= kOpCount || !flagsValid(e.op, e.flags)) return kRejected;
    if ((e.flags & kFlagAligned) && e.alignLog2 > 63) return kRejected;
    const bool hasTarget = targetPresent(e.op, e.flags);
    const bool freesObject = objectPresent(e.op, e.flags);
    if (hasTarget && (targetIsThread(e.op) ? e.target > 0xffffffffu : e.target >= nextId_))
      return kRejected;
    if (freesObject && e.object >= nextId_) return kRejected;
    if (sbuf_ != nullptr && opCreates(e.op) && e.site > sites_) return kRejected;

    return appendUnchecked(e.op, e.flags, e.thread, e.timeNs, e.object, e.target, e.size,
                           e.alignLog2, e.site);
  }

  // The trusted form of append(), for a recorder that builds every event itself (it exists
  // because append()'s checks were a third of the recorder's per-event cost). The caller
  // guarantees what append() would check: op is a known op, flags are kFlagAligned |
  // kFlagNull | kFlagFailed as the op allows (flagsValid), alignLog2 <= 63 when kFlagAligned
  // is set, and object / target, where the op and flags carry them, are ids this writer
  // handed out, and site (creating ops of a writer with sites) is kNoSite or a site
  // defineSite returned. Fields the op does not carry are ignored. A malformed event is written as
  // given and makes a trace the reader rejects. Returns what append() returns (kRejected only
  // when the writer has failed or finished). Inlined with a constant op, the common events
  // (malloc, free) are about 40 instructions.
  std::uint64_t appendUnchecked(Op op, std::uint8_t flags, std::uint32_t thread,
                                std::uint64_t timeNs, std::uint64_t object, std::uint64_t target,
                                std::uint64_t size, std::uint8_t alignLog2,
                                std::uint64_t site = kNoSite) noexcept {
    unsigned char* p = beginEvent(op, flags, thread, timeNs);
    if (p == nullptr) return kRejected;
    if (targetPresent(op, flags)) {
      if (targetIsThread(op)) {
        p = putVarint(p, target);
        if (target >= threads_) threads_ = target + 1;
      } else {
        p = putVarint(p, nextId_ - 1 - target);
      }
    }
    if (objectPresent(op, flags)) p = putVarint(p, nextId_ - 1 - object);
    if (opHasSize(op)) p = putVarint(p, size);
    if (flags & kFlagAligned) *p++ = alignLog2;
    if (sbuf_ != nullptr && opCreates(op)) p = putVarint(p, site);
    endEvent(p, thread, timeNs);
    if (opCreates(op) && !(flags & kFlagFailed)) return nextId_++;
    return kNoObject;
  }

  // appendUnchecked for the two commonest events, each in a straight line (a recorder's
  // per-event cost): a creating op that names no target (malloc, calloc, memalign, new, with
  // kFlagAligned and kFlagFailed as the op allows), and the release of an existing object
  // (free or delete, not of a null pointer). The same guarantees are the caller's.
  [[gnu::always_inline]] std::uint64_t appendCreate(Op op, std::uint8_t flags,
                                                    std::uint32_t thread, std::uint64_t timeNs,
                                                    std::uint64_t size, std::uint8_t alignLog2,
                                                    std::uint64_t site = kNoSite) noexcept {
    unsigned char* p = beginEvent(op, flags, thread, timeNs);
    if (p == nullptr) return kRejected;
    p = putVarint(p, size);
    if (flags & kFlagAligned) *p++ = alignLog2;
    if (sbuf_ != nullptr) p = putVarint(p, site);
    endEvent(p, thread, timeNs);
    return (flags & kFlagFailed) ? kNoObject : nextId_++;
  }
  [[gnu::always_inline]] std::uint64_t appendRelease(Op op, std::uint32_t thread,
                                                     std::uint64_t timeNs,
                                                     std::uint64_t object) noexcept {
    unsigned char* p = beginEvent(op, 0, thread, timeNs);
    if (p == nullptr) return kRejected;
    p = putVarint(p, nextId_ - 1 - object);
    endEvent(p, thread, timeNs);
    return kNoObject;
  }

  // Writes the program chunk (format version 2): which process wrote the trace. Only first,
  // before any event, site or module (false otherwise, or when the sink failed); a path
  // longer than kMaxProgramPath bytes is cut.
  bool program(std::uint64_t pid, std::uint64_t parentPid, const char* path) noexcept {
    if (failed_ || finished_ || events_ != 0 || chunkEvents_ != 0 || sites_ != 0 ||
        bytes_ != kFileHeaderSize)
      return false;
    std::size_t len = path == nullptr ? 0 : std::strlen(path);
    if (len > kMaxProgramPath) len = kMaxProgramPath;
    if (cap_ < kChunkHeaderSize + 30 + len) return false;
    unsigned char* p = buf_ + kChunkHeaderSize;
    p = putVarint(p, pid);
    p = putVarint(p, parentPid);
    p = putVarint(p, len);
    if (len != 0) std::memcpy(p, path, len);
    p += len;
    const std::size_t payload = static_cast<std::size_t>(p - (buf_ + kChunkHeaderSize));
    writeChunkHeader(kProgramChunkMagic, payload, 0);
    return emit(buf_, kChunkHeaderSize + payload);
  }

  // Defines a site from `depth` return addresses, innermost first (1 <= depth <=
  // kMaxSiteDepth), and returns its id (1, 2, ...) for the events it allocated; kNoSite when
  // the writer has no sites, failed or finished, or depth is out of range. The writer does
  // not intern: every call defines a new site, so the caller keeps identical stacks to one id
  // (the recorder hashes its stacks; an importer has its own). The site is buffered and
  // written, in a sites chunk, just before the event chunk that may name it.
  std::uint64_t defineSite(const std::uint64_t* frames, std::size_t depth) noexcept {
    if (failed_ || finished_ || sbuf_ == nullptr || depth == 0 || depth > kMaxSiteDepth)
      return kNoSite;
    if (scap_ - spos_ < kMaxSiteBytes && !flush()) return kNoSite;
    if (chunkSites_ == 0)
      spos_ = static_cast<std::size_t>(putVarint(sbuf_ + kChunkHeaderSize, sites_) - sbuf_);
    spos_ = static_cast<std::size_t>(putSite(sbuf_ + spos_, frames, depth) - sbuf_);
    ++chunkSites_;
    return ++sites_;
  }

  // Writes `count` loaded objects in modules chunks (after the sites and events buffered so
  // far). Paths over kMaxModulePath and build ids over kMaxBuildId bytes are cut. Returns
  // false when the writer has no sites, failed or finished, a module's range is empty, or one
  // entry does not fit the buffer.
  bool addModules(const ModuleInfo* modules, std::size_t count) noexcept {
    if (failed_ || finished_ || sbuf_ == nullptr || !flush()) return false;
    std::size_t i = 0;
    while (i < count) {
      unsigned char* p = buf_ + kChunkHeaderSize;
      std::size_t n = 0;
      for (; i < count; ++i, ++n) {
        ModuleInfo m = modules[i];
        if (m.end <= m.start) return false;
        if (m.path == nullptr || m.pathLength > kMaxModulePath)
          m.pathLength = m.path == nullptr ? 0 : kMaxModulePath;
        if (m.buildId == nullptr || m.buildIdLength > kMaxBuildId)
          m.buildIdLength = m.buildId == nullptr ? 0 : kMaxBuildId;
        if (static_cast<std::size_t>(buf_ + cap_ - p) < moduleBytes(m)) break;
        p = putModule(p, m);
      }
      if (n == 0) return false;
      const std::size_t len = static_cast<std::size_t>(p - (buf_ + kChunkHeaderSize));
      writeChunkHeader(kModulesChunkMagic, len, n);
      if (!emit(buf_, kChunkHeaderSize + len)) return false;
    }
    return true;
  }

  // Hands the sites and events buffered so far to the sink as complete chunks (the sites
  // first; nothing when there are none). The recorder calls this from its crash/_exit
  // handlers: the trace is then valid up to here. Returns false once the sink has failed.
  bool flush() noexcept {
    if (failed_) return false;
    if (chunkSites_ != 0) {
      const std::size_t len = spos_ - kChunkHeaderSize;
      writeChunkHeader(kSitesChunkMagic, len, chunkSites_, sbuf_);
      chunkSites_ = 0;
      spos_ = 0;
      if (!emit(sbuf_, kChunkHeaderSize + len)) return false;
    }
    if (chunkEvents_ == 0) return true;
    const std::size_t len = pos_ - kChunkHeaderSize;
    const std::uint32_t count = chunkEvents_;
    chunkEvents_ = 0;
    pos_ = 0;
    prevTime_ = 0;
    if (compresses() && emitCompressed(len, count)) return true;
    if (failed_) return false;
    writeChunkHeader(kEventChunkMagic, len, count);
    return emit(buf_, kChunkHeaderSize + len);
  }

  // Flushes and writes the trailer chunk with the totals, marking a clean end. Appends after
  // this are rejected. Returns false when the sink failed at any point.
  bool finish() noexcept {
    if (finished_) return !failed_;
    if (!flush()) return false;
    finished_ = true;
    unsigned char* p = buf_ + kChunkHeaderSize;
    p = putVarint(p, events_);
    p = putVarint(p, nextId_);
    p = putVarint(p, threads_);
    const std::size_t len = static_cast<std::size_t>(p - (buf_ + kChunkHeaderSize));
    writeChunkHeader(kTrailerChunkMagic, len, 0);
    return emit(buf_, kChunkHeaderSize + len);
  }

  bool ok() const noexcept { return !failed_; }
  // Whether event chunks are compressed when that is smaller (a version 3 file).
  bool compresses() const noexcept { return zip_.compress != nullptr; }
  std::uint64_t compressedChunks() const noexcept { return zchunks_; }  // of chunks()
  std::uint64_t events() const noexcept { return events_; }    // events appended
  std::uint64_t objects() const noexcept { return nextId_; }   // ids handed out
  std::uint64_t threads() const noexcept { return threads_; }  // highest thread index + 1
  std::uint64_t chunks() const noexcept { return chunks_; }    // event chunks written
  std::uint64_t sites() const noexcept { return sites_; }      // sites defined
  bool hasSites() const noexcept { return sbuf_ != nullptr; }
  std::uint64_t bytesWritten() const noexcept { return bytes_; }

 private:
  // The start of every event: room in the buffer (flushing a full chunk), the chunk's base id
  // when the event opens a chunk, the op byte, the thread unless it is the previous event's,
  // and the time. nullptr when the writer failed or finished. Inline, with the rare cases out
  // of line: it is most of a recorder's per-event encoding.
  [[gnu::always_inline]] unsigned char* beginEvent(Op op, std::uint8_t flags,
                                                   std::uint32_t thread,
                                                   std::uint64_t timeNs) noexcept {
    const bool rare = (failed_ | finished_) || cap_ - pos_ < kMaxEventBytes || chunkEvents_ == 0;
    if (rare && !openRoom()) [[unlikely]]
      return nullptr;
    unsigned char* p = buf_ + pos_;
    const bool same = chunkEvents_ != 0 && thread == prevThread_;
    *p++ = static_cast<unsigned char>(static_cast<unsigned>(op) | flags |
                                      (same ? kFlagSameThread : 0));
    if (!same) p = putVarint(p, thread);
    return putVarint(p, zigzag(timeNs - prevTime_));
  }
  // beginEvent's rare cases: a failed or finished writer (false), a full buffer (flushed), a
  // new chunk (its base id).
  [[gnu::noinline]] bool openRoom() noexcept {
    if (failed_ | finished_) return false;
    if (cap_ - pos_ < kMaxEventBytes && !flush()) return false;
    if (chunkEvents_ == 0) {
      pos_ = kChunkHeaderSize;
      pos_ = static_cast<std::size_t>(putVarint(buf_ + pos_, nextId_) - buf_);
    }
    return true;
  }
  // The end of every event, written up to p.
  [[gnu::always_inline]] void endEvent(unsigned char* p, std::uint32_t thread,
                                       std::uint64_t timeNs) noexcept {
    pos_ = static_cast<std::size_t>(p - buf_);
    prevThread_ = thread;
    prevTime_ = timeNs;
    if (thread >= threads_) threads_ = std::uint64_t{thread} + 1;
    ++chunkEvents_;
    ++events_;
  }

  // Writes the event chunk buffered in buf_ (payload `len` bytes, `count` events) compressed,
  // when zstd makes it smaller on disk. False when it did not (nothing written: the caller
  // writes it plain) or the sink failed.
  bool emitCompressed(std::size_t len, std::uint32_t count) noexcept {
    constexpr std::size_t kPrefix = kChunkHeaderSize + kCompressedPrefix;
    if (len <= kCompressedPrefix + 1) return false;
    std::size_t room = zip_.capacity - kPrefix;
    if (room > len - kCompressedPrefix - 1) room = len - kCompressedPrefix - 1;
    unsigned char* z = zip_.out;
    const std::size_t packed = zip_.compress(zip_.state, buf_ + kChunkHeaderSize, len,
                                             z + kPrefix, room);
    if (packed == 0 || packed > room) return false;
    putU32(z + kChunkHeaderSize, static_cast<std::uint32_t>(len));
    writeChunkHeader(kCompressedChunkMagic, kCompressedPrefix + packed, count, z);
    ++zchunks_;
    return emit(z, kPrefix + packed);
  }

  void writeChunkHeader(std::uint32_t magic, std::size_t len, std::uint64_t count,
                        unsigned char* at = nullptr) noexcept {
    unsigned char* b = at == nullptr ? buf_ : at;
    putU32(b, magic);
    putU32(b + 4, static_cast<std::uint32_t>(len));
    putU32(b + 8, static_cast<std::uint32_t>(count));
    putU32(b + 12, crc32(b + kChunkHeaderSize, len));
    if (magic == kEventChunkMagic || magic == kCompressedChunkMagic) ++chunks_;
  }
  bool emit(const unsigned char* data, std::size_t len) noexcept {
    if (!sink_(data, len)) {
      failed_ = true;
      return false;
    }
    bytes_ += len;
    return true;
  }

  // The fields every append writes come first and fill 64 bytes (one cache line when the
  // writer is 64-byte aligned, as the recorder's is: its threads take turns on it); the
  // flags it only reads follow.
  unsigned char* buf_;
  std::size_t cap_;
  std::size_t pos_ = 0;
  std::uint64_t prevTime_ = 0;
  std::uint64_t nextId_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t threads_ = 0;
  std::uint32_t chunkEvents_ = 0;  // a chunk holds at most kMaxChunkPayload bytes of events
  std::uint32_t prevThread_ = 0;
  bool failed_ = false;
  bool finished_ = false;
  Sink sink_;
  std::uint64_t chunks_ = 0;
  std::uint64_t bytes_ = 0;
  unsigned char* sbuf_;          // sites not yet written; null: a trace without sites
  std::size_t scap_;
  std::size_t spos_ = 0;
  std::uint64_t sites_ = 0;      // sites defined
  std::uint32_t chunkSites_ = 0;
  ChunkCompressor zip_;          // compress == nullptr: plain event chunks (version 2)
  std::uint64_t zchunks_ = 0;    // event chunks written compressed
};

}  // namespace strata::trace
