// The Strata allocation trace format, version 3 (versions 1 and 2 still read): constants, the event model, LEB128 varints
// and CRC-32. Shared by TraceWriter (which runs inside an LD_PRELOADed recorder, so this
// header uses only the language and libc: no allocation, no exceptions) and TraceReader.
// The byte-level specification is docs/toolkit/trace-format.md; keep the two in step.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace strata::trace {

// File header: "STRATATR", version u16, flags u16, reserved u32 (all little-endian).
inline constexpr unsigned char kFileMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'T', 'R'};
// The newest version a reader accepts. Version 3 is version 2 that may also hold compressed
// event chunks; a writer that does not compress writes kPlainFormatVersion, so that its files
// stay readable by readers that predate compression.
inline constexpr std::uint16_t kFormatVersion = 3;
inline constexpr std::uint16_t kPlainFormatVersion = 2;
// The oldest version a reader still accepts. Version 1 has no touch or thread events and no
// program chunk; it is otherwise identical.
inline constexpr std::uint16_t kOldestFormatVersion = 1;
inline constexpr std::size_t kFileHeaderSize = 16;

// Chunk header: magic u32, payload length u32, event count u32, CRC-32 of the payload u32.
inline constexpr std::size_t kChunkHeaderSize = 16;
inline constexpr std::uint32_t kEventChunkMagic = 0x4B435453u;    // bytes "STCK"
inline constexpr std::uint32_t kTrailerChunkMagic = 0x4C545453u;  // bytes "STTL"
// Version 3: an event chunk whose payload is compressed with zstd. Its payload on disk is the
// decompressed length (u32, at most kMaxChunkPayload), then one zstd frame of the payload of
// an ordinary event chunk; the header's count is the events, its CRC covers the bytes on disk.
inline constexpr std::uint32_t kCompressedChunkMagic = 0x5A435453u;  // bytes "STCZ"
inline constexpr std::size_t kCompressedPrefix = 4;  // the decompressed length before the frame
// Version 2: the program chunk (which process wrote the trace), first after the file header.
inline constexpr std::uint32_t kProgramChunkMagic = 0x47505453u;  // bytes "STPG"
// Longest program path a program chunk carries (longer ones are cut).
inline constexpr std::size_t kMaxProgramPath = 4096;
// File flag SITES: creating events carry an allocation site, defined by sites chunks; modules
// chunks say where the code was loaded. Without the flag neither chunk may appear.
inline constexpr std::uint16_t kFileFlagSites = 0x0001;
inline constexpr std::uint16_t kKnownFileFlags = kFileFlagSites;
inline constexpr std::uint32_t kSitesChunkMagic = 0x49535453u;    // bytes "STSI"
inline constexpr std::uint32_t kModulesChunkMagic = 0x4F4D5453u;  // bytes "STMO"
// Deepest stack a site keeps: enough to name the caller of a container's allocation through a
// few layers of templates, while one site stays under a kilobyte on disk.
inline constexpr std::size_t kMaxSiteDepth = 64;
// Longest site encoding: depth varint and one 10-byte varint a frame.
inline constexpr std::size_t kMaxSiteBytes = 1 + 10 * kMaxSiteDepth;
// Longest module path and build id a modules chunk carries (a writer cuts longer ones).
inline constexpr std::size_t kMaxModulePath = 4096;
inline constexpr std::size_t kMaxBuildId = 64;
// The site of an event whose site is unknown (or a trace without sites); sites are numbered
// from 1 in the order they are defined.
inline constexpr std::uint64_t kNoSite = 0;
// Largest payload a reader accepts, so a reader's memory is bounded by one chunk and a
// corrupt length cannot make it allocate gigabytes.
inline constexpr std::size_t kMaxChunkPayload = std::size_t{1} << 24;
// Longest encoding of one event (1 op byte, 5 thread, 10 time, 10 target, 10 object, 10 size,
// 1 alignment = 47), rounded up: a writer flushes when less than this is left.
inline constexpr std::size_t kMaxEventBytes = 64;
// Smallest buffer a writer accepts: one chunk header, the base-id varint and one event.
inline constexpr std::size_t kMinWriterBuffer = 128;
// Smallest site buffer a writer accepts: one chunk header, the base-site varint and one site.
inline constexpr std::size_t kMinSiteBuffer = kChunkHeaderSize + 10 + kMaxSiteBytes;

// What happened. The numeric values are the low 4 bits of the op byte on disk.
enum class Op : std::uint8_t {
  Malloc = 0,
  Calloc = 1,
  Realloc = 2,
  Free = 3,
  Memalign = 4,  // memalign, posix_memalign, aligned_alloc, valloc, pvalloc
  New = 5,       // every operator new / new[] form
  Delete = 6,    // every operator delete / delete[] form
  ReapCreate = 7,
  ReapMalloc = 8,
  ReapFree = 9,
  ReapClear = 10,
  ReapDestroy = 11,
  // Version 2. Touch: how many bytes of a large object the program touched, written just
  // before the event that frees it (or at exit): object = the object, size = touched bytes.
  Touch = 12,
  // Version 2. ThreadStart: the event's thread started; target = the index of the thread that
  // created it (a thread index, not an object; kFlagNull when unknown). ThreadEnd: the
  // event's thread ended (no other field).
  ThreadStart = 13,
  ThreadEnd = 14,
};
inline constexpr unsigned kOpCount = 15;
// Ops 0..kOpCountV1-1 are all a version 1 trace may hold.
inline constexpr unsigned kOpCountV1 = 12;

