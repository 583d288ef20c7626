// The trace files of a recorded command (trace_files.hpp).
#include "trace_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "strata/trace/reader.hpp"

namespace strata::cli {

namespace fs = std::filesystem;

long pidSuffix(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  if (ext.size() < 2) return 0;
  for (std::size_t i = 1; i < ext.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(ext[i]))) return 0;
  return std::strtol(ext.c_str() + 1, nullptr, 10);
}

std::vector<std::string> childTraces(const std::string& trace) {
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

TraceProgram readTraceProgram(const std::string& trace) {
  TraceProgram p;
  const int fd = ::open(trace.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    strata::trace::TraceReader<strata::trace::FdSource> reader(strata::trace::FdSource{fd});
    strata::trace::Event e;
    reader.next(e);  // reads the header and the program chunk
    p.path = reader.program().path;
    p.pid = static_cast<long>(reader.program().pid);
    p.parentPid = static_cast<long>(reader.program().parentPid);
    ::close(fd);
  }
  if (p.pid == 0) p.pid = pidSuffix(trace);
  return p;
}

}  // namespace strata::cli
