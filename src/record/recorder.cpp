// libstrata-record.so: the allocation recorder that `strata record` preloads into a program.
//
// It interposes malloc, calloc, realloc, reallocarray, free, the aligned entry points, every
// operator new/delete, and the Strata C APIs (<strata/reap.h>, <strata/region.h>) when the
// program uses them; forwards each call to the real implementation (glibc's __libc_* functions,
// or dlsym(RTLD_NEXT) for the Strata APIs) and logs one event per call into a trace
// (docs/trace-format.md) through a single TraceWriter<FdSink> under one lock; in a
// multi-threaded process on the TSC clock, plain creates and releases go first into
// per-thread rings that are merged in time-stamp order under that lock. Addresses are
// turned into dense object ids by an open-addressing hash table in mmap memory, so the
// recorder never calls the malloc it records. Each trace starts with the program chunk;
// large objects get a Touch event before they end (page logic in touch.hpp); threads made
// with pthread_create get ThreadStart and ThreadEnd (wrapper in threads.hpp).
// docs/recording.md describes the behaviour (file names, fork, exec, crashes) and the limits.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <new>

#include "strata/trace/writer.hpp"
#include "threads.hpp"
#include "touch.hpp"

#define STRATA_EXPORT extern "C" __attribute__((visibility("default")))

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* __libc_memalign(size_t, size_t);
void* __libc_valloc(size_t);
void* __libc_pvalloc(size_t);
}