// Flag bits, the high 4 bits of the op byte. kFlagSameThread is an encoding detail (the event
// ran on the same thread as the previous event of its chunk) and never appears in an Event.
inline constexpr std::uint8_t kFlagAligned = 0x10;     // an alignment byte follows (log2)
inline constexpr std::uint8_t kFlagNull = 0x20;        // the pointer argument was nullptr
inline constexpr std::uint8_t kFlagFailed = 0x40;      // the call returned nullptr
inline constexpr std::uint8_t kFlagSameThread = 0x80;  // on disk only
inline constexpr std::uint8_t kEventFlags = kFlagAligned | kFlagNull | kFlagFailed;

// "No object": the value of Event::object / Event::target when the op has no such field.
inline constexpr std::uint64_t kNoObject = ~std::uint64_t{0};

// One decoded event. Fields an op does not use hold their canonical empty value (kNoObject,
// 0), so two events compare equal exactly when they encode the same.
struct Event {
  Op op = Op::Malloc;
  std::uint8_t flags = 0;      // kFlagAligned | kFlagNull | kFlagFailed
  std::uint8_t alignLog2 = 0;  // alignment = 1 << alignLog2, when kFlagAligned
  std::uint32_t thread = 0;    // dense thread index
  std::uint64_t timeNs = 0;    // nanoseconds since the trace started
  std::uint64_t object = kNoObject;  // the object created, or freed (see the table in the doc)
  std::uint64_t target = kNoObject;  // realloc: the old object; reap_create: the parent; other
                                     // reap ops: the reap; thread_start: the creating thread
  std::uint64_t size = 0;            // requested bytes (calloc: nmemb * size); touch: touched bytes
  std::uint64_t site = kNoSite;      // creating events of a trace with sites: where (1, 2...)
  friend bool operator==(const Event&, const Event&) = default;
};

// Which fields an op carries; the writer and the reader both follow this one table.
// Cost: a switch, inlined into the encoder and decoder.
constexpr bool opCreates(Op op) noexcept {
  switch (op) {
    case Op::Malloc: case Op::Calloc: case Op::Realloc: case Op::Memalign: case Op::New:
    case Op::ReapCreate: case Op::ReapMalloc: return true;
    default: return false;
  }
}
constexpr bool opFreesObject(Op op) noexcept {
  return op == Op::Free || op == Op::Delete || op == Op::ReapFree;
}
// Ops whose object field names an existing object (Touch names one without freeing it).
constexpr bool opNamesObject(Op op) noexcept { return opFreesObject(op) || op == Op::Touch; }
constexpr bool opHasTarget(Op op) noexcept {
  return op == Op::Realloc || op == Op::ReapCreate || op == Op::ReapMalloc ||
         op == Op::ReapFree || op == Op::ReapClear || op == Op::ReapDestroy ||
         op == Op::ThreadStart;
}
// Whether the target field is a thread index (stored as is) rather than an object id (stored
// as a distance back from the newest object).
constexpr bool targetIsThread(Op op) noexcept { return op == Op::ThreadStart; }
// Whether an event with these flags stores a target: realloc(NULL, n), a reap created
// without a parent and a thread whose creator is unknown (all carry kFlagNull) have none.
constexpr bool targetPresent(Op op, std::uint8_t flags) noexcept {
  if (!opHasTarget(op)) return false;
  return !((op == Op::Realloc || op == Op::ReapCreate || op == Op::ThreadStart) &&
           (flags & kFlagNull));
}
// Whether an event with these flags names an existing object in its object field.
constexpr bool objectPresent(Op op, std::uint8_t flags) noexcept {
  return opNamesObject(op) && !(flags & kFlagNull);
}
constexpr bool opHasSize(Op op) noexcept {
  switch (op) {
    case Op::Malloc: case Op::Calloc: case Op::Realloc: case Op::Memalign: case Op::New:
    case Op::ReapMalloc: case Op::Touch: return true;
    default: return false;
  }
}
// The flags an op may carry. Memalign must carry kFlagAligned; New may (aligned new).
constexpr std::uint8_t opAllowedFlags(Op op) noexcept {
  std::uint8_t f = 0;
  if (opCreates(op)) f |= kFlagFailed;
  if (op == Op::Realloc || op == Op::ReapCreate || op == Op::ThreadStart || opFreesObject(op))
    f |= kFlagNull;
  if (op == Op::Memalign || op == Op::New) f |= kFlagAligned;
  return f;
}
constexpr bool flagsValid(Op op, std::uint8_t flags) noexcept {
  if ((flags & ~opAllowedFlags(op)) != 0) return false;
  if (op == Op::Memalign && (flags & kFlagAligned) == 0) return false;
  return true;
}

