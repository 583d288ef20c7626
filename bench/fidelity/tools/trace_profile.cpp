// trace_profile TRACE: an investigation aid (docs/fidelity.md). Prints what a replay's
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
  std::unordered_map<std::uint64_t, Live> live;
  Tally all, callocs, smallCallocs, largeCallocs, large, touchedLarge;
  std::uint64_t reallocGrow = 0, reallocShrink = 0, reallocBytesGrown = 0, touches = 0,
                touchBytes = 0, touchOf = 0;
  std::uint64_t callocHist[40] = {};
  const auto drop = [&](std::uint64_t object) {
    auto it = live.find(object);
    if (it == live.end()) return;
    const Live l = it->second;
    all.remove(l.size);
    if (l.calloc) {
      callocs.remove(l.size);
      (l.size >= kLarge ? largeCallocs : smallCallocs).remove(l.size);
    }
    if (l.size >= kLarge) large.remove(l.size);
    live.erase(it);
  };
  Event e;
  ReadStatus s;
  while ((s = reader.next(e)) == ReadStatus::Event) {
    if (e.flags & kFlagFailed) continue;
    switch (e.op) {
      case Op::Free: case Op::Delete: case Op::ReapFree:
        drop(e.object);
        break;
      case Op::Touch: {
        ++touches, touchBytes += e.size;
        auto it = live.find(e.object);
        if (it != live.end()) touchOf += it->second.size;
        break;
      }
      case Op::Realloc: {
        auto it = (e.flags & kFlagNull) ? live.end() : live.find(e.target);
        if (it != live.end()) {
          if (e.size > it->second.size) ++reallocGrow, reallocBytesGrown += e.size - it->second.size;
          else ++reallocShrink;
          drop(e.target);
        }
        [[fallthrough]];
      }
      case Op::Malloc: case Op::Calloc: case Op::Memalign: case Op::New: case Op::ReapMalloc: {
        const bool isCalloc = e.op == Op::Calloc;
        live[e.object] = {e.size, isCalloc};
        all.add(e.size);
        if (isCalloc) {
          callocs.add(e.size);
          (e.size >= kLarge ? largeCallocs : smallCallocs).add(e.size);
          int b = 0;
          while (b < 39 && (std::uint64_t{1} << (b + 1)) <= e.size) ++b;
          ++callocHist[b];
        }
        if (e.size >= kLarge) large.add(e.size);
        break;
      }
      default:
        break;
    }
  }
  if (s == ReadStatus::Error) {
    std::fprintf(stderr, "trace_profile: %s: not a valid trace\n", argv[1]);
    return 1;
  }
  std::printf("%s\n", argv[1]);
  all.print("all allocations");
  callocs.print("calloc");
  smallCallocs.print("calloc < 128 KiB");
  largeCallocs.print("calloc >= 128 KiB");
  large.print("any block >= 128 KiB");
  std::printf("  realloc: %llu grow (%.1f MiB grown), %llu shrink or same\n",
              static_cast<unsigned long long>(reallocGrow), reallocBytesGrown / kMiB,
              static_cast<unsigned long long>(reallocShrink));
  std::printf("  touch events: %llu, %.1f MiB touched of %.1f MiB\n",
              static_cast<unsigned long long>(touches), touchBytes / kMiB, touchOf / kMiB);
  std::printf("  calloc sizes (log2 buckets):\n");
  for (int b = 0; b < 40; ++b)
    if (callocHist[b] != 0)
      std::printf("    >= %12llu B  %10llu\n", 1ull << b, static_cast<unsigned long long>(callocHist[b]));
  return 0;
}