namespace {

using strata::trace::Event;
using strata::trace::FdSink;
using strata::trace::kFlagAligned;
using strata::trace::kFlagFailed;
using strata::trace::kFlagNull;
using strata::trace::kNoObject;
using strata::trace::Op;
using Writer = strata::trace::TraceWriter<FdSink>;
using strata::record::kTouchUnknown;
using strata::record::releasePages;
using strata::record::touchedBytes;

// Chunk buffer: events are written out every 256 KiB (about 50 000 events), so a SIGKILL
// loses at most that much and every earlier chunk is valid on disk.
constexpr size_t kBufferBytes = size_t{256} << 10;
constexpr size_t kInitialMapSlots = size_t{1} << 16;

// Anonymous private memory straight from the kernel: the recorder's own memory never comes
// from the malloc it records. Returns nullptr on failure.
void* mapPages(size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// One live address the trace knows: the object (or reap) id it got, its requested size, and
// `meta`: bits 0-47 the id + 1 of the reap it came from (0: none), bit 48 set for a reap
// handle (then `size` holds the parent reap's id, or kNoObject), bits 56-63 alignment log2.
// The full form, kept only for the rare entries (see ObjectMap); lookups return it.
struct Entry {
  uintptr_t addr;
  uint64_t id;
  uint64_t size;
  uint64_t meta;
};
constexpr uint64_t kReapBit = uint64_t{1} << 48;
constexpr uint64_t kReapIdMask = kReapBit - 1;

uint64_t makeMeta(uint64_t reap, bool isReap, unsigned alignLog2) {
  return (reap == kNoObject ? 0 : (reap + 1) & kReapIdMask) | (isReap ? kReapBit : 0) |
         (uint64_t{alignLog2} << 56);
}
uint64_t metaReap(uint64_t meta) {
  const uint64_t r = meta & kReapIdMask;
  return r == 0 ? kNoObject : r - 1;
}
bool metaIsReap(uint64_t meta) { return (meta & kReapBit) != 0; }
unsigned metaAlign(uint64_t meta) { return static_cast<unsigned>(meta >> 56); }

// The compact form of an entry, 16 bytes (four to a cache line): the address and, packed in
// `value`, the id (bits 0-39) and the requested size (bits 40-62) of a plain object (no reap,
// no alignment, id < 2^40 - 1, size < 2^23), or kRare when the entry's full form is in the
// side table.
struct Packed {
  uintptr_t addr;
  uint64_t value;
};
constexpr unsigned kIdBits = 40;
constexpr uint64_t kIdMask = (uint64_t{1} << kIdBits) - 1;
constexpr uint64_t kSizeLimit = uint64_t{1} << 23;
constexpr uint64_t kRare = ~uint64_t{0};

// Memory for the address table: 2 MiB-aligned and marked MADV_HUGEPAGE when it is that large,
// because lookups land at random in a table that grows with the live objects, and with 4 KiB
// pages nearly every one of them also misses the TLB (very costly under a hypervisor's
// nested paging). Returns nullptr on failure; the result is unmapped with munmap(p, bytes).
void* mapTable(size_t bytes) {
  constexpr size_t kHuge = size_t{2} << 20;
  if (bytes < kHuge) return mapPages(bytes);
  auto* raw = static_cast<unsigned char*>(mapPages(bytes + kHuge));
  if (raw == nullptr) return nullptr;
  const uintptr_t start = (reinterpret_cast<uintptr_t>(raw) + kHuge - 1) & ~(kHuge - 1);
  unsigned char* p = reinterpret_cast<unsigned char*>(start);
  if (p != raw) ::munmap(raw, static_cast<size_t>(p - raw));
  const size_t tail = static_cast<size_t>((raw + bytes + kHuge) - (p + bytes));
  if (tail != 0) ::munmap(p + bytes, tail);
  ::madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

// The home slot of addr in a table of mask + 1 slots (shift = 64 - log2 of that). Keeps
// neighbours together: the 16-byte units of one 64 KiB block of address space map to 4096
// consecutive slots, at an offset given by a multiplicative hash of the block number. An
// allocator hands out neighbouring addresses one after the other, so a run of mallocs
// writes neighbouring slots (one cache miss per four entries instead of one per entry),
// while blocks (and the 64 MiB-aligned heaps of glibc's thread arenas, which a plain mask
// would pile onto the same slots) still spread over the whole table.
inline size_t homeSlot(uintptr_t addr, size_t mask, unsigned shift) {
  const size_t block = static_cast<size_t>(((addr >> 16) * 0x9E3779B97F4A7C15ull) >> shift);
  return (block + ((addr >> 4) & 0xfff)) & mask;
}

// Address -> slot S (a struct whose first field is `uintptr_t addr`; 0 marks an empty slot):
// open addressing with linear probing and backward-shift deletion (no tombstones, so a long
// run of malloc/free does not degrade it), kept at most half full and doubled by rehashing
// into a fresh mapping. Lookup, insert and erase are one hash and usually one cache line. Not
// thread-safe: used under the recorder's lock.
template <class S>
class HashTable {
 public:
  bool init(size_t slots) {
    slots_ = static_cast<S*>(mapTable(slots * sizeof(S)));
    if (slots_ == nullptr) return false;
    mask_ = slots - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(slots));
    count_ = 0;
    return true;
  }
  // The slot holding addr, or nullptr.
  S* find(uintptr_t addr) {
    for (size_t i = home(addr);; i = (i + 1) & mask_) {
      if (slots_[i].addr == addr) return &slots_[i];
      if (slots_[i].addr == 0) return nullptr;
    }
  }
  // Adds s, replacing a slot with the same address. False when the table could not grow.
  bool insert(const S& s) {
    bool existed;
    S* slot = insertSlot(s.addr, &existed);
    if (slot == nullptr) return false;
    *slot = s;
    return true;
  }
  // The slot for addr: its existing one (*existed = true), or a new one holding only the
  // address, for the caller to fill. nullptr when the table could not grow.
  S* insertSlot(uintptr_t addr, bool* existed) {
    if ((count_ + 1) * 2 > mask_ + 1 && !grow()) return nullptr;
    size_t i = home(addr);
    for (; slots_[i].addr != 0; i = (i + 1) & mask_) {
      if (slots_[i].addr == addr) {
        *existed = true;
        return &slots_[i];
      }
    }
    *existed = false;
    slots_[i].addr = addr;
    ++count_;
    return &slots_[i];
  }
  void erase(S* s) { eraseAt(static_cast<size_t>(s - slots_)); }
  // Removes addr's slot, if there is one.
  void erase(uintptr_t addr) {
    if (S* s = find(addr)) erase(s);
  }
  // Starts loading addr's home slot into the cache, so that the miss overlaps the clock read
  // and the lock that come before the lookup. Runs without the lock: it may read a table
  // that is being replaced, which is harmless for a prefetch (it never faults). The fields
  // are read atomically (relaxed) for that reason.
  void prefetch(uintptr_t addr) const {
    S* slots = __atomic_load_n(&slots_, __ATOMIC_RELAXED);
    const size_t mask = __atomic_load_n(&mask_, __ATOMIC_RELAXED);
    const unsigned shift = __atomic_load_n(&shift_, __ATOMIC_RELAXED);
    if (slots == nullptr) return;
    __builtin_prefetch(&slots[homeSlot(addr, mask, shift)], 1);
  }
  // Loads addr's home slot, without the lock, so that its cache miss is over before the
  // caller takes the lock (the lock's atomic exchange waits for earlier loads, not for
  // prefetches): other threads then do not wait for that miss too. The table may be growing
  // meanwhile: mask_ is read first and grow() publishes the bigger table before its bigger
  // mask, so the slot read is inside whichever table is seen, and a replaced table stays
  // mapped (see grow()). The value read is thrown away.
  void touch(uintptr_t addr) const {
    const size_t mask = __atomic_load_n(&mask_, __ATOMIC_ACQUIRE);
    S* slots = __atomic_load_n(&slots_, __ATOMIC_RELAXED);
    const unsigned shift = __atomic_load_n(&shift_, __ATOMIC_RELAXED);
    if (slots == nullptr) return;
    const uintptr_t v = __atomic_load_n(&slots[homeSlot(addr, mask, shift)].addr, __ATOMIC_RELAXED);
    asm volatile("" : : "r"(v));
  }
  size_t capacity() const { return mask_ + 1; }
  size_t size() const { return count_; }
  S* slots() { return slots_; }
  // Keeps only the slots for which keep(slot) is true, by rebuilding the table (slots move,
  // so erasing while scanning would skip some). O(capacity). Unmaps the old table: not for
  // a table that touch() reads.
  template <class Keep>
  void retain(Keep keep) {
    HashTable fresh;
    if (!fresh.init(capacity())) return;
    for (size_t i = 0; i <= mask_; ++i)
      if (slots_[i].addr != 0 && keep(slots_[i])) fresh.insert(slots_[i]);
    ::munmap(slots_, capacity() * sizeof(S));
    *this = fresh;
  }

 private:
  size_t home(uintptr_t addr) const { return homeSlot(addr, mask_, shift_); }
  // Doubles the table. The old one's memory goes back to the kernel (MADV_DONTNEED), but its
  // address range stays mapped (reading it gives zeros), because touch() may still read it
  // from another thread; at most as many bytes of address space as the table has are left so.
  bool grow() {
    HashTable bigger;
    if (!bigger.init(capacity() * 2)) return false;
    for (size_t i = 0; i <= mask_; ++i)
      if (slots_[i].addr != 0) bigger.insert(slots_[i]);
    ::madvise(slots_, capacity() * sizeof(S), MADV_DONTNEED);
    __atomic_store_n(&slots_, bigger.slots_, __ATOMIC_RELEASE);
    __atomic_store_n(&shift_, bigger.shift_, __ATOMIC_RELEASE);
    __atomic_store_n(&mask_, bigger.mask_, __ATOMIC_RELEASE);
    count_ = bigger.count_;
    return true;
  }
  // Linear-probing deletion: pulls back every later slot of the cluster whose home slot
  // does not lie cyclically in (hole, its slot], so lookups never meet a false gap.
  void eraseAt(size_t hole) {
    for (size_t j = (hole + 1) & mask_; slots_[j].addr != 0; j = (j + 1) & mask_) {
      const size_t k = home(slots_[j].addr);
      const bool stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
      if (!stays) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].addr = 0;
    --count_;
  }

  // The table's shape, read by every thread's prefetch, and its fill count, written by every
  // insert and erase: on separate cache lines.
  alignas(64) S* slots_ = nullptr;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  alignas(64) size_t count_ = 0;
};

// Every live address the trace knows. The main table has a 16-byte Packed slot per address;
// the few entries that do not pack (reaps, objects in reaps, aligned objects, sizes of 8 MiB
// and more, ids from 2^40 - 1 on) are marked kRare there and kept whole in a side table of
// Entry. Half the bytes of one table of Entry: a table holding a large live set misses the
// caches half as often. Not thread-safe: used under the recorder's lock.
class ObjectMap {
 public:
  bool init(size_t slots) { return main_.init(slots) && side_.init(64); }
  void prefetch(uintptr_t addr) const { main_.prefetch(addr); }
  void touch(uintptr_t addr) const { main_.touch(addr); }
  // Fills *out with addr's entry; false when addr is not known.
  bool find(uintptr_t addr, Entry* out) {
    Packed* s = main_.find(addr);
    if (s == nullptr) return false;
    return unpack(*s, out);
  }
  // Removes addr's entry into *out; false when addr is not known.
  bool take(uintptr_t addr, Entry* out) {
    Packed* s = main_.find(addr);
    if (s == nullptr) return false;
    const bool found = unpack(*s, out);
    if (s->value == kRare) side_.erase(addr);
    main_.erase(s);
    return found;
  }
  // Adds e, replacing an entry with the same address. False when a table could not grow.
  bool insert(const Entry& e) {
    const bool plain = packs(e);
    if (!plain && !side_.insert(e)) return false;
    bool existed;
    Packed* s = main_.insertSlot(e.addr, &existed);
    if (s == nullptr) {
      if (!plain) side_.erase(e.addr);
      return false;
    }
    if (plain && existed && s->value == kRare) side_.erase(e.addr);  // replaced a rare one
    s->value = plain ? e.id | (e.size << kIdBits) : kRare;
    return true;
  }
  void erase(uintptr_t addr) {
    Packed* s = main_.find(addr);
    if (s == nullptr) return;
    if (s->value == kRare) side_.erase(addr);
    main_.erase(s);
  }
  // Calls f(Entry&) for every entry, rare entries first; what f changes in the entry's id,
  // size and meta is kept. f must keep the address, and a plain entry plain.
  template <class F>
  void forEach(F f) {
    Entry* rare = side_.slots();
    for (size_t i = 0; i < side_.capacity(); ++i)
      if (rare[i].addr != 0) f(rare[i]);
    Packed* s = main_.slots();
    for (size_t i = 0; i < main_.capacity(); ++i) {
      if (s[i].addr == 0 || s[i].value == kRare) continue;
      Entry e;
      unpack(s[i], &e);
      f(e);
      if (packs(e)) s[i].value = e.id | (e.size << kIdBits);
    }
  }
  // The rare entries, for scans that only concern reaps (every reap and reap object is rare).
  Entry* rareSlots() { return side_.slots(); }
  size_t rareCapacity() const { return side_.capacity(); }
  // Keeps only the rare entries for which keep(entry) is true; the others are forgotten.
  template <class Keep>
  void retainRare(Keep keep) {
    side_.retain([&](const Entry& e) {
      if (keep(e)) return true;
      main_.erase(e.addr);
      return false;
    });
  }

 private:
  // Whether e has a Packed form.
  static bool packs(const Entry& e) {
    return e.meta == 0 && e.id < kIdMask && e.size < kSizeLimit;
  }
  bool unpack(const Packed& s, Entry* out) {
    if (s.value == kRare) {
      const Entry* e = side_.find(s.addr);
      if (e == nullptr) return false;
      *out = *e;
      return true;
    }
    *out = Entry{s.addr, s.value & kIdMask, s.value >> kIdBits, 0};
    return true;
  }

  HashTable<Packed> main_;
  HashTable<Entry> side_;
};

// Recorder states: not recording (no STRATA_TRACE_FILE, the file could not be opened, or not
// initialised yet), recording, or finished (trailer written; later calls pass straight through).
enum State : int { kOff = 0, kOn = 1, kDone = 2 };

// The recorder's lock: a test-and-test-and-set spinlock. Uncontended it is one atomic
// exchange and one store (a pthread mutex costs several times that per call here); the
// critical section is a few dozen nanoseconds, so a waiter spins with PAUSE, and after a
// while yields the CPU in case the holder was descheduled. The waiter backs off
// exponentially between looks at the lock: each hand-over between cores moves the lock's,
// the writer's and the table's cache lines, so a holder that takes the lock again for its
// next call before the waiter looks is cheaper overall than strict turns (measured: two
// threads allocating flat out ran ~15% faster recorded than with a look after every PAUSE).
// tryLock() is for the signal handler; reset() for a fork child, which has only the
// forking thread.
class SpinLock {
 public:
  void lock() {
    // The process's only thread can take the lock with a plain store: no other thread
    // exists to contend, and none can be created while it holds it (glibc clears
    // __libc_single_threaded before a second thread starts). This spares the atomic
    // exchange, which also waits for every store before it (the program's writes to its
    // objects among them) to reach the cache.
    if (__libc_single_threaded) {
      v_.store(1, std::memory_order_relaxed);
      return;
    }
    if (!v_.exchange(1, std::memory_order_acquire)) return;
    lockSlow();
  }
  bool tryLock() {
    return v_.load(std::memory_order_relaxed) == 0 && !v_.exchange(1, std::memory_order_acquire);
  }
  void unlock() { v_.store(0, std::memory_order_release); }
  void reset() { v_.store(0, std::memory_order_relaxed); }

 private:
  [[gnu::noinline]] void lockSlow() {
    unsigned backoff = 1;
    for (unsigned rounds = 0;; ++rounds) {
      if (rounds < kSpinRounds) {
        for (unsigned i = 0; i < backoff; ++i) {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
        }
        backoff = std::min(backoff * 2, kMaxBackoff);
      } else {
        ::sched_yield();
      }
      if (v_.load(std::memory_order_relaxed) == 0 && !v_.exchange(1, std::memory_order_acquire))
        return;
    }
  }
  // Up to 256 PAUSEs (~10 us) between looks, 64 looks, then sched_yield between looks.
  static constexpr unsigned kMaxBackoff = 256;
  static constexpr unsigned kSpinRounds = 64;
  std::atomic<int> v_{0};
};

// The lock, and the scalars every event reads or updates under it, on one cache line: the
// thread that takes the lock then holds them too, with no further transfer of cache lines
// between cores when threads take turns.
struct alignas(64) LockLine {
  SpinLock lock;
  uint32_t generation = 1;             // bumped in a fork child: thread indexes handed out anew
  uint32_t nextThread = 0;             // next dense thread index
  uint64_t startNs = 0;                // the clock at the start of this process's trace
  uint64_t lastNs = 0;                 // the last event's time (see eventTime)
  uint64_t nextCalibrationNs = ~uint64_t{0};  // when the tsc clock is due (see calibrateTsc)
};

// gState is read by every call on every thread and gHot written by every recorded call:
// each on a cache line of its own, so that taking the lock does not evict the state from
// the other threads' caches. The writer's fields that change per event fill one line.
alignas(64) std::atomic<int> gState{kOff};
LockLine gHot;
alignas(64) unsigned char gWriterStorage[sizeof(Writer)];
Writer* gWriter = nullptr;
unsigned char* gBuffer = nullptr;
ObjectMap gMap;

// Large objects: those whose Touch event says how much of them the program touched (see
// touch.hpp). An object is large when its requested size is at least two pages: a smaller
// one holds at most one whole page inside it (none when it straddles a page boundary), so
// giving its pages back would save a replay at most a page of writes while costing two system
// calls per object and a page fault per touched page. Every object made by malloc, calloc,
// realloc, the memalign family or operator new of that size has its whole interior pages
// given back to the kernel at creation ("prepared"), and only those go into gLarge, with
// their requested size: the Touch event needs it before the free, and the exit path lists
// the live ones. Reap objects are never prepared. gLargeThreshold is ~0 until the recorder
// starts; both are read-only afterwards.
struct LargeSlot {
  uintptr_t addr;
  uint64_t size;
};
uint64_t gLargeThreshold = ~uint64_t{0};
size_t gPageSize = 4096;
HashTable<LargeSlot> gLarge;  // under gHot.lock
// Marks a raw ring event (and the flags createLocked is given): on a create, the object was
// prepared; on a release, its size field holds the touched bytes. The bit of kFlagSameThread,
// which never appears in an event's flags: stripped before the writer sees them.
constexpr uint8_t kRawMark = 0x80;
// "No Touch measured", passed to the release paths.
constexpr uint64_t kNoTouch = kTouchUnknown;

int gFd = -1;
pid_t gPid = 0;             // the process the current trace belongs to
char gPath[4096];           // STRATA_TRACE_FILE
pid_t gOwnerPid = 0;        // STRATA_TRACE_PID: the process that writes gPath itself

// Per thread: the recursion guard (non-zero while the recorder itself, or a forwarded Strata
// API call, runs: allocations made then are the recorder's or the library's, not the
// program's, and pass straight through unrecorded), whether this thread holds gHot.lock (a
// signal handler must not try to flush then), and the dense thread index with the
// generation it was handed out in. initial-exec TLS: a preloaded library has static TLS, and
// access is a plain %fs-relative load (the general-dynamic model may call malloc).
#define STRATA_TLS thread_local __attribute__((tls_model("initial-exec")))
STRATA_TLS int tGuard = 0;
STRATA_TLS bool tHoldsLock = false;
STRATA_TLS uint32_t tThread = 0;
STRATA_TLS uint32_t tThreadGen = 0;

// Whether the calling thread should record this call now.
inline bool recording() {
  return gState.load(std::memory_order_acquire) == kOn && tGuard == 0;
}

// ---- the clock ----------------------------------------------------------------------------
// Events are stamped with one of three clocks, chosen by STRATA_TRACE_CLOCK:
// - tsc (the default, when usable): the CPU's time-stamp counter, converted to CLOCK_MONOTONIC
//   nanoseconds. rdtsc costs ~16 ns on the development VM where the vDSO's CLOCK_MONOTONIC
//   costs 30-40 ns (it reads the same counter, plus the kernel's conversion data, and under a
//   hypervisor more); the clock was the recorder's largest single cost. Usable when the CPU's
//   TSC is invariant (constant rate, not stopped in sleep states) and the kernel itself keeps
//   time with it (its clocksource is "tsc"), so that the TSC is trusted to agree across CPUs.
//   Otherwise the fine clock is used.
// - fine: CLOCK_MONOTONIC, through the vDSO.
// - coarse: CLOCK_MONOTONIC_COARSE, ~6-13 ns but advancing only every kernel tick (1-4 ms).
enum ClockKind : int { kClockFine, kClockCoarse, kClockTsc };
ClockKind gClockKind = kClockFine;

// Nanoseconds on the kernel clock c.
inline uint64_t kernelNs(clockid_t c) {
  struct timespec ts;
  ::clock_gettime(c, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

#if defined(__x86_64__)
inline uint64_t readTsc() { return __rdtsc(); }
#else
inline uint64_t readTsc() { return 0; }
#endif

// Whether the tsc clock can be used here (see above). Reads sysfs with plain system calls.
bool tscUsable() {
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
  __get_cpuid(0x80000007u, &a, &b, &c, &d);
  if ((d & (1u << 8)) == 0) return false;  // no invariant TSC
  const int fd = ::open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                        O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[16] = {};
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  return n >= 3 && ::strncmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
#else
  return false;
#endif
}

// The TSC -> nanoseconds conversion: ns = ns0 + ((tsc - tsc0) * mult) >> 32, with mult = 0
// until the first calibration (then the fine clock stands in). Written under gHot.lock by
// calibrateTsc() and read by every thread without it, so guarded by a sequence count (odd
// while an update is under way); a reader that meets an update reads the fine clock instead
// of waiting, as the update may be on its own thread, under a signal handler.
struct alignas(64) TscConversion {
  std::atomic<uint64_t> seq{0};
  std::atomic<uint64_t> tsc0{0};
  std::atomic<uint64_t> ns0{0};
  std::atomic<uint64_t> mult{0};
};
TscConversion gTsc;
// Calibration state, under the lock: the first reference point (and in gHot, when to
// recalibrate next; the fine and coarse clocks never do).
uint64_t gTscStartTsc = 0;
uint64_t gTscStartNs = 0;
// The first calibration waits for 1 ms to have passed (no start-up delay; the first events
// use the fine clock); then the conversion is recalibrated every 50 ms of run time, against
// the whole time since the start, so its rate error shrinks as the program runs and its
// offset from CLOCK_MONOTONIC stays within a few microseconds.
constexpr uint64_t kFirstCalibrationNs = 1000000;
constexpr uint64_t kCalibrationPeriodNs = 50000000;

// tsc converted with the given parameters.
inline uint64_t tscToNs(uint64_t tsc, uint64_t tsc0, uint64_t ns0, uint64_t mult) {
  const uint64_t d = tsc > tsc0 ? tsc - tsc0 : 0;
  return ns0 + static_cast<uint64_t>((static_cast<unsigned __int128>(d) * mult) >> 32);
}

// The tsc clock now, into *out; false when it is not calibrated or being recalibrated.
inline bool tscNs(uint64_t* out) {
  const uint64_t s = gTsc.seq.load(std::memory_order_acquire);
  const uint64_t tsc0 = gTsc.tsc0.load(std::memory_order_relaxed);
  const uint64_t ns0 = gTsc.ns0.load(std::memory_order_relaxed);
  const uint64_t mult = gTsc.mult.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if ((s & 1) != 0 || gTsc.seq.load(std::memory_order_relaxed) != s || mult == 0) return false;
  *out = tscToNs(readTsc(), tsc0, ns0, mult);
  return true;
}

// Nanoseconds on the chosen clock (not under the lock: each call stamps its event before
// taking it).
inline uint64_t nowNs() {
  if (gClockKind == kClockTsc) {
    uint64_t t;
    if (tscNs(&t)) return t;
  }
  return kernelNs(gClockKind == kClockCoarse ? CLOCK_MONOTONIC_COARSE : CLOCK_MONOTONIC);
}

// A TSC reading and CLOCK_MONOTONIC at nearly the same moment: of three tries, the one whose
// two TSC reads around the clock_gettime lie closest together.
void referencePoint(uint64_t* tsc, uint64_t* ns) {
  uint64_t best = ~uint64_t{0};
  for (int i = 0; i < 3; ++i) {
    const uint64_t before = readTsc();
    const uint64_t n = kernelNs(CLOCK_MONOTONIC);
    const uint64_t after = readTsc();
    if (after - before < best) {
      best = after - before;
      *tsc = before + (after - before) / 2;
      *ns = n;
    }
  }
}

// Starts the tsc clock: the reference point the calibrations measure from.
void startTscClock() {
  referencePoint(&gTscStartTsc, &gTscStartNs);
  gHot.nextCalibrationNs = gTscStartNs + kFirstCalibrationNs;
}

// (Re)computes the TSC conversion from the time since startTscClock(), under gHot.lock. The new
// conversion starts where the old one is now, or at CLOCK_MONOTONIC if that is later, so
// the clock never steps back.
void calibrateTsc() {
  uint64_t tsc, ns;
  referencePoint(&tsc, &ns);
  const uint64_t dt = tsc - gTscStartTsc, dn = ns - gTscStartNs;
  if (tsc <= gTscStartTsc || dn < kFirstCalibrationNs) {
    gHot.nextCalibrationNs = gTscStartNs + kFirstCalibrationNs;
    return;
  }
  gHot.nextCalibrationNs = ns + kCalibrationPeriodNs;
  const auto mult = static_cast<uint64_t>((static_cast<unsigned __int128>(dn) << 32) / dt);
  const uint64_t oldMult = gTsc.mult.load(std::memory_order_relaxed);
  uint64_t start = ns;
  if (oldMult != 0) {
    start = std::max(start, tscToNs(tsc, gTsc.tsc0.load(std::memory_order_relaxed),
                                    gTsc.ns0.load(std::memory_order_relaxed), oldMult));
  }
  const uint64_t s = gTsc.seq.load(std::memory_order_relaxed);
  gTsc.seq.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  gTsc.tsc0.store(tsc, std::memory_order_relaxed);
  gTsc.ns0.store(start, std::memory_order_relaxed);
  gTsc.mult.store(mult, std::memory_order_relaxed);
  gTsc.seq.store(s + 2, std::memory_order_release);
}

// The time an event is written with, under gHot.lock: t, or the last event's time if that is
// later (threads stamp their events before taking the lock, and the tsc clock may step when
// recalibrated), so time never runs backwards in the trace, on any thread. Also
// recalibrates the tsc clock when it is due.
inline uint64_t eventTime(uint64_t t) {
  if (t >= gHot.nextCalibrationNs) [[unlikely]]
    calibrateTsc();
  if (t < gHot.lastNs) return gHot.lastNs;
  gHot.lastNs = t;
  return t;
}

// Raises the recursion guard for a scope.
struct Guard {
  Guard() { ++tGuard; }
  ~Guard() { --tGuard; }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
};

// Holds gHot.lock for a scope; also keeps errno as the program left it (a failed write(2) in a
// flush must not show through as the errno of a successful malloc).
class Locked {
 public:
  Locked() : errno_(errno) {
    gHot.lock.lock();
    tHoldsLock = true;
  }
  ~Locked() {
    tHoldsLock = false;
    gHot.lock.unlock();
    errno = errno_;
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
  // Keeps errno as it is now instead: after a real call made under the lock, whose errno
  // (ENOMEM from a failed realloc) the program must see.
  void keepErrno() { errno_ = errno; }

 private:
  int errno_;
};

// The calling thread's dense index, handed out at its first event (under gHot.lock).
inline uint32_t threadIndex() {
  if (tThreadGen != gHot.generation) {
    tThread = gHot.nextThread++;
    tThreadGen = gHot.generation;
  }
  return tThread;
}

// ceil(log2(a)) for an alignment (a of 0 or 1 gives 0).
unsigned alignLog2(size_t a) {
  if (a <= 1) return 0;
  return static_cast<unsigned>(64 - __builtin_clzll(static_cast<unsigned long long>(a - 1)));
}

// Appends one event (under gHot.lock) stamped with time t; returns the id a creating event got.
// Through the writer's unchecked path: every event here is well formed by construction (the
// flags each call site sets are the ones its op allows, and object / target ids come from
// the address map, which holds only ids the writer handed out).
inline uint64_t appendAs(uint32_t thread, Op op, uint8_t flags, uint64_t t, uint64_t size,
                         uint64_t object, uint64_t target, unsigned align) {
  return gWriter->appendUnchecked(op, flags, thread, eventTime(t) - gHot.startNs, object, target,
                                  size, static_cast<uint8_t>(align));
}
// appendAs for the calling thread.
inline uint64_t append(Op op, uint8_t flags, uint64_t t, uint64_t size, uint64_t object,
                       uint64_t target, unsigned align) {
  return appendAs(threadIndex(), op, flags, t, size, object, target, align);
}

// Notes (under gHot.lock) that the object at p of `size` bytes, at least gLargeThreshold, was
// just created: in gLarge when it was prepared, else out of it (an entry left at that address
// by an object whose free the recorder did not see must not stand for this one).
[[gnu::noinline]] void noteLarge(uintptr_t p, uint64_t size, bool prepared) {
  if (prepared) {
    gLarge.insert(LargeSlot{p, size});
  } else {
    gLarge.erase(p);
  }
}

// The requested size of the prepared large object at p, whose map entry is e, or 0 when it
// is not one (under gHot.lock).
uint64_t preparedSize(uintptr_t p, const Entry& e) {
  const LargeSlot* l = gLarge.find(p);
  if (l == nullptr || l->size != e.size || metaIsReap(e.meta) || metaReap(e.meta) != kNoObject)
    return 0;
  return l->size;
}

// Releases of an address the map does not hold, kept for a short while (under gHot.lock).
// The rings are merged in time-stamp order, which is causal order when the CPUs' TSCs agree;
// on a machine where they disagree by a little (virtual machines), a thread's free of an
// object another thread created just before can be stamped below that create, and is merged
// first. Rather than drop it, the merge parks it; a create of the same address by another
// thread within the next two merges takes it (the create is written, then the release), and
// after that it is taken for what it usually is, the release of an object allocated before
// recording began, and dropped. Same-thread events are never out of order, so a create by
// the releasing thread itself (glibc's per-thread cache hands the address straight back)
// does not take it.
struct ParkedRelease {
  uintptr_t addr;
  uint64_t touched;
  uint32_t thread;
  Op op;
  uint8_t merges;  // merges it has waited through
};
constexpr size_t kMaxParked = 64;
ParkedRelease gParked[kMaxParked];
size_t gParkedCount = 0;

// Ages the parked releases at the end of a merge; drops those that waited two.
void ageParked() {
  size_t kept = 0;
  for (size_t i = 0; i < gParkedCount; ++i)
    if (++gParked[i].merges < 2) gParked[kept++] = gParked[i];
  gParkedCount = kept;
}

// Logs (under gHot.lock) a creating call of thread `thread`, stamped t, that returned p, with
// its flags already complete (kFlagAligned, kFlagFailed, kFlagNull, and kRawMark when p was
// prepared), and maps p to its id; then a release parked for p by another thread, if any.
inline void releaseLocked(uint32_t thread, Op op, uint64_t t, uintptr_t p, uint64_t touched);
inline void createLocked(uint32_t thread, Op op, uint8_t flags, uint64_t t, uint64_t size,
                         uintptr_t p, unsigned align) {
  const bool prepared = (flags & kRawMark) != 0;
  flags &= static_cast<uint8_t>(~kRawMark);
  const uint64_t id = appendAs(thread, op, flags, t, size, kNoObject, kNoObject, align);
  if (p != 0 && id < Writer::kRejected) {
    gMap.insert(Entry{p, id, size, makeMeta(kNoObject, false, align)});
    if (size >= gLargeThreshold) [[unlikely]]
      noteLarge(p, size, prepared);
    if (gParkedCount != 0) [[unlikely]] {
      for (size_t i = 0; i < gParkedCount; ++i) {
        if (gParked[i].addr != p || gParked[i].thread == thread) continue;
        const ParkedRelease r = gParked[i];
        gParked[i] = gParked[--gParkedCount];
        releaseLocked(r.thread, r.op, t, p, r.touched);  // stamped t: time never goes back
        break;
      }
    }
  }
}

// Logs (under gHot.lock) a release (free, delete) of p by thread `thread`, stamped t, and
// forgets p; an unknown p is parked (ParkedRelease) and in the end skipped: allocated before
// recording started, or by the recorder.
// touched: the bytes of p's object the program touched, measured before the real free, or
// kNoTouch; when given, a Touch event comes right before the release.
inline void releaseLocked(uint32_t thread, Op op, uint64_t t, uintptr_t p, uint64_t touched) {
  if (p == 0) {
    appendAs(thread, op, kFlagNull, t, 0, kNoObject, kNoObject, 0);
    return;
  }
  Entry e;
  if (!gMap.take(p, &e)) {
    if (gParkedCount == kMaxParked) gParked[0] = gParked[--gParkedCount];  // the oldest goes
    gParked[gParkedCount++] = ParkedRelease{p, touched, thread, op, 0};
    return;
  }
  if (e.size >= gLargeThreshold) [[unlikely]] {
    gLarge.erase(p);
    if (touched != kNoTouch) appendAs(thread, Op::Touch, 0, t, touched, e.id, kNoObject, 0);
  }
  appendAs(thread, op, 0, t, 0, e.id, kNoObject, 0);
}

// ---- per-thread event rings ----------------------------------------------------------------
// With the tsc clock, in a multi-threaded process, the plain create and release calls do not
// take gHot.lock: each thread appends a raw event to a ring of its own, and whoever holds the
// lock merges the rings' published events into the address map and the writer, in time-stamp
// order (drainRings). The lock, the map and the writer then move between cores once per batch
// of events instead of once per event. Everything else (realloc, the reap APIs, threads
// without a ring, the fine and coarse clocks, single-threaded processes) takes the lock, merges
// the rings first, and writes its event directly.
//
// Why time-stamp order gives a correct trace: an address can only be reused after it was
// freed. A release is stamped and published BEFORE the real free; a create is stamped AFTER
// the real malloc returned. So when thread B's malloc returns the address thread A freed, A's
// free was published before B's malloc stamped its event, and has the smaller stamp (the TSC
// is synchronised across CPUs: tscUsable(), and stampTsc() orders the read with the code
// around it). drainRings() writes only events stamped before it started, all of whose
// predecessors of this kind are therefore already published; so a merge never sees B's malloc
// without A's free, and writes the free first.

// One raw event as a thread logs it: op, flags, alignment, TSC stamp, address and size
// (a release with kRawMark: the touched bytes).
struct RawEvent {
  uint64_t tsc;
  uint64_t addr;
  uint64_t size;
  uint8_t op;
  uint8_t flags;
  uint8_t align;
};
// Events per ring: 512 x 32 bytes. A thread whose ring is full merges every ring.
constexpr uint64_t kRingEvents = 512;

// A single-producer ring: the owning thread writes events and publishes them with a release
// store of head; the merger (under gHot.lock) reads them after an acquire load of head and
// hands the slots back with a release store of tail. Rings are mmap memory in one global
// list (under gHot.lock); a thread's ring is drained and recycled when the thread exits.
struct Ring {
  alignas(64) std::atomic<uint64_t> head{0};
  uint64_t cachedTail = 0;  // the producer's last look at tail
  alignas(64) std::atomic<uint64_t> tail{0};
  Ring* next = nullptr;  // the registry list
  uint32_t thread = 0;   // the owner's dense thread index
  bool inUse = false;    // owned by a live thread
  alignas(64) RawEvent events[kRingEvents];
};

// The ring registry and the merge's scratch array (one cursor per ring), under gHot.lock.
struct Cursor {
  Ring* ring;
  uint64_t pos, end;
};
Ring* gRings = nullptr;
size_t gRingCount = 0;
Cursor* gCursors = nullptr;
size_t gCursorCap = 0;
bool gRingsEnabled = false;  // the tsc clock is in use: rings may be used
pthread_key_t gRingKey;      // its destructor drains and recycles an exiting thread's ring

STRATA_TLS Ring* tRing = nullptr;
STRATA_TLS bool tNoRing = false;  // this thread's ring was recycled (it is exiting)

// A create's stamp: the TSC read after every earlier instruction has completed (LFENCE), so
// after the real malloc's loads (which may have found another thread's freed block). A
// release's stamp needs no fence: it is stored into the ring before the real free's own
// stores, x86 makes stores visible in program order, and so any thread that gets the block
// reads its clock after this stamp was taken.
inline uint64_t stampTsc(bool create) {
#if defined(__x86_64__)
  if (create) _mm_lfence();
  return __rdtsc();
#else
  (void)create;
  return 0;
#endif
}

// How many events ahead of the merge the map slots are prefetched, so that their cache misses
// overlap instead of coming one after the other.
constexpr uint64_t kPrefetchAhead = 8;

// Writes every ring's published events stamped before now into the map and the trace, in
// time-stamp order (a k-way merge over the rings), under gHot.lock with the state kOn.
// Events published later, or stamped after the merge began, stay for the next merge.
[[gnu::noinline]] void drainRingsSlow(bool everything = false) {
  // The bound: the TSC read after everything before and before the loads of the heads below
  // (LFENCE on both sides), so every event published before those loads began (and so every
  // release that a create stamped before the bound depends on) is seen. `everything` drains
  // every published event whatever its stamp (a ring about to be recycled).
  const uint64_t bound = everything ? ~uint64_t{0} : stampTsc(true);
#if defined(__x86_64__)
  _mm_lfence();
#endif
  size_t n = 0;
  for (Ring* r = gRings; r != nullptr; r = r->next) {
    const uint64_t end = r->head.load(std::memory_order_acquire);
    const uint64_t pos = r->tail.load(std::memory_order_relaxed);
    if (end == pos || n == gCursorCap) continue;
    gCursors[n++] = Cursor{r, pos, end};
    for (uint64_t i = pos; i < end && i < pos + kPrefetchAhead; ++i)
      gMap.prefetch(r->events[i % kRingEvents].addr);
  }
  while (n != 0) {
    size_t best = 0;
    uint64_t bestTsc = gCursors[0].ring->events[gCursors[0].pos % kRingEvents].tsc;
    for (size_t i = 1; i < n; ++i) {
      const uint64_t t = gCursors[i].ring->events[gCursors[i].pos % kRingEvents].tsc;
      if (t < bestTsc) {
        bestTsc = t;
        best = i;
      }
    }
    if (bestTsc > bound) break;
    Cursor& c = gCursors[best];
    const RawEvent& e = c.ring->events[c.pos % kRingEvents];
    if (c.pos + kPrefetchAhead < c.end)
      gMap.prefetch(c.ring->events[(c.pos + kPrefetchAhead) % kRingEvents].addr);
    const uint64_t t = tscToNs(e.tsc, gTsc.tsc0.load(std::memory_order_relaxed),
                               gTsc.ns0.load(std::memory_order_relaxed),
                               gTsc.mult.load(std::memory_order_relaxed));
    const Op op = static_cast<Op>(e.op);
    if (op == Op::Free || op == Op::Delete) {
      releaseLocked(c.ring->thread, op, t, e.addr, (e.flags & kRawMark) ? e.size : kNoTouch);
    } else {
      createLocked(c.ring->thread, op, e.flags, t, e.size, e.addr, e.align);
    }
    if (++c.pos == c.end) {
      c.ring->tail.store(c.pos, std::memory_order_release);
      c = gCursors[--n];
    }
  }
  for (size_t i = 0; i < n; ++i)
    gCursors[i].ring->tail.store(gCursors[i].pos, std::memory_order_release);
  if (gParkedCount != 0) ageParked();
}
// drainRingsSlow when any ring exists (under gHot.lock, state kOn): every path that writes an
// event directly calls it first, so that the events threads logged before are written first.
inline void drainRings() {
  if (gRings != nullptr) drainRingsSlow();
}

// Drains until ring r (the calling thread's, about to be recycled) is empty. Its events were
// all stamped before this call, but on a machine whose cores' TSCs disagree slightly (virtual
// machines) the bound read on this core can be below a stamp taken on another: then the
// drain is repeated as the clock moves on, and after a while forced, rather than the
// recycling dropping the events.
void drainOwnRing(Ring* r) {
  for (unsigned tries = 0; r->tail.load(std::memory_order_relaxed) !=
                               r->head.load(std::memory_order_relaxed); ++tries) {
    if (tries < 1000) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
      drainRingsSlow();
    } else {
      drainRingsSlow(true);
      break;
    }
  }
}

// Whether the calling thread logs plain creates and releases into its ring.
inline bool ringsUsable() {
  return gRingsEnabled && !__libc_single_threaded && !tNoRing &&
         gTsc.mult.load(std::memory_order_relaxed) != 0;
}

// The calling thread's ring, registered (or recycled from an exited thread) under gHot.lock;
// nullptr when there is none (not recording, or no memory).
[[gnu::noinline]] Ring* registerRing() {
  Guard g;  // pthread_setspecific may allocate
  Locked lock;
  if (gState.load(std::memory_order_relaxed) != kOn) return nullptr;
  Ring* r = gRings;
  while (r != nullptr && r->inUse) r = r->next;
  if (r == nullptr) {
    if (gRingCount == gCursorCap) {
      const size_t cap = gCursorCap == 0 ? 64 : gCursorCap * 2;
      auto* bigger = static_cast<Cursor*>(mapPages(cap * sizeof(Cursor)));
      if (bigger == nullptr) return nullptr;
      if (gCursors != nullptr) ::munmap(gCursors, gCursorCap * sizeof(Cursor));
      gCursors = bigger;
      gCursorCap = cap;
    }
    void* mem = mapPages(sizeof(Ring));
    if (mem == nullptr) return nullptr;
    r = new (mem) Ring;
    r->next = gRings;
    gRings = r;
    ++gRingCount;
  }
  r->inUse = true;
  r->thread = threadIndex();
  r->cachedTail = r->tail.load(std::memory_order_relaxed);
  ::pthread_setspecific(gRingKey, r);
  tRing = r;
  return r;
}

// The ring key's destructor, at thread exit: writes out the thread's events (and every other
// ring's) and recycles its ring; the thread's last calls (TLS teardown) take the lock.
void ringThreadExit(void* p) {
  auto* r = static_cast<Ring*>(p);
  Guard g;
  Locked lock;
  if (gState.load(std::memory_order_relaxed) == kOn) drainOwnRing(r);
  r->tail.store(r->head.load(std::memory_order_relaxed), std::memory_order_relaxed);
  r->inUse = false;
  tRing = nullptr;
  tNoRing = true;
}

// The ring is full: merges every ring under the lock (or, once recording is over, drops the
// thread's events). False when the ring is still full.
// While another thread holds the lock it is usually merging, this ring included (its events
// are stamped before that merge began): the thread waits for room in its ring or for the
// lock, whichever comes first, instead of queueing for the lock to find its ring empty.
[[gnu::noinline]] bool makeRoom(Ring* r) {
  const uint64_t h = r->head.load(std::memory_order_relaxed);
  for (unsigned spins = 0;; ++spins) {
    r->cachedTail = r->tail.load(std::memory_order_acquire);
    if (h - r->cachedTail < kRingEvents / 2) return true;
    if (gHot.lock.tryLock()) break;
    if (spins < 4096) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    } else {
      ::sched_yield();
    }
  }
  {
    const int savedErrno = errno;
    tHoldsLock = true;
    if (gState.load(std::memory_order_relaxed) == kOn) {
      drainRings();
    } else {
      r->tail.store(h, std::memory_order_relaxed);
    }
    tHoldsLock = false;
    gHot.lock.unlock();
    errno = savedErrno;
  }
  r->cachedTail = r->tail.load(std::memory_order_acquire);
  return h - r->cachedTail < kRingEvents;
}

// Logs a create or release into the calling thread's ring, stamped now. False when the thread
// has no ring: the caller takes the lock instead.
inline bool pushEvent(Op op, uint8_t flags, uintptr_t addr, uint64_t size, unsigned align) {
  Ring* r = tRing;
  if (r == nullptr) [[unlikely]] {
    r = registerRing();
    if (r == nullptr) return false;
  }
  const uint64_t h = r->head.load(std::memory_order_relaxed);
  if (h - r->cachedTail >= kRingEvents) [[unlikely]] {
    r->cachedTail = r->tail.load(std::memory_order_acquire);
    if (h - r->cachedTail >= kRingEvents && !makeRoom(r)) return false;
  }
  RawEvent& e = r->events[h % kRingEvents];
  e.tsc = stampTsc(op != Op::Free && op != Op::Delete);
  e.addr = addr;
  e.size = size;
  e.op = static_cast<uint8_t>(op);
  e.flags = flags;
  e.align = static_cast<uint8_t>(align);
  r->head.store(h + 1, std::memory_order_release);
  return true;
}

// Logs a creating call (malloc, calloc, memalign, new, realloc(NULL, n)) that returned p: into
// the thread's ring when it has one, else directly under gHot.lock.
// A large object's interior pages are given back right here, right after the real call
// returned and before the program sees p (see gLarge).
template <Op op>
void recordCreate(uint8_t flags, uint64_t size, void* p, unsigned align) {
  if (size >= gLargeThreshold && p != nullptr) [[unlikely]] {
    if (releasePages(p, 0, size, gPageSize)) flags |= kRawMark;
  }
  if (align != 0 || op == Op::Memalign) flags |= kFlagAligned;
  if (p == nullptr) flags |= kFlagFailed;
  if (ringsUsable() && pushEvent(op, flags, reinterpret_cast<uintptr_t>(p), size, align)) return;
  gMap.prefetch(reinterpret_cast<uintptr_t>(p));
  const uint64_t t = nowNs();
  Locked lock;
  if (gState.load(std::memory_order_relaxed) != kOn) return;
  drainRings();
  createLocked(threadIndex(), op, flags, t, size, reinterpret_cast<uintptr_t>(p), align);
}

// Logs free/delete of p and forgets p. Called BEFORE the real free: once the memory is back in
// the allocator, another thread's malloc may return the same address at once, and its event
// (and map entry) must come after this one, or the map would lose the new object and the
// trace would show the new object's id being freed. touched: see releaseLocked; it travels
// in the ring event's size (with kRawMark), so the Touch and the release are written
// together, one right after the other, whenever the ring is merged.
template <Op op>
void recordRelease(void* p, uint64_t touched) {
  const uint8_t flags = touched != kNoTouch ? kRawMark : 0;
  const uint64_t size = touched != kNoTouch ? touched : 0;
  if (ringsUsable() && pushEvent(op, flags, reinterpret_cast<uintptr_t>(p), size, 0)) return;
  gMap.prefetch(reinterpret_cast<uintptr_t>(p));
  const uint64_t t = nowNs();
  gMap.touch(reinterpret_cast<uintptr_t>(p));
  Locked lock;
  if (gState.load(std::memory_order_relaxed) != kOn) return;
  drainRings();
  releaseLocked(threadIndex(), op, t, reinterpret_cast<uintptr_t>(p), touched);
}

// The release of a block that may hold a large object: looks it up under the lock (after
// merging the rings, which may hold its creation), measures what the program touched outside
// the lock (mincore walks the object's page table; a big object would hold up every other
// thread), then logs the release with it. Nobody else can free or change the object
// meanwhile: it is the caller's to free.
template <Op op>
[[gnu::noinline]] void recordLargeRelease(void* p) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  uint64_t size = 0;
  {
    Locked lock;
    if (gState.load(std::memory_order_relaxed) != kOn) return;
    drainRings();
    Entry e;
    if (gMap.find(addr, &e)) size = preparedSize(addr, e);
  }
  recordRelease<op>(p, size == 0 ? kNoTouch : touchedBytes(p, size, gPageSize));
}

// Whether the block p (from glibc's malloc, or null) is big enough to hold a large object:
// its chunk size, in the word before it (flags in the low 3 bits), is at least the threshold.
// A free reads that word first anyway, so this costs no cache miss; the requested size is
// never larger than the chunk, so no large object is missed, and the few blocks that pass
// without holding one are looked up and let go.
inline bool mayBeLarge(const void* p) {
  if (p == nullptr) return false;
  const size_t chunk = static_cast<const size_t*>(p)[-1] & ~size_t{7};
  return chunk >= gLargeThreshold;
}

// Logs free/delete of p: the plain path, or the large one.
template <Op op>
inline void recordFree(void* p) {
  if (mayBeLarge(p)) [[unlikely]] {
    recordLargeRelease<op>(p);
    return;
  }
  recordRelease<op>(p, kNoTouch);
}

// realloc-like calls: the real call runs under gHot.lock, from before it until its event is
// logged. The real realloc frees the old block when it moves it; without the lock another
// thread could be handed that address and log its malloc before this realloc's event, which
// names the old object: the map would then drop the other thread's object. `call` does the
// real resize; old is non-null. With rings: the merge before the call writes the old block's
// creation (logged by whichever thread made it); the old block leaves the map before the
// call, and the merge after it writes the releases of the new block (published before that
// block was freed) while a malloc that got the old block (stamped after the call began) only
// finds an address the map no longer holds.
// Large objects: what the program touched of the old one is measured before the call (the
// call copies it, or moves its pages), and written as a Touch right before the realloc event
// when the old object ends (the call succeeded, or size 0 freed it). The new block is
// prepared when it is large: its part beyond the old size is unspecified and given back; the
// part up to the old size holds the old contents, and counts as touched wherever the copy
// made it resident (an old object that was large but not prepared leaves the new one
// unprepared: its pages say nothing).
template <class Call>
void* recordResize(Op op, void* old, uint64_t size, Call call) {
  const uint64_t t = nowNs();
  Locked lock;
  const bool on = gState.load(std::memory_order_relaxed) == kOn;
  const uintptr_t oldAddr = reinterpret_cast<uintptr_t>(old);
  Entry e;
  bool known = false;
  uint64_t oldPrepared = 0;     // the old object's size when it was a prepared large object
  uint64_t touched = kNoTouch;  // what the program touched of it
  if (on) {
    drainRings();
    known = gMap.take(oldAddr, &e);
    if (known && e.size >= gLargeThreshold) [[unlikely]] {
      oldPrepared = preparedSize(oldAddr, e);
      gLarge.erase(oldAddr);
      if (oldPrepared != 0) touched = touchedBytes(old, oldPrepared, gPageSize);
    }
  }
  void* q = call();
  lock.keepErrno();
  if (!on) return q;
  const auto newAddr = reinterpret_cast<uintptr_t>(q);
  bool newPrepared = false;
  if (known && q != nullptr && size >= gLargeThreshold) [[unlikely]] {
    newPrepared = (e.size < gLargeThreshold || oldPrepared != 0) &&
                  releasePages(q, e.size, size, gPageSize);
  }
  drainRings();
  if (!known) {  // the old block is unknown: the result is simply a new object
    if (q != nullptr) createLocked(threadIndex(), Op::Malloc, 0, t, size, newAddr, 0);
    return q;
  }
  const uint64_t oldId = e.id;
  if (q == nullptr) {
    if (size != 0) {  // the old block is untouched (realloc(p, 0) freed it)
      append(op, kFlagFailed, t, size, kNoObject, oldId, 0);
      gMap.insert(e);
      if (oldPrepared != 0) gLarge.insert(LargeSlot{oldAddr, oldPrepared});
      return q;
    }
    if (touched != kNoTouch) append(Op::Touch, 0, t, touched, oldId, kNoObject, 0);
    append(op, kFlagFailed, t, size, kNoObject, oldId, 0);
    return q;
  }
  if (touched != kNoTouch) append(Op::Touch, 0, t, touched, oldId, kNoObject, 0);
  const uint64_t id = append(op, 0, t, size, kNoObject, oldId, 0);
  if (id < Writer::kRejected) {
    gMap.insert(Entry{newAddr, id, size, makeMeta(kNoObject, false, 0)});
    if (size >= gLargeThreshold) [[unlikely]]
      noteLarge(newAddr, size, newPrepared);
  }
  return q;
}

// Appends a Touch event for every live prepared large object (under gHot.lock, the rings
// merged): the end of the trace ends them too, and a replay must know what they held.
void touchLiveLarge() {
  const uint64_t t = nowNs();
  const LargeSlot* s = gLarge.slots();
  for (size_t i = 0; i < gLarge.capacity(); ++i) {
    if (s[i].addr == 0) continue;
    Entry e;
    if (!gMap.find(s[i].addr, &e) || preparedSize(s[i].addr, e) == 0) continue;
    const uint64_t touched =
        touchedBytes(reinterpret_cast<const void*>(s[i].addr), s[i].size, gPageSize);
    if (touched != kNoTouch) append(Op::Touch, 0, t, touched, e.id, kNoObject, 0);
  }
}

// Writes the trailer (a clean end) once; later calls in this process pass through.
void finishTrace() {
  if (gState.load(std::memory_order_acquire) != kOn) return;
  if (static_cast<pid_t>(::syscall(SYS_getpid)) != gPid) return;  // a vfork child: not ours
  Locked lock;
  if (gState.load(std::memory_order_relaxed) != kOn) return;
  drainRings();
  touchLiveLarge();
  gWriter->finish();
  gState.store(kDone, std::memory_order_release);
}

// ---- reaps -------------------------------------------------------------------------------

// The id of the live reap whose handle is h, or kNoObject (under gHot.lock).
uint64_t reapId(const void* h) {
  if (h == nullptr) return kNoObject;
  Entry e;
  return (gMap.find(reinterpret_cast<uintptr_t>(h), &e) && metaIsReap(e.meta)) ? e.id : kNoObject;
}

// Logs reap_create/region_create: handle r (nullptr: failed), child of parent (may be null).
void recordReapCreate(const void* parent, void* r) {
  const uint64_t t = nowNs();
  Locked lock;
  if (gState.load(std::memory_order_relaxed) != kOn) return;
  drainRings();
  const uint64_t parentId = reapId(parent);
  uint8_t flags = parentId == kNoObject ? kFlagNull : 0;
  if (r == nullptr) flags |= kFlagFailed;
  const uint64_t id = append(Op::ReapCreate, flags, t, 0, kNoObject, parentId, 0);
  if (r != nullptr && id < Writer::kRejected)
    gMap.insert(Entry{reinterpret_cast<uintptr_t>(r), id, parentId, makeMeta(kNoObject, true, 0)});
}

// Logs an allocation p of size bytes from reap r, under gHot.lock (an unknown reap: a plain
// malloc, so that the object's later release still matches).
void recordReapMallocLocked(uint64_t t, const void* r, uint64_t size, void* p) {
  const uint64_t rid = reapId(r);
  if (rid == kNoObject) {
    if (p == nullptr) return;
    createLocked(threadIndex(), Op::Malloc, 0, t, size, reinterpret_cast<uintptr_t>(p), 0);
    return;
  }
  const uint64_t id = append(Op::ReapMalloc, p == nullptr ? kFlagFailed : 0, t, size, kNoObject,
                             rid, 0);
  if (p != nullptr && id < Writer::kRejected)
    gMap.insert(Entry{reinterpret_cast<uintptr_t>(p), id, size, makeMeta(rid, false, 0)});
}
// recordReapMallocLocked, taking the lock.
void recordReapMalloc(const void* r, uint64_t size, void* p) {
  const uint64_t t = nowNs();
  Locked lock;
  if (gState.load(std::memory_order_relaxed) != kOn) return;
  drainRings();
  recordReapMallocLocked(t, r, size, p);
}

// Logs reap_free(r, p) (under gHot.lock): only when p is a live object of r, as the library
// itself ignores anything else. Before the real call, for the reason recordRelease gives.
void recordReapFreeLocked(uint64_t t, const void* r, void* p) {
  const uint64_t rid = reapId(r);
  if (rid == kNoObject) {
    if (p != nullptr) {  // an object we saw as a plain malloc (its reap was unknown)
      Entry e;
      if (gMap.find(reinterpret_cast<uintptr_t>(p), &e) && !metaIsReap(e.meta) &&
          metaReap(e.meta) == kNoObject)
        releaseLocked(threadIndex(), Op::Free, t, e.addr, kNoTouch);
    }
    return;
  }
  if (p == nullptr) {
    append(Op::ReapFree, kFlagNull, t, 0, kNoObject, rid, 0);
    return;
  }
  Entry e;
  if (!gMap.find(reinterpret_cast<uintptr_t>(p), &e) || metaIsReap(e.meta) ||
      metaReap(e.meta) != rid)
    return;
  append(Op::ReapFree, 0, t, 0, e.id, rid, 0);
  gMap.erase(e.addr);
}
// recordReapFreeLocked, taking the lock.
void recordReapFree(const void* r, void* p) {
  const uint64_t t = nowNs();
  Locked lock;
  if (gState.load(std::memory_order_relaxed) != kOn) return;
  drainRings();
  recordReapFreeLocked(t, r, p);
}

// Logs reap_clear (destroy = false) or reap_destroy of r and forgets every address they
// release: r's objects, its descendant reaps and their objects, and r itself on destroy.
// Called before the real call (see recordRelease). Cost: O(map capacity x tree depth).
void recordReapClear(const void* r, bool destroy) {
  const uint64_t t = nowNs();
  Locked lock;
  if (gState.load(std::memory_order_relaxed) != kOn) return;
  drainRings();
  const uint64_t rid = reapId(r);
  if (rid == kNoObject) return;
  append(destroy ? Op::ReapDestroy : Op::ReapClear, 0, t, 0, kNoObject, rid, 0);
  // The ids of r and its descendants, found by repeated scans for children of the set.
  size_t cap = 64, n = 0;
  uint64_t* set = static_cast<uint64_t*>(mapPages(cap * sizeof(uint64_t)));
  if (set == nullptr) return;
  set[n++] = rid;
  auto inSet = [&](uint64_t id) {
    for (size_t i = 0; i < n; ++i)
      if (set[i] == id) return true;
    return false;
  };
  for (bool changed = true; changed;) {
    changed = false;
    Entry* s = gMap.rareSlots();
    for (size_t i = 0; i < gMap.rareCapacity(); ++i) {
      if (s[i].addr == 0 || !metaIsReap(s[i].meta) || s[i].size == kNoObject) continue;
      if (!inSet(s[i].size) || inSet(s[i].id)) continue;
      if (n == cap) {
        uint64_t* bigger = static_cast<uint64_t*>(mapPages(2 * cap * sizeof(uint64_t)));
        if (bigger == nullptr) break;
        std::copy(set, set + n, bigger);
        ::munmap(set, cap * sizeof(uint64_t));
        set = bigger;
        cap *= 2;
      }
      set[n++] = s[i].id;
      changed = true;
    }
  }
  gMap.retainRare([&](const Entry& e) {
    if (metaIsReap(e.meta)) return !inSet(e.id) || (e.id == rid && !destroy);
    return !inSet(metaReap(e.meta));
  });
  ::munmap(set, cap * sizeof(uint64_t));
}

// The next definition of a Strata API function (the program's libstrata_reap or
// libstrata_region), looked up once; nullptr when the program does not have it.
template <class F>
F realSymbol(std::atomic<void*>& cache, const char* name) {
  void* f = cache.load(std::memory_order_acquire);
  if (f == nullptr) {
    Guard g;  // dlsym may allocate
    f = ::dlsym(RTLD_NEXT, name);
    cache.store(f, std::memory_order_release);
  }
  return reinterpret_cast<F>(f);
}
#define STRATA_REAL(name)                                                          \
  ([]() {                                                                          \
    static std::atomic<void*> cache{nullptr};                                      \
    return realSymbol<decltype(&::name)>(cache, #name);                            \
  }())

// ---- start, fork, exit, signals ------------------------------------------------------------

// Opens this process's trace file: STRATA_TRACE_FILE in the process `strata record` started
// (STRATA_TRACE_PID), FILE.<pid> in any other. False (after one warning) when it cannot.
bool openTrace() {
  char path[sizeof gPath + 32];
  if (gPid == gOwnerPid) {
    ::snprintf(path, sizeof path, "%s", gPath);
  } else {
    ::snprintf(path, sizeof path, "%s.%ld", gPath, static_cast<long>(gPid));
  }
  gFd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (gFd < 0) {
    char msg[sizeof path + 160];
    const int len = ::snprintf(msg, sizeof msg,
                               "strata-record: cannot open trace file %s: %s; running the "
                               "program unrecorded\n",
                               path, ::strerror(errno));
    if (len > 0) {
      const ssize_t ignored = ::write(2, msg, std::min(static_cast<size_t>(len), sizeof msg - 1));
      (void)ignored;
    }
    return false;
  }
  return true;
}

// Starts a fresh trace for this process (gPid) on gFd: new writer, time base and thread
// numbering; the trace begins with the program chunk (which process, started by which, runs
// which program), so that the traces of one run can be told apart and put in order.
void startWriter() {
  gHot.startNs = nowNs();
  gHot.lastNs = gHot.startNs;
  gHot.nextThread = 0;
  ++gHot.generation;
  gWriter = new (gWriterStorage) Writer(gBuffer, kBufferBytes, FdSink{gFd});
  char exe[strata::trace::kMaxProgramPath + 1];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = '\0';
  gWriter->program(static_cast<uint64_t>(gPid), static_cast<uint64_t>(::getppid()), exe);
}

// Fatal signal handler: writes out the complete events (not the trailer: the trace is valid
// and marked incomplete), then restores the default action and re-raises, so the program
// dies of the same signal. Does nothing to the trace when this thread was inside the
// recorder (its state may be half updated) or when another thread keeps the lock for more
// than ~0.2 s; never blocks.
void onFatalSignal(int sig) {
  const int savedErrno = errno;
  if (gState.load(std::memory_order_acquire) == kOn && !tHoldsLock &&
      static_cast<pid_t>(::syscall(SYS_getpid)) == gPid) {
    bool locked = false;
    for (int i = 0; i < 2000 && !(locked = gHot.lock.tryLock()); ++i) {
      struct timespec pause{0, 100000};
      ::nanosleep(&pause, nullptr);
    }
    if (locked) {
      drainRings();
      gWriter->flush();
      gHot.lock.unlock();
    }
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);  // blocked while the handler runs: delivered, with the default action, on return
  errno = savedErrno;
}

// Every signal whose default action ends the process (core or terminate), so that `prog |
// head` (SIGPIPE), a timer (SIGALRM) or a resource limit still leaves the trace so far.
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS,  SIGFPE,  SIGILL,  SIGABRT,   SIGTRAP,
                                 SIGSYS,  SIGTERM, SIGINT,  SIGHUP,  SIGQUIT,   SIGPIPE,
                                 SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM};

// Installs onFatalSignal for each fatal signal the program left at its default action (a
// program's own handler, or an ignored signal, stays as it is).
void installSignalHandlers() {
  for (int sig : kFatalSignals) {
    struct sigaction old;
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL ||
        (old.sa_flags & SA_SIGINFO))
      continue;
    struct sigaction sa;
    ::memset(&sa, 0, sizeof sa);
    sa.sa_handler = onFatalSignal;
    ::sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_ONSTACK;
    ::sigaction(sig, &sa, nullptr);
  }
}

// fork, before: holds gHot.lock across fork (so the child's copy of the map and writer is
// consistent) and writes out the buffer, so the child, which starts a trace of its own,
// cannot write the parent's pending events a second time.
void beforeFork() {
  if (gState.load(std::memory_order_acquire) != kOn) return;
  gHot.lock.lock();
  tHoldsLock = true;
  drainRings();
  gWriter->flush();
}

// fork, in the parent: lets go of the lock.
void afterForkParent() {
  if (!tHoldsLock) return;
  tHoldsLock = false;
  gHot.lock.unlock();
}

// Re-creates the live objects the child inherited, at the start of its trace, so that the
// child's trace is self-contained: reaps first, parents before children (in order of their
// old ids, as a parent is always created before its child), then every object, and each map
// entry takes its new id.
void recreateLiveObjects() {
  // Every reap is a rare entry: the side table's scan finds them all.
  const size_t cap = gMap.rareCapacity();
  Entry* s = gMap.rareSlots();
  size_t reaps = 0;
  for (size_t i = 0; i < cap; ++i)
    if (s[i].addr != 0 && metaIsReap(s[i].meta)) ++reaps;
  struct Renamed {
    uint64_t oldId, newId;
  };
  Renamed* ren = nullptr;
  if (reaps != 0) {
    ren = static_cast<Renamed*>(mapPages(reaps * sizeof(Renamed)));
    if (ren == nullptr) return;
  }
  size_t k = 0;
  for (size_t i = 0; i < cap; ++i)
    if (s[i].addr != 0 && metaIsReap(s[i].meta)) ren[k++] = Renamed{s[i].id, kNoObject};
  std::sort(ren, ren + reaps, [](const Renamed& a, const Renamed& b) { return a.oldId < b.oldId; });
  auto renamed = [&](uint64_t oldId) -> uint64_t {
    if (oldId == kNoObject) return kNoObject;
    const Renamed* it = std::lower_bound(ren, ren + reaps, oldId,
                                         [](const Renamed& a, uint64_t v) { return a.oldId < v; });
    return (it != ren + reaps && it->oldId == oldId) ? it->newId : kNoObject;
  };
  const uint64_t t = nowNs();
  // Reaps, in old-id order: each one's parent already has its new id.
  for (size_t r = 0; r < reaps; ++r) {
    for (size_t i = 0; i < cap; ++i) {
      if (s[i].addr == 0 || !metaIsReap(s[i].meta) || s[i].id != ren[r].oldId) continue;
      const uint64_t parent = renamed(s[i].size);
      ren[r].newId = append(Op::ReapCreate, parent == kNoObject ? kFlagNull : 0, t, 0, kNoObject,
                            parent, 0);
      break;
    }
  }
  gMap.forEach([&](Entry& e) {
    if (metaIsReap(e.meta)) {
      e.size = renamed(e.size);
      e.id = renamed(e.id);
      return;
    }
    const unsigned align = metaAlign(e.meta);
    const uint64_t reap = renamed(metaReap(e.meta));
    if (reap != kNoObject) {
      e.id = append(Op::ReapMalloc, 0, t, e.size, kNoObject, reap, 0);
    } else {
      e.id = append(align != 0 ? Op::Memalign : Op::Malloc, align != 0 ? kFlagAligned : 0, t,
                    e.size, kNoObject, kNoObject, align);
    }
    e.meta = makeMeta(reap, false, align);
  });
  if (ren != nullptr) ::munmap(ren, reaps * sizeof(Renamed));
}

// fork, in the child: the lock is new and free, the trace is FILE.<pid> of its own, starting
// with the objects it inherited. If the file cannot be opened the child runs unrecorded.
void afterForkChild() {
  gHot.lock.reset();
  tHoldsLock = false;
  // The other threads' rings belong to threads the child does not have: emptied and free for
  // reuse (the parent writes their events). The forking thread keeps its ring, emptied too.
  for (Ring* r = gRings; r != nullptr; r = r->next) {
    r->head.store(0, std::memory_order_relaxed);
    r->tail.store(0, std::memory_order_relaxed);
    r->cachedTail = 0;
    r->inUse = r == tRing;
  }
  gParkedCount = 0;  // releases the parent merged are the parent's trace's business
  if (gState.load(std::memory_order_acquire) != kOn) return;
  Guard g;
  ::close(gFd);
  gPid = static_cast<pid_t>(::syscall(SYS_getpid));
  if (!openTrace()) {
    gState.store(kOff, std::memory_order_release);
    return;
  }
  startWriter();
  if (tRing != nullptr) tRing->thread = threadIndex();
  recreateLiveObjects();
}

// ---- threads --------------------------------------------------------------------------------

// A wrapped thread starts (threads.hpp): its first event, ThreadStart naming its creator.
// The rings are merged first, so that the creator's events before pthread_create come
// before it; the thread's own ring events are stamped after it.
void threadStarted(uint32_t creator) {
  if (!recording()) return;
  const uint64_t t = nowNs();
  Locked lock;
  if (gState.load(std::memory_order_relaxed) != kOn) return;
  drainRings();
  append(Op::ThreadStart, 0, t, 0, kNoObject, creator, 0);
}

// A wrapped thread ends (threads.hpp): its last event, ThreadEnd, after everything it logged
// before (its ring is merged, and recycled if the ring key's destructor has not done so yet).
// Whatever the thread does afterwards (a key destructor of the last round that runs after
// this one, the C library's own per-thread clean-up) is left unrecorded: the recursion guard
// stays raised until the thread is gone.
void threadEnded() {
  if (recording()) {
    const uint64_t t = nowNs();
    Guard g;  // pthread_setspecific may allocate
    Locked lock;
    if (gState.load(std::memory_order_relaxed) == kOn) {
      if (tRing != nullptr) drainOwnRing(tRing);
      else drainRings();
      append(Op::ThreadEnd, 0, t, 0, kNoObject, kNoObject, 0);
    }
    if (Ring* r = tRing) {
      r->tail.store(r->head.load(std::memory_order_relaxed), std::memory_order_relaxed);
      r->inUse = false;
      tRing = nullptr;
      tNoRing = true;
      ::pthread_setspecific(gRingKey, nullptr);
    }
  }
  ++tGuard;
}

// The size from which objects are large (see gLarge): two pages, or STRATA_TRACE_TOUCH_MIN
// bytes when that is set to a larger number, or never when it is "off". Measuring costs the
// program a page fault per page it touches of every large object (the pages it would have
// reused resident were given back), so a program with many large short-lived objects that
// it writes whole records faster with a larger threshold or none.
uint64_t largeThreshold(const char* setting) {
  const uint64_t least = 2 * uint64_t{gPageSize};
  if (setting == nullptr || setting[0] == '\0') return least;
  if (::strcmp(setting, "off") == 0) return ~uint64_t{0};
  char* end = nullptr;
  const unsigned long long v = ::strtoull(setting, &end, 10);
  if (end == setting || *end != '\0') {
    static const char kMsg[] =
        "strata-record: STRATA_TRACE_TOUCH_MIN is not a number of bytes or 'off'; using two "
        "pages\n";
    const ssize_t ignored = ::write(2, kMsg, sizeof kMsg - 1);
    (void)ignored;
    return least;
  }
  return std::max<uint64_t>(v, least);
}

// Starts recording when STRATA_TRACE_FILE is set: runs as the first constructor of this
// library, which the dynamic loader initialises before the program's own libraries.
// Allocations made before this point (by the C and C++ runtimes) are not recorded; freeing
// them later is not recorded either.
__attribute__((constructor(101))) void startRecorder() {
  Guard g;
  const char* file = ::getenv("STRATA_TRACE_FILE");
  if (file == nullptr || file[0] == '\0') return;
  if (::strlen(file) >= sizeof gPath) {
    static const char kMsg[] = "strata-record: STRATA_TRACE_FILE is too long; not recording\n";
    const ssize_t ignored = ::write(2, kMsg, sizeof kMsg - 1);
    (void)ignored;
    return;
  }
  ::strcpy(gPath, file);
  const char* clock = ::getenv("STRATA_TRACE_CLOCK");
  if (clock != nullptr && ::strcmp(clock, "coarse") == 0) {
    gClockKind = kClockCoarse;
  } else if (clock != nullptr && ::strcmp(clock, "fine") == 0) {
    gClockKind = kClockFine;
  } else if (tscUsable()) {  // unset, "tsc" or anything else: tsc where it can be trusted
    gClockKind = kClockTsc;
    startTscClock();
    gRingsEnabled = ::pthread_key_create(&gRingKey, ringThreadExit) == 0;
  }
  gPid = static_cast<pid_t>(::syscall(SYS_getpid));
  // STRATA_TRACE_PID names the process that writes FILE itself; when recording without
  // `strata record`, this first process takes that role and tells its descendants.
  const char* owner = ::getenv("STRATA_TRACE_PID");
  if (owner != nullptr && owner[0] != '\0') {
    gOwnerPid = static_cast<pid_t>(::strtol(owner, nullptr, 10));
  } else {
    gOwnerPid = gPid;
    char buf[24];
    ::snprintf(buf, sizeof buf, "%ld", static_cast<long>(gPid));
    ::setenv("STRATA_TRACE_PID", buf, 1);
  }
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page > 0 && (page & (page - 1)) == 0) gPageSize = static_cast<size_t>(page);
  gBuffer = static_cast<unsigned char*>(mapPages(kBufferBytes));
  if (gBuffer == nullptr || !gMap.init(kInitialMapSlots) || !gLarge.init(64) || !openTrace())
    return;
  gLargeThreshold = largeThreshold(::getenv("STRATA_TRACE_TOUCH_MIN"));
  strata::record::initThreadHooks({threadStarted, threadEnded});
  startWriter();
  installSignalHandlers();
  ::pthread_atfork(beforeFork, afterForkParent, afterForkChild);
  gState.store(kOn, std::memory_order_release);
}

