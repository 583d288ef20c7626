// Readers of /proc (proc.hpp).
#include "proc.hpp"

#include <unistd.h>

#include <climits>
#include <fstream>
#include <string>

namespace strata::support {
namespace {

std::string readLink(const std::string& path) {
  char buf[PATH_MAX];
  const ssize_t len = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (len <= 0) return {};
  return std::string(buf, static_cast<std::size_t>(len));
}

std::string procDir(int pid) { return pid == 0 ? "/proc/self" : "/proc/" + std::to_string(pid); }

}  // namespace

std::string selfExe() { return readLink("/proc/self/exe"); }

std::string procExe(int pid) { return readLink(procDir(pid) + "/exe"); }

std::optional<std::uint64_t> procStatusBytes(std::string_view field, int pid) {
  std::ifstream in(procDir(pid) + "/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(in, line)) {
    if (!line.starts_with(prefix)) continue;
    // "VmHWM:	    1234 kB"
    std::uint64_t kb = 0;
    bool any = false;
    for (std::size_t i = prefix.size(); i < line.size(); ++i) {
      if (line[i] >= '0' && line[i] <= '9') {
        kb = kb * 10 + static_cast<std::uint64_t>(line[i] - '0');
        any = true;
      } else if (any) {
        break;
      }
    }
    if (!any) return std::nullopt;
    return kb * 1024;
  }
  return std::nullopt;
}

}  // namespace strata::support
