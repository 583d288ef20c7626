// A program that writes a trace with allocation sites pointing into itself, for the tests of
// `strata stats --sites` and `strata compare --sites`: the return addresses of calls in known
// functions (each marked "site:" on its line), the modules from dl_iterate_phdr, and events
// whose figures the tests know. Built with -g -O0 so the calls stay where the source says.
// Usage: sites_program TRACE
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "strata/trace/writer.hpp"

using namespace strata::trace;

namespace {

std::vector<ModuleInfo> gModules;
char gExe[PATH_MAX];

// The loaded objects as the recorder would give them: range of the PT_LOAD segments, bias.
int addModule(dl_phdr_info* info, std::size_t, void*) {
  std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    lo = std::min<std::uint64_t>(lo, info->dlpi_addr + ph.p_vaddr);
    hi = std::max<std::uint64_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  const char* path = info->dlpi_name;
  if (path == nullptr || *path == '\0') path = gExe;  // the executable itself
  if (hi > lo && *path == '/')
    gModules.push_back(ModuleInfo{lo, hi, info->dlpi_addr, path, std::strlen(path), nullptr, 0});
  return 0;
}

[[gnu::noinline]] std::uint64_t returnAddress() {
  return reinterpret_cast<std::uint64_t>(__builtin_return_address(0));
}

}  // namespace

// Each function (plain C names, so the report's names are exact) records the return address of its call to returnAddress: a frame on the
// marked line.
extern "C" [[gnu::noinline]] std::uint64_t make_leaf() {
  return returnAddress();  // site: make_leaf
}
extern "C" [[gnu::noinline]] std::uint64_t build_tree() {
  return returnAddress();  // site: build_tree
}
extern "C" [[gnu::noinline]] std::uint64_t parse_input() {
  return returnAddress();  // site: parse_input
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const ssize_t n = ::readlink("/proc/self/exe", gExe, sizeof gExe - 1);
  if (n <= 0) return 1;
  gExe[n] = '\0';
  dl_iterate_phdr(addModule, nullptr);
  // A module whose file is gone: its frames fall back to module+offset, with one note.
  const char* gone = "/nonexistent/libgone.so";
  gModules.push_back(ModuleInfo{0x10000000, 0x10001000, 0x10000000, gone, std::strlen(gone),
                                nullptr, 0});

  const int fd = ::open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return 1;
  static unsigned char buf[1 << 16], sbuf[1 << 12];
  TraceWriter<FdSink> w(buf, sizeof buf, FdSink{fd}, SiteBuffer{sbuf, sizeof sbuf});
  w.program(static_cast<std::uint64_t>(getpid()), 0, gExe);
  w.addModules(gModules.data(), gModules.size());
  const std::uint64_t tree = build_tree(), leaf = make_leaf(), input = parse_input();
  const std::uint64_t a[] = {leaf, tree};
  const std::uint64_t b[] = {input};
  const std::uint64_t c[] = {0x10000123, 0x42};  // the gone library, then no module
  const std::uint64_t siteA = w.defineSite(a, 2), siteB = w.defineSite(b, 1),
                      siteC = w.defineSite(c, 2);
  // A: 3 x 1000 live at the peak; B: 500 live at the peak, then 10 x 100 freed at once;
  // C: 3400 after the peak.
  std::uint64_t t = 0;
  auto alloc = [&](std::uint64_t size, std::uint64_t site) {
    return w.appendUnchecked(Op::Malloc, 0, 0, ++t, kNoObject, kNoObject, size, 0, site);
  };
  auto release = [&](std::uint64_t id) {
    w.appendUnchecked(Op::Free, 0, 0, ++t, id, kNoObject, 0, 0);
  };
  const std::uint64_t a0 = alloc(1000, siteA), a1 = alloc(1000, siteA), a2 = alloc(1000, siteA);
  release(alloc(500, siteB));  // the peak: 3500 live
  release(a0);
  release(a1);
  release(a2);
  alloc(3400, siteC);
  for (int i = 0; i < 10; ++i) release(alloc(100, siteB));
  alloc(7, kNoSite);
  const bool ok = w.finish() && ::close(fd) == 0;
  return ok ? 0 : 1;
}
