// What `strata build` says about a result (build_library.hpp): what failed, the heap type a
// header lacks, the spec to use the library with, the compiler's log kept beside the library.
#include <filesystem>
#include <system_error>

#include "build/build_library.hpp"
#include "support/error.hpp"
#include "support/files.hpp"

namespace strata::build {

bool missingHeapType(const BuildResult& r) {
  for (const char* words : {"has not been declared", "does not name a type", "is not a member",
                            "was not declared", "no type named", "no member named", "undeclared"})
    if (r.firstError.find(words) != std::string::npos) return true;
  return false;
}

std::string failureLine(const BuildRequest& request, const BuildResult& r) {
  switch (r.status) {
    case BuildStatus::Built: break;
    case BuildStatus::BadRequest: return r.error;
    case BuildStatus::CompileFailed: return r.heapType + " does not compile (" + r.error + ")";
    case BuildStatus::ProbeFailed:
      return "built " + request.output + ", but it fails the check: " + r.probe.reason;
  }
  return {};
}

std::string runSpecPath(const std::string& output) {
  return output.find('/') == std::string::npos ? "./" + output : output;
}

std::string keepBuildLog(const BuildRequest& request, const BuildResult& result) {
  const std::string path = request.output + ".log";
  if (result.status != BuildStatus::CompileFailed) {
    std::error_code ec;
    if (result.ok()) std::filesystem::remove(path, ec);
    return {};
  }
  try {
    support::writeFileAtomically(path, result.fullLog);
  } catch (const support::Error&) {
    return {};  // no log kept: the caller says so
  }
  return path;
}

}  // namespace strata::build
