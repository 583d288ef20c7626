// TraceWriter: encodes allocation events into the chunked trace format (docs/trace-format.md)
// inside a fixed buffer the caller gives it, and hands each full chunk to a write(2)-style
// sink. Built for an LD_PRELOADed recorder: once constructed it never allocates, never throws
// and calls nothing but the sink and memcpy. It is not thread-safe (the recorder serialises or
// keeps one writer per process). Cost per event: about 5 bytes of stores and a few branches;
// per chunk: one CRC-32 pass over the payload and one sink call.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cerrno>
#include <cstring>

#include <unistd.h>

#include "strata/trace/format.hpp"

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
      : buf_(buffer), cap_(capacity), sink_(static_cast<Sink&&>(sink)) {
    if (buf_ == nullptr || cap_ < kMinWriterBuffer) {
      failed_ = true;
      return;
    }
    if (cap_ > kChunkHeaderSize + kMaxChunkPayload) cap_ = kChunkHeaderSize + kMaxChunkPayload;
    unsigned char h[kFileHeaderSize] = {};
    std::memcpy(h, kFileMagic, sizeof kFileMagic);
    putU16(h + 8, kFormatVersion);
    emit(h, sizeof h);
  }
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Appends one event. For an op that creates an object (and did not fail) the writer assigns
  // the next dense id, ignoring e.object, and returns it; other events return kNoObject. Fields
  // the op does not use are ignored. Returns kRejected, writing nothing, when the event is
  // malformed: unknown op, flags the op may not carry, an alignment log2 over 63, or an object
  // or target id not yet created. Fast path: no flush, ~50 instructions.
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

    return appendUnchecked(e.op, e.flags, e.thread, e.timeNs, e.object, e.target, e.size,
                           e.alignLog2);
  }

  // The trusted form of append(), for a recorder that builds every event itself (it exists
  // because append()'s checks were a third of the recorder's per-event cost). The caller
  // guarantees what append() would check: op is a known op, flags are kFlagAligned |
  // kFlagNull | kFlagFailed as the op allows (flagsValid), alignLog2 <= 63 when kFlagAligned
  // is set, and object / target, where the op and flags carry them, are ids this writer
  // handed out. Fields the op does not carry are ignored. A malformed event is written as
  // given and makes a trace the reader rejects. Returns what append() returns (kRejected only
  // when the writer has failed or finished). Inlined with a constant op, the common events
  // (malloc, free) are about 40 instructions.
  std::uint64_t appendUnchecked(Op op, std::uint8_t flags, std::uint32_t thread,
                                std::uint64_t timeNs, std::uint64_t object, std::uint64_t target,
                                std::uint64_t size, std::uint8_t alignLog2) noexcept {
    if (failed_ | finished_) return kRejected;
    if (cap_ - pos_ < kMaxEventBytes && !flush()) return kRejected;
    if (chunkEvents_ == 0) {
      pos_ = kChunkHeaderSize;
      pos_ = static_cast<std::size_t>(putVarint(buf_ + pos_, nextId_) - buf_);
    }
    unsigned char* p = buf_ + pos_;
    const bool same = chunkEvents_ != 0 && thread == prevThread_;
    *p++ = static_cast<unsigned char>(static_cast<unsigned>(op) | flags |
                                      (same ? kFlagSameThread : 0));
    if (!same) p = putVarint(p, thread);
    p = putVarint(p, zigzag(timeNs - prevTime_));
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
    pos_ = static_cast<std::size_t>(p - buf_);

    prevThread_ = thread;
    prevTime_ = timeNs;
    if (thread >= threads_) threads_ = std::uint64_t{thread} + 1;
    ++chunkEvents_;
    ++events_;
    if (opCreates(op) && !(flags & kFlagFailed)) return nextId_++;
    return kNoObject;
  }

  // Writes the program chunk (format version 2): which process wrote the trace. Only before
  // the first event (false otherwise, or when the sink failed); a path longer than
  // kMaxProgramPath bytes is cut.
  bool program(std::uint64_t pid, std::uint64_t parentPid, const char* path) noexcept {
    if (failed_ || finished_ || events_ != 0 || chunkEvents_ != 0) return false;
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

  // Hands the events buffered so far to the sink as one complete chunk (nothing when there are
  // none). The recorder calls this from its crash/_exit handlers: the trace is then valid up
  // to here. Returns false once the sink has failed.
  bool flush() noexcept {
    if (failed_) return false;
    if (chunkEvents_ == 0) return true;
    const std::size_t len = pos_ - kChunkHeaderSize;
    writeChunkHeader(kEventChunkMagic, len, chunkEvents_);
    chunkEvents_ = 0;
    pos_ = 0;
    prevTime_ = 0;
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
  std::uint64_t events() const noexcept { return events_; }    // events appended
  std::uint64_t objects() const noexcept { return nextId_; }   // ids handed out
  std::uint64_t threads() const noexcept { return threads_; }  // highest thread index + 1
  std::uint64_t chunks() const noexcept { return chunks_; }    // event chunks written
  std::uint64_t bytesWritten() const noexcept { return bytes_; }

 private:
  void writeChunkHeader(std::uint32_t magic, std::size_t len, std::uint64_t count) noexcept {
    putU32(buf_, magic);
    putU32(buf_ + 4, static_cast<std::uint32_t>(len));
    putU32(buf_ + 8, static_cast<std::uint32_t>(count));
    putU32(buf_ + 12, crc32(buf_ + kChunkHeaderSize, len));
    if (magic == kEventChunkMagic) ++chunks_;
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
};

}  // namespace strata::trace
