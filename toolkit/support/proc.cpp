// Readers of /proc (proc.hpp).
#include "support/proc.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include "strata/detail/poison.hpp"
#include "strata/platform/page.hpp"

namespace strata::support {
namespace {

std::string readLink(const std::string& path) {
  char buf[PATH_MAX];
  const ssize_t len = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (len <= 0) return {};
  return std::string(buf, static_cast<std::size_t>(len));
}

std::string procDir(int pid) { return pid == 0 ? "/proc/self" : "/proc/" + std::to_string(pid); }

// Reads a small /proc file into buf (no allocation); returns the length or 0.
std::size_t readSmall(const char* path, char* buf, std::size_t cap) noexcept {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::size_t got = 0;
  while (got + 1 < cap) {
    const ssize_t r = ::read(fd, buf + got, cap - 1 - got);
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  ::close(fd);
  buf[got] = '\0';
  return got;
}

// statm's resident and shared page counts.
bool statm(std::uint64_t& resident, std::uint64_t& shared) noexcept {
  char buf[256];
  if (readSmall("/proc/self/statm", buf, sizeof buf) == 0) return false;
  char* p = buf;
  std::strtoull(p, &p, 10);
  resident = std::strtoull(p, &p, 10);
  shared = std::strtoull(p, &p, 10);
  return true;
}

// The running system's page size: statm counts its pages.
std::uint64_t pageSize() noexcept { return platform::pageSize(); }

}  // namespace

std::uint64_t procFieldBytes(const char* path, const char* field) noexcept {
  char buf[8192];
  if (readSmall(path, buf, sizeof buf) == 0) return 0;
  const char* at = std::strstr(buf, field);
  if (at == nullptr) return 0;
  return std::strtoull(at + std::strlen(field), nullptr, 10) * 1024;
}

namespace {

// Resident bytes of every mapping in /proc/self/smaps whose header line ("lo-hi perms ...
// name") `wanted(header, ctx)` accepts. smaps streams through a fixed buffer line by line,
// without allocating: the first "Rss:" line after a header is its mapping's.
std::uint64_t residentBytesWhere(bool (*wanted)(std::string_view, const void*),
                                 const void* ctx) noexcept {
  const int fd = ::open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[8192];
  std::size_t have = 0;
  bool inMapping = false;
  std::uint64_t rss = 0;
  for (;;) {
    const ssize_t r = ::read(fd, buf + have, sizeof buf - 1 - have);
    if (r <= 0) break;
    have += static_cast<std::size_t>(r);
    buf[have] = '\0';
    char* line = buf;
    char* nl;
    while ((nl = std::strchr(line, '\n')) != nullptr) {
      *nl = '\0';
      const std::string_view l(line);
      // A header line starts with the address range "lo-hi "; field lines with "Name:".
      const std::size_t dash = l.find('-');
      const bool header = dash != std::string_view::npos && dash > 0 &&
                          l.find(':') > l.find(' ') && l.find(' ') != std::string_view::npos;
      if (header) {
        inMapping = wanted(l, ctx);
      } else if (inMapping && l.starts_with("Rss:")) {
        rss += std::strtoull(line + 4, nullptr, 10) * 1024;
        inMapping = false;
      }
      line = nl + 1;
    }
    have = static_cast<std::size_t>(buf + have - line);
    std::memmove(buf, line, have);
    if (have + 1 >= sizeof buf) have = 0;  // a line longer than the buffer: not one we need
  }
  ::close(fd);
  return rss;
}

// AddressSanitizer's shadow memory (and its gap) on x86-64: every address from the low
// shadow's start to the high shadow's end. Instrumented code reads the shadow of every byte
// the program touches, and on a kernel that backs read faults with real pages (no shared
// zero page) that makes an eighth of the touched memory resident again, outside any heap.
#if defined(__x86_64__)
constexpr std::uint64_t kShadowBegin = 0x7fff8000, kShadowEnd = 0x10007fff8000;

bool inShadow(std::string_view header, const void*) noexcept {
  const std::uint64_t start = std::strtoull(header.data(), nullptr, 16);
  return start >= kShadowBegin && start < kShadowEnd;
}
#endif

}  // namespace

std::uint64_t sanitizerShadowResidentBytes() noexcept {
#if defined(__x86_64__)
  if constexpr (detail::kAsan) return residentBytesWhere(inShadow, nullptr);
#endif
  return 0;
}

std::uint64_t anonResidentBytes() noexcept {
  std::uint64_t resident = 0, shared = 0;
  if (!statm(resident, shared)) return 0;
  const std::uint64_t anon = resident > shared ? (resident - shared) * pageSize() : 0;
  const std::uint64_t shadow = sanitizerShadowResidentBytes();
  return anon > shadow ? anon - shadow : 0;
}

std::uint64_t fileResidentBytes() noexcept {
  std::uint64_t resident = 0, shared = 0;
  if (!statm(resident, shared)) return 0;
  return shared * pageSize();
}

std::uint64_t mappingResidentBytes(const char* name) noexcept {
  return residentBytesWhere(
      [](std::string_view header, const void* ctx) noexcept {
        const std::string_view wanted(static_cast<const char*>(ctx));
        return header.size() > wanted.size() && header.ends_with(wanted) &&
               header[header.size() - wanted.size() - 1] == ' ';
      },
      name);
}

bool resetPeakRss() noexcept {
  const int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, "5", 1) == 1;
  ::close(fd);
  return ok;
}

std::string selfExe() { return readLink("/proc/self/exe"); }

std::string selfDirectory() {
  const std::string exe = selfExe();
  const std::size_t slash = exe.rfind('/');
  return slash == std::string::npos ? std::string() : exe.substr(0, slash);
}

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