// Normal exit: runs from the dynamic loader's finalisation, after every atexit handler and
// the program's static destructors, as the last destructor of this library. Writes the
// trailer; what is freed later (by libraries finalised after this one) is not recorded.
__attribute__((destructor(101))) void stopRecorder() { finishTrace(); }

// Throwing operator new: asks the new_handler again until the allocation succeeds, the
// handler throws, or there is none (then std::bad_alloc), like the standard one. Records New
// (ALIGNED when align is not 0), or New FAILED once when it gives up.
void* recordedNew(size_t n, size_t align) {
  for (;;) {
    void* p = align == 0 ? __libc_malloc(n) : __libc_memalign(align, n);
    if (p != nullptr) {
      if (recording()) recordCreate<Op::New>(0, n, p, alignLog2(align));
      return p;
    }
    std::new_handler h = std::get_new_handler();
    if (h == nullptr) {
      if (recording()) recordCreate<Op::New>(0, n, nullptr, alignLog2(align));
      throw std::bad_alloc();
    }
    try {
      h();
    } catch (...) {
      if (recording()) recordCreate<Op::New>(0, n, nullptr, alignLog2(align));
      throw;
    }
  }
}

// Nothrow operator new: the same loop, nullptr instead of an exception (and no exception
// thrown inside when there is no handler, so the trace shows no bad_alloc allocation).
void* recordedNewNothrow(size_t n, size_t align) noexcept {
  for (;;) {
    void* p = align == 0 ? __libc_malloc(n) : __libc_memalign(align, n);
    std::new_handler h = p != nullptr ? nullptr : std::get_new_handler();
    bool failed = p == nullptr && h == nullptr;
    if (p == nullptr && h != nullptr) {
      try {
        h();
      } catch (...) {
        failed = true;
      }
    }
    if (p != nullptr || failed) {
      if (recording()) recordCreate<Op::New>(0, n, p, alignLog2(align));
      return p;
    }
  }
}

