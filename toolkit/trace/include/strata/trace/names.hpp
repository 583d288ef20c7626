// The names of the traces one recording writes: FILE for the process the recording names its
// owner (strata/protocol/recorder_environment.hpp, kOwnerPid) and FILE.<pid> for every other
// process. `strata record`, `strata drag` and `strata compare` look them up alike.
#pragma once
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace strata::trace {

// The pid at the end of "<trace>.<pid>", or 0.
inline long pidSuffix(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext.size() < 2) return 0;
  for (std::size_t i = 1; i < ext.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(ext[i]))) return 0;
  return std::strtol(ext.c_str() + 1, nullptr, 10);
}

// The FILE.<pid> traces beside `trace`, in pid order.
inline std::vector<std::string> childTraces(const std::string& trace) {
  namespace fs = std::filesystem;
  std::vector<std::string> found;
  std::error_code ec;
  const fs::path dir = fs::path(trace).parent_path();
  const std::string prefix = fs::path(trace).filename().string() + ".";
  for (const auto& e : fs::directory_iterator(dir.empty() ? fs::path(".") : dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with(prefix) || name.size() == prefix.size()) continue;
    if (std::all_of(name.begin() + static_cast<long>(prefix.size()), name.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      found.push_back(e.path().string());
  }
  std::sort(found.begin(), found.end(), [](const std::string& a, const std::string& b) {
    return pidSuffix(a) < pidSuffix(b);
  });
  return found;
}

}  // namespace strata::trace
