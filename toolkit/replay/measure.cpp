// Process measurements for the replay (measure.hpp).
#include "replay/measure.hpp"

#include <time.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "replay/own_memory.hpp"
#include "support/process.hpp"

namespace strata::replay {

double cpuNow() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void HeapMeter::start(std::optional<std::uint64_t> baselineBytes) noexcept {
  support::resetPeakRss();
  const std::uint64_t own0 = ownResidentBytes();
  const std::uint64_t anon0 = support::anonResidentBytes();
  file0_ = support::fileResidentBytes();
  baseline_ = baselineBytes ? *baselineBytes : (anon0 > own0 ? anon0 - own0 : 0);
  startup_ = heapOf(anon0, own0);
}

std::uint64_t HeapMeter::now() const noexcept {
  return heapOf(support::anonResidentBytes(), ownResidentBytes());
}

std::uint64_t HeapMeter::peakByHighWaterMark() const noexcept {
  const std::uint64_t hwm = support::procFieldBytes("/proc/self/status", "VmHWM:");
  const std::uint64_t notHeap =
      std::max(file0_, support::fileResidentBytes()) + ownResidentBytes() + baseline_ +
      support::sanitizerShadowResidentBytes();
  return std::max(folded_, hwm > notHeap ? hwm - notHeap : 0);
}

void HeapMeter::foldPeak(std::uint64_t peakBefore) noexcept {
  folded_ = std::max(folded_, peakBefore);
  support::resetPeakRss();
}

std::uint64_t preloadedLibraryResidentBytes() noexcept {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr) return 0;
  std::uint64_t total = 0;
  char entry[PATH_MAX], resolved[PATH_MAX];
  for (const char* p = preload; *p != '\0';) {
    std::size_t n = std::strcspn(p, ": ");
    if (n != 0 && n < sizeof entry) {
      std::memcpy(entry, p, n);
      entry[n] = '\0';
      if (::realpath(entry, resolved) != nullptr) total += support::mappingResidentBytes(resolved);
    }
    p += n;
    while (*p == ':' || *p == ' ') ++p;
  }
  return total;
}

std::uint64_t startBaselineBytes() noexcept {
  const std::uint64_t anon = support::anonResidentBytes();
  const std::uint64_t heap = support::mappingResidentBytes("[heap]");
  return anon > heap ? anon - heap : 0;
}

ChildBaseline baselineFromChild(const std::string& replayer) {
  ChildBaseline b;
  support::ChildSpec spec;
  spec.argv = {replayer, "--measure-baseline"};
  spec.unset = {"LD_PRELOAD"};
  spec.stderrPath.clear();
  spec.captureStdout = true;
  const support::ProcessResult r = support::runChild(spec);
  if (!r.started) {
    b.whyNot = "cannot start " + replayer + ": " + support::describeStatus(r);
    return b;
  }
  char* end = nullptr;
  const unsigned long long v = std::strtoull(r.out.c_str(), &end, 10);
  if (!r.succeeded() || end == r.out.c_str()) {
    b.whyNot = replayer + " --measure-baseline printed no baseline";
    return b;
  }
  b.bytes = v;
  return b;
}

}  // namespace strata::replay