// operator delete, every form.
void recordedDelete(void* p) noexcept {
  if (recording()) recordFree<Op::Delete>(p);
  __libc_free(p);
}

}  // namespace

// ---- the C allocation functions ------------------------------------------------------------

STRATA_EXPORT void* malloc(size_t n) {
  void* p = __libc_malloc(n);
  if (recording()) recordCreate<Op::Malloc>(0, n, p, 0);
  return p;
}

STRATA_EXPORT void free(void* p) {
  if (recording()) recordFree<Op::Free>(p);
  __libc_free(p);
}

STRATA_EXPORT void* calloc(size_t nmemb, size_t size) {
  void* p = __libc_calloc(nmemb, size);
  if (recording()) {
    size_t total;
    if (__builtin_mul_overflow(nmemb, size, &total)) total = SIZE_MAX;
    recordCreate<Op::Calloc>(0, total, p, 0);
  }
  return p;
}

STRATA_EXPORT void* realloc(void* p, size_t n) {
  if (!recording()) return __libc_realloc(p, n);
  if (p == nullptr) {
    void* q = __libc_realloc(nullptr, n);
    recordCreate<Op::Realloc>(kFlagNull, n, q, 0);
    return q;
  }
  return recordResize(Op::Realloc, p, n, [p, n] { return __libc_realloc(p, n); });
}

