// Process measurements for the replay (measure.hpp).
#include "measure.hpp"

#include <time.h>

#include <cstdlib>

#include "process.hpp"

namespace strata::replay {

double cpuNow() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::uint64_t startBaselineBytes() noexcept {
  const std::uint64_t anon = support::anonResidentBytes();
  const std::uint64_t heap = support::mappingResidentBytes("[heap]");
  return anon > heap ? anon - heap : 0;
}

bool baselineFromChild(const std::string& replayer, std::uint64_t& out, std::string& error) {
  support::ChildSpec spec;
  spec.argv = {replayer, "--measure-baseline"};
  spec.unset = {"LD_PRELOAD"};
  spec.stderrPath.clear();
  spec.captureStdout = true;
  const support::ProcessResult r = support::runChild(spec);
  if (!r.started) {
    error = "cannot start " + replayer + ": " + support::describeStatus(r);
    return false;
  }
  char* end = nullptr;
  const unsigned long long v = std::strtoull(r.out.c_str(), &end, 10);
  if (!r.succeeded() || end == r.out.c_str()) {
    error = replayer + " --measure-baseline printed no baseline";
    return false;
  }
  out = v;
  return true;
}

}  // namespace strata::replay
