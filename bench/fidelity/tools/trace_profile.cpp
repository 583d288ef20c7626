// trace_profile TRACE: an investigation aid (docs/toolkit/fidelity.md). Prints what a replay's
// memory figure hinges on and `strata stats` does not split out: calloc'ed bytes (which an
// allocator may leave unwritten on fresh pages), large blocks (mapped on their own by most
// allocators; their untouched pages cost nothing live), realloc growth, and the live peak
// of each. Build from the repository root:
//   g++ -std=c++20 -O2 -Itoolkit/trace/include -o trace_profile bench/fidelity/tools/trace_profile.cpp
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <unordered_map>

#include "strata/trace/reader.hpp"

using namespace strata::trace;

namespace {

constexpr std::uint64_t kLarge = 128 * 1024;
constexpr double kMiB = 1024.0 * 1024.0;

struct Live {
  std::uint64_t size;
  bool calloc;
};

struct Tally {
  std::uint64_t count = 0, bytes = 0, live = 0, peak = 0;
  void add(std::uint64_t n) { ++count, bytes += n, live += n, peak = live > peak ? live : peak; }
  void remove(std::uint64_t n) { live -= n; }
  void print(const char* what) const {
    std::printf("  %-28s %10llu  %10.1f MiB total  %8.1f MiB peak live\n", what,
                static_cast<unsigned long long>(count), bytes / kMiB, peak / kMiB);
  }
};

// What the trace's events add up to: the tallies, the realloc and touch counts, and the
// calloc size histogram, kept up to date with the live objects.
class Profile {
 public:
  void event(const Event& e) {
    switch (e.op) {
      case Op::Free: case Op::Delete: case Op::ReapFree:
        drop(e.object);
        break;
      case Op::Touch:
        touch(e);
        break;
      case Op::Realloc:
        resize(e);
        allocate(e);
        break;
      case Op::Malloc: case Op::Calloc: case Op::Memalign: case Op::New: case Op::ReapMalloc:
        allocate(e);
        break;
      default:
        break;
    }
  }

  void print(const char* trace) const {
    std::printf("%s\n", trace);
    all_.print("all allocations");
    callocs_.print("calloc");
    smallCallocs_.print("calloc < 128 KiB");
    largeCallocs_.print("calloc >= 128 KiB");
    large_.print("any block >= 128 KiB");
    std::printf("  realloc: %llu grow (%.1f MiB grown), %llu shrink or same\n",
                static_cast<unsigned long long>(reallocGrow_), reallocBytesGrown_ / kMiB,
                static_cast<unsigned long long>(reallocShrink_));
    std::printf("  touch events: %llu, %.1f MiB touched of %.1f MiB\n",
                static_cast<unsigned long long>(touches_), touchBytes_ / kMiB, touchOf_ / kMiB);
    std::printf("  calloc sizes (log2 buckets):\n");
    for (int b = 0; b < 40; ++b)
      if (callocHist_[b] != 0)
        std::printf("    >= %12llu B  %10llu\n", 1ull << b,
                    static_cast<unsigned long long>(callocHist_[b]));
  }

 private:
  // A new object: malloc, calloc, memalign, new, or the result of a realloc.
  void allocate(const Event& e) {
    const bool isCalloc = e.op == Op::Calloc;
    live_[e.object] = {e.size, isCalloc};
    all_.add(e.size);
    if (isCalloc) {
      callocs_.add(e.size);
      (e.size >= kLarge ? largeCallocs_ : smallCallocs_).add(e.size);
      int b = 0;
      while (b < 39 && (std::uint64_t{1} << (b + 1)) <= e.size) ++b;
      ++callocHist_[b];
    }
    if (e.size >= kLarge) large_.add(e.size);
  }

  // The end of an object's life (unknown objects are ignored).
  void drop(std::uint64_t object) {
    auto it = live_.find(object);
    if (it == live_.end()) return;
    const Live l = it->second;
    all_.remove(l.size);
    if (l.calloc) {
      callocs_.remove(l.size);
      (l.size >= kLarge ? largeCallocs_ : smallCallocs_).remove(l.size);
    }
    if (l.size >= kLarge) large_.remove(l.size);
    live_.erase(it);
  }

  // A realloc's old block: counted as growth or shrinkage, then dropped.
  void resize(const Event& e) {
    auto it = (e.flags & kFlagNull) ? live_.end() : live_.find(e.target);
    if (it == live_.end()) return;
    if (e.size > it->second.size) {
      ++reallocGrow_, reallocBytesGrown_ += e.size - it->second.size;
    } else {
      ++reallocShrink_;
    }
    drop(e.target);
  }

  void touch(const Event& e) {
    ++touches_, touchBytes_ += e.size;
    auto it = live_.find(e.object);
    if (it != live_.end()) touchOf_ += it->second.size;
  }

  std::unordered_map<std::uint64_t, Live> live_;
  Tally all_, callocs_, smallCallocs_, largeCallocs_, large_;
  std::uint64_t reallocGrow_ = 0, reallocShrink_ = 0, reallocBytesGrown_ = 0, touches_ = 0,
                touchBytes_ = 0, touchOf_ = 0;
  std::uint64_t callocHist_[40] = {};
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: trace_profile TRACE\n");
    return 2;
  }
  const int fd = ::open(argv[1], O_RDONLY);
  if (fd < 0) {
    std::perror(argv[1]);
    return 1;
  }
  TraceReader<FdSource> reader(FdSource{fd});
  Profile profile;
  Event e;
  ReadStatus s;
  while ((s = reader.next(e)) == ReadStatus::Event)
    if (!(e.flags & kFlagFailed)) profile.event(e);
  if (s == ReadStatus::Error) {
    std::fprintf(stderr, "trace_profile: %s: not a valid trace\n", argv[1]);
    return 1;
  }
  profile.print(argv[1]);
  return 0;
}