STRATA_EXPORT void* reallocarray(void* p, size_t nmemb, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(nmemb, size, &total)) {
    if (recording()) {
      if (p == nullptr) {
        recordCreate<Op::Realloc>(kFlagNull, SIZE_MAX, nullptr, 0);
      } else {
        recordResize(Op::Realloc, p, SIZE_MAX, [] { return static_cast<void*>(nullptr); });
      }
    }
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(p, total);
}

STRATA_EXPORT void* memalign(size_t align, size_t n) {
  void* p = __libc_memalign(align, n);
  if (recording()) recordCreate<Op::Memalign>(0, n, p, alignLog2(align));
  return p;
}

STRATA_EXPORT int posix_memalign(void** out, size_t align, size_t n) {
  if (align == 0 || (align & (align - 1)) != 0 || align % sizeof(void*) != 0) return EINVAL;
  const int savedErrno = errno;
  void* p = __libc_memalign(align, n);
  errno = savedErrno;
  if (recording()) recordCreate<Op::Memalign>(0, n, p, alignLog2(align));
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

STRATA_EXPORT void* aligned_alloc(size_t align, size_t n) {
  if (align == 0 || (align & (align - 1)) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  return memalign(align, n);
}

namespace {
// log2 of the page size: the alignment valloc and pvalloc give.
unsigned pageAlignLog2() { return alignLog2(static_cast<size_t>(::getpagesize())); }
}  // namespace

STRATA_EXPORT void* valloc(size_t n) {
  void* p = __libc_valloc(n);
  if (recording()) recordCreate<Op::Memalign>(0, n, p, pageAlignLog2());
  return p;
}

STRATA_EXPORT void* pvalloc(size_t n) {
  void* p = __libc_pvalloc(n);
  if (recording()) recordCreate<Op::Memalign>(0, n, p, pageAlignLog2());
  return p;
}

// _exit and _Exit: the trace gets its trailer (everything was recorded), then the process
// ends at once, as the real ones do.
STRATA_EXPORT void _exit(int status) {
  finishTrace();
  for (;;) ::syscall(SYS_exit_group, status);
}
STRATA_EXPORT void _Exit(int status) {
  finishTrace();
  for (;;) ::syscall(SYS_exit_group, status);
}

// pthread_create: the new thread runs through the wrapper of threads.hpp, which reports its
// start (ThreadStart, naming this thread, which gets its index here if it has none) and its
// end (ThreadEnd). The real function is the next definition (the C library's).
STRATA_EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                 void* (*start)(void*), void* arg) noexcept {
  static std::atomic<void*> cache{nullptr};
  const auto real = realSymbol<strata::record::PthreadCreate>(cache, "pthread_create");
  if (real == nullptr) return EAGAIN;
  if (!recording()) return real(thread, attr, start, arg);
  uint32_t creator;
  {
    Locked lock;
    creator = threadIndex();
  }
  return strata::record::createThread(real, thread, attr, start, arg, creator);
}

// quick_exit: the trailer is written, then the real quick_exit runs the at_quick_exit
// handlers (what they allocate is not recorded) and ends the process through the C library's
// internal _exit, which the _exit above does not see.
STRATA_EXPORT void quick_exit(int status) noexcept {
  finishTrace();
  void (*real)(int);
  {
    Guard g;
    real = reinterpret_cast<void (*)(int)>(::dlsym(RTLD_NEXT, "quick_exit"));
  }
  if (real != nullptr) real(status);
  for (;;) ::syscall(SYS_exit_group, status);
}

// ---- operator new / delete ------------------------------------------------------------------

#define STRATA_CXX_EXPORT __attribute__((visibility("default")))

STRATA_CXX_EXPORT void* operator new(size_t n) { return recordedNew(n, 0); }
STRATA_CXX_EXPORT void* operator new[](size_t n) { return recordedNew(n, 0); }
STRATA_CXX_EXPORT void* operator new(size_t n, const std::nothrow_t&) noexcept {
  return recordedNewNothrow(n, 0);
}
STRATA_CXX_EXPORT void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  return recordedNewNothrow(n, 0);
}
STRATA_CXX_EXPORT void* operator new(size_t n, std::align_val_t a) {
  return recordedNew(n, static_cast<size_t>(a));
}
STRATA_CXX_EXPORT void* operator new[](size_t n, std::align_val_t a) {
  return recordedNew(n, static_cast<size_t>(a));
}
STRATA_CXX_EXPORT void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return recordedNewNothrow(n, static_cast<size_t>(a));
}
STRATA_CXX_EXPORT void* operator new[](size_t n, std::align_val_t a,
                                       const std::nothrow_t&) noexcept {
  return recordedNewNothrow(n, static_cast<size_t>(a));
}