// LEB128: 7 bits a byte, least significant first, high bit = more. Writes at most 10 bytes
// and returns the byte after the last one written. Cost: one store per 7 bits.
inline unsigned char* putVarint(unsigned char* p, std::uint64_t v) noexcept {
  while (v >= 0x80) {
    *p++ = static_cast<unsigned char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<unsigned char>(v);
  return p;
}

// The general case of getVarint, out of line so the one-byte fast path inlines.
[[gnu::noinline]] inline const unsigned char* getVarintSlow(const unsigned char* p,
                                                           const unsigned char* end,
                                                           std::uint64_t& out) noexcept {
  std::uint64_t v = 0;
  for (unsigned shift = 0; shift < 70; shift += 7) {
    if (p == end) return nullptr;
    const std::uint64_t b = *p++;
    if (shift == 63 && b > 1) return nullptr;  // bits beyond 64
    v |= (b & 0x7f) << shift;
    if (b < 0x80) {
      out = v;
      return p;
    }
  }
  return nullptr;
}

// Reads one LEB128 varint from [p, end). Returns the byte after it, or nullptr when the input
// ends inside it, it is longer than 10 bytes, or it does not fit 64 bits. Never reads past end.
// Fast path (one or two bytes): a compare or two and a load each.
[[gnu::always_inline]] inline const unsigned char* getVarint(const unsigned char* p,
                                                            const unsigned char* end,
                                                            std::uint64_t& out) noexcept {
  if (end - p >= 2) {
    if (p[0] < 0x80) {
      out = p[0];
      return p + 1;
    }
    if (p[1] < 0x80) {
      out = (std::uint64_t{p[0]} & 0x7f) | (std::uint64_t{p[1]} << 7);
      return p + 2;
    }
  }
  return getVarintSlow(p, end, out);
}

// Zigzag maps signed deltas to small unsigned values: 0,-1,1,-2 -> 0,1,2,3.
constexpr std::uint64_t zigzag(std::uint64_t delta) noexcept {
  return (delta << 1) ^ (0 - (delta >> 63));
}
constexpr std::uint64_t unzigzag(std::uint64_t z) noexcept { return (z >> 1) ^ (0 - (z & 1)); }

// CRC-32 (IEEE 802.3 / zlib: reflected polynomial 0xEDB88320, init and final xor ~0),
// table-driven "slicing by 8": eight 256-entry tables built at compile time let the loop fold
// eight bytes per step (about 1.5 cycles a byte instead of ~4 for one table lookup per byte).
inline constexpr std::array<std::array<std::uint32_t, 256>, 8> kCrc32Tables = [] {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (0xEDB88320u ^ (c >> 1)) : (c >> 1);
    t[0][i] = c;
  }
  for (std::size_t k = 1; k < 8; ++k)
    for (std::size_t i = 0; i < 256; ++i) t[k][i] = t[0][t[k - 1][i] & 0xff] ^ (t[k - 1][i] >> 8);
  return t;
}();

inline std::uint32_t crc32(const unsigned char* p, std::size_t n) noexcept {
  const auto& t = kCrc32Tables;
  std::uint32_t c = ~std::uint32_t{0};
  for (; n >= 8; n -= 8, p += 8) {
    const std::uint32_t lo = c ^ (std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) |
                                  (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24));
    c = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
        t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
  }
  for (; n != 0; --n) c = t[0][(c ^ *p++) & 0xff] ^ (c >> 8);
  return ~c;
}

// What the program chunk says: the process that wrote the trace.
struct ProgramInfo {
  std::uint64_t pid = 0;        // 0 when unknown (no program chunk)
  std::uint64_t parentPid = 0;  // the process that started it, 0 when unknown
  char path[kMaxProgramPath + 1] = {};  // the program (/proc/self/exe), NUL-terminated
};

// One loaded object (executable or shared library) as a modules chunk stores it: the address
// range it occupies, the bias the dynamic linker applied (runtime address - bias = the ELF's
// virtual address; 0 for a non-PIE executable), its path and its GNU build id (may be empty).
// A view: the writer copies the bytes, the reader's views point into its own storage.
struct ModuleInfo {
  std::uint64_t start = 0;  // first address of its mappings
  std::uint64_t end = 0;    // one past the last (end > start)
  std::uint64_t bias = 0;
  const char* path = nullptr;
  std::size_t pathLength = 0;
  const unsigned char* buildId = nullptr;
  std::size_t buildIdLength = 0;
};

// Little-endian fixed-width helpers for headers.
inline void putU16(unsigned char* p, std::uint16_t v) noexcept {
  p[0] = static_cast<unsigned char>(v);
  p[1] = static_cast<unsigned char>(v >> 8);
}
inline void putU32(unsigned char* p, std::uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline std::uint16_t getU16(const unsigned char* p) noexcept {
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}
inline std::uint32_t getU32(const unsigned char* p) noexcept {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) |
         (std::uint32_t{p[3]} << 24);
}

}  // namespace strata::trace