STRATA_CXX_EXPORT void operator delete(void* p) noexcept { recordedDelete(p); }
STRATA_CXX_EXPORT void operator delete[](void* p) noexcept { recordedDelete(p); }
STRATA_CXX_EXPORT void operator delete(void* p, size_t) noexcept { recordedDelete(p); }
STRATA_CXX_EXPORT void operator delete[](void* p, size_t) noexcept { recordedDelete(p); }
STRATA_CXX_EXPORT void operator delete(void* p, const std::nothrow_t&) noexcept {
  recordedDelete(p);
}
STRATA_CXX_EXPORT void operator delete[](void* p, const std::nothrow_t&) noexcept {
  recordedDelete(p);
}
STRATA_CXX_EXPORT void operator delete(void* p, std::align_val_t) noexcept { recordedDelete(p); }
STRATA_CXX_EXPORT void operator delete[](void* p, std::align_val_t) noexcept { recordedDelete(p); }
STRATA_CXX_EXPORT void operator delete(void* p, size_t, std::align_val_t) noexcept {
  recordedDelete(p);
}
STRATA_CXX_EXPORT void operator delete[](void* p, size_t, std::align_val_t) noexcept {
  recordedDelete(p);
}
STRATA_CXX_EXPORT void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  recordedDelete(p);
}
STRATA_CXX_EXPORT void operator delete[](void* p, std::align_val_t,
                                         const std::nothrow_t&) noexcept {
  recordedDelete(p);
}

// ---- <strata/reap.h> and <strata/region.h> ----------------------------------------------------
// Declared here rather than included: the recorder must not depend on those libraries, only
// forward to them when the program has them. Each call runs the real function under the
// recursion guard (the library's own mallocs are not the program's) and logs one reap event.

extern "C" {
struct strata_reap;
struct strata_region;
strata_reap* reap_create(strata_reap* parent);
void* reap_malloc(strata_reap* r, size_t size);
void* reap_calloc(strata_reap* r, size_t count, size_t size);
void* reap_realloc(strata_reap* r, void* p, size_t size);
void reap_free(strata_reap* r, void* p);
void reap_clear(strata_reap* r);
void reap_destroy(strata_reap* r);
void reapCreate(void** reap, void** parent);
void reapDestroy(void** reap);
void reapFreeAll(void** reap);
void* reapMalloc(void** reap, size_t size);
void reapFree(void** reap, void* p);
strata_region* region_create(strata_region* parent);
void* region_alloc(strata_region* r, size_t size);
void* region_calloc(strata_region* r, size_t count, size_t size);
char* region_strdup(strata_region* r, const char* s);
void region_clear(strata_region* r);
void region_destroy(strata_region* r);
}

namespace {
// count * size, saturated (an overflowing request is recorded as SIZE_MAX).
uint64_t product(size_t count, size_t size) {
  size_t total;
  return __builtin_mul_overflow(count, size, &total) ? SIZE_MAX : total;
}

// Calls a forwarded Strata API function with the recursion guard raised: what the library
// allocates inside it is its own business, not the program's.
template <class Real, class... Args>
auto guarded(Real real, Args... args) {
  Guard g;
  return real(args...);
}

// reap_create / region_create: the real call, then (when this call is recorded) a
// reap_create event naming the parent.
template <class Handle, class Real>
Handle* forwardCreate(Real real, Handle* parent) {
  const bool rec = recording();
  Handle* r = guarded(real, parent);
  if (rec) recordReapCreate(parent, r);
  return r;
}

// An allocation from reap or region `reap` (reap_malloc, region_alloc, ...): the real call,
// then (when this call is recorded) a reap_malloc event of `size` bytes.
template <class Result, class Real, class... Args>
Result forwardAlloc(const void* reap, uint64_t size, Real real, Args... args) {
  const bool rec = recording();
  Result p = guarded(real, args...);
  if (rec) recordReapMalloc(reap, size, p);
  return p;
}
}  // namespace

STRATA_EXPORT strata_reap* reap_create(strata_reap* parent) {
  auto real = STRATA_REAL(reap_create);
  if (real == nullptr) {
    errno = ENOSYS;
    return nullptr;
  }
  return forwardCreate(real, parent);
}

STRATA_EXPORT void* reap_malloc(strata_reap* r, size_t size) {
  auto real = STRATA_REAL(reap_malloc);
  if (real == nullptr) return nullptr;
  return forwardAlloc<void*>(r, size, real, r, size);
}

STRATA_EXPORT void* reap_calloc(strata_reap* r, size_t count, size_t size) {
  auto real = STRATA_REAL(reap_calloc);
  if (real == nullptr) return nullptr;
  return forwardAlloc<void*>(r, product(count, size), real, r, count, size);
}

// reap_realloc: recorded as reap_malloc of the new object then reap_free of the old (the
// format has no reap_realloc), under the lock across the real call like realloc.
STRATA_EXPORT void* reap_realloc(strata_reap* r, void* p, size_t size) {
  auto real = STRATA_REAL(reap_realloc);
  if (real == nullptr) return nullptr;
  if (!recording()) return real(r, p, size);
  const uint64_t t = nowNs();
  Locked lock;
  // As in recordResize: merge, take the old object out of the map, call, merge again, log.
  const bool on = gState.load(std::memory_order_relaxed) == kOn;
  uint64_t rid = kNoObject;
  Entry e;
  bool matches = false;
  if (on) {
    drainRings();
    rid = reapId(r);
    matches = rid != kNoObject && p != nullptr && gMap.find(reinterpret_cast<uintptr_t>(p), &e) &&
              !metaIsReap(e.meta) && metaReap(e.meta) == rid;
    if (matches) gMap.erase(e.addr);
  }
  void* q = guarded(real, r, p, size);
  lock.keepErrno();
  if (!on) return q;
  drainRings();
  if (!matches) {
    // reap_realloc(r, NULL, n), or p unknown: at most a new object.
    if (p == nullptr || q != nullptr) recordReapMallocLocked(t, r, size, q);
    return q;
  }
  const uint64_t oldId = e.id;
  if (size == 0) {  // frees p
    append(Op::ReapFree, 0, t, 0, oldId, rid, 0);
    return q;
  }
  if (q == nullptr) {  // failed: p is untouched
    append(Op::ReapMalloc, kFlagFailed, t, size, kNoObject, rid, 0);
    gMap.insert(e);
    return q;
  }
  const uint64_t id = append(Op::ReapMalloc, 0, t, size, kNoObject, rid, 0);
  append(Op::ReapFree, 0, t, 0, oldId, rid, 0);
  if (id < Writer::kRejected)
    gMap.insert(Entry{reinterpret_cast<uintptr_t>(q), id, size, makeMeta(rid, false, 0)});
  return q;
}

STRATA_EXPORT void reap_free(strata_reap* r, void* p) {
  auto real = STRATA_REAL(reap_free);
  if (real == nullptr) return;
  if (recording()) recordReapFree(r, p);
  Guard g;
  real(r, p);
}

STRATA_EXPORT void reap_clear(strata_reap* r) {
  auto real = STRATA_REAL(reap_clear);
  if (real == nullptr) return;
  if (recording()) recordReapClear(r, false);
  Guard g;
  real(r);
}

STRATA_EXPORT void reap_destroy(strata_reap* r) {
  auto real = STRATA_REAL(reap_destroy);
  if (real == nullptr) return;
  if (recording()) recordReapClear(r, true);
  Guard g;
  real(r);
}

STRATA_EXPORT void reapCreate(void** reap, void** parent) {
  auto real = STRATA_REAL(reapCreate);
  if (real == nullptr) {
    if (reap != nullptr) *reap = nullptr;
    return;
  }
  if (!recording()) return real(reap, parent);
  const void* parentHandle = (parent != nullptr) ? *parent : nullptr;
  guarded(real, reap, parent);
  recordReapCreate(parentHandle, reap != nullptr ? *reap : nullptr);
}

STRATA_EXPORT void reapDestroy(void** reap) {
  auto real = STRATA_REAL(reapDestroy);
  if (real == nullptr) return;
  if (recording() && reap != nullptr) recordReapClear(*reap, true);
  Guard g;
  real(reap);
}

STRATA_EXPORT void reapFreeAll(void** reap) {
  auto real = STRATA_REAL(reapFreeAll);
  if (real == nullptr) return;
  if (recording() && reap != nullptr) recordReapClear(*reap, false);
  Guard g;
  real(reap);
}

STRATA_EXPORT void* reapMalloc(void** reap, size_t size) {
  auto real = STRATA_REAL(reapMalloc);
  if (real == nullptr) return nullptr;
  return forwardAlloc<void*>(reap != nullptr ? *reap : nullptr, size, real, reap, size);
}

STRATA_EXPORT void reapFree(void** reap, void* p) {
  auto real = STRATA_REAL(reapFree);
  if (real == nullptr) return;
  if (recording() && reap != nullptr) recordReapFree(*reap, p);
  Guard g;
  real(reap, p);
}

STRATA_EXPORT strata_region* region_create(strata_region* parent) {
  auto real = STRATA_REAL(region_create);
  if (real == nullptr) {
    errno = ENOSYS;
    return nullptr;
  }
  return forwardCreate(real, parent);
}

STRATA_EXPORT void* region_alloc(strata_region* r, size_t size) {
  auto real = STRATA_REAL(region_alloc);
  if (real == nullptr) return nullptr;
  return forwardAlloc<void*>(r, size, real, r, size);
}

STRATA_EXPORT void* region_calloc(strata_region* r, size_t count, size_t size) {
  auto real = STRATA_REAL(region_calloc);
  if (real == nullptr) return nullptr;
  return forwardAlloc<void*>(r, product(count, size), real, r, count, size);
}

STRATA_EXPORT char* region_strdup(strata_region* r, const char* s) {
  auto real = STRATA_REAL(region_strdup);
  if (real == nullptr) return nullptr;
  return forwardAlloc<char*>(r, s != nullptr ? ::strlen(s) + 1 : 0, real, r, s);
}

STRATA_EXPORT void region_clear(strata_region* r) {
  auto real = STRATA_REAL(region_clear);
  if (real == nullptr) return;
  if (recording()) recordReapClear(r, false);
  Guard g;
  real(r);
}

STRATA_EXPORT void region_destroy(strata_region* r) {
  auto real = STRATA_REAL(region_destroy);
  if (real == nullptr) return;
  if (recording()) recordReapClear(r, true);
  Guard g;
  real(r);
}
