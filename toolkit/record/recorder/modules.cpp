// The loaded objects (modules.hpp): the list, and the scan over dl_iterate_phdr.
#include "record/recorder/modules.hpp"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <algorithm>

#include "record/recorder/mapped_memory.hpp"
#include "strata/platform/memory.hpp"

namespace strata::record {

bool ModuleList::init(size_t maxModules, size_t pathBytes) noexcept {
  items_ = static_cast<Module*>(mapPages(maxModules * sizeof(Module)));
  paths_ = static_cast<char*>(mapPages(pathBytes));
  if (items_ == nullptr || paths_ == nullptr) {
    release();
    return false;
  }
  capacity_ = maxModules;
  pathCapacity_ = pathBytes;
  return true;
}

void ModuleList::release() noexcept {
  if (items_ != nullptr) platform::unmap(items_, capacity_ * sizeof(Module));
  if (paths_ != nullptr) platform::unmap(paths_, pathCapacity_);
  items_ = nullptr;
  paths_ = nullptr;
  capacity_ = pathCapacity_ = pathUsed_ = 0;
  count_.store(0, std::memory_order_relaxed);
}

bool ModuleList::contains(uint64_t addr, size_t* hint) const noexcept {
  const size_t n = size();
  if (*hint < n && addr >= items_[*hint].start && addr < items_[*hint].end) return true;
  for (size_t i = 0; i < n; ++i) {
    if (addr >= items_[i].start && addr < items_[i].end) {
      *hint = i;
      return true;
    }
  }
  return false;
}

size_t ModuleList::find(uint64_t addr) const noexcept {
  size_t i = size();
  return contains(addr, &i) ? i : size();
}

bool ModuleList::add(const Module& m) noexcept {
  const size_t n = count_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < n; ++i) {
    const Module& k = items_[i];
    if (k.start == m.start && k.end == m.end && k.bias == m.bias &&
        k.pathLength == m.pathLength && ::memcmp(k.path, m.path, m.pathLength) == 0)
      return false;
  }
  if (n == capacity_ || pathCapacity_ - pathUsed_ < m.pathLength) return false;
  Module& slot = items_[n];
  slot = m;
  ::memcpy(paths_ + pathUsed_, m.path, m.pathLength);
  slot.path = paths_ + pathUsed_;
  pathUsed_ += m.pathLength;
  count_.store(n + 1, std::memory_order_release);  // readers see the entry whole
  return true;
}

namespace {

// dl_iterate_phdr's loads + unloads, from the first object it reports.
int readGeneration(dl_phdr_info* info, size_t size, void* arg) {
  if (size < offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) return 1;
  *static_cast<uint64_t*>(arg) = info->dlpi_adds + info->dlpi_subs;
  return 1;
}

// The GNU build id among the notes of [p, p + size), aligned to `align`, or 0 bytes.
uint32_t findBuildId(const unsigned char* p, size_t size, size_t align, unsigned char* out) {
  const unsigned char* end = p + size;
  auto up = [align](size_t n) { return (n + align - 1) & ~(align - 1); };
  while (static_cast<size_t>(end - p) >= sizeof(ElfW(Nhdr))) {
    ElfW(Nhdr) h;
    ::memcpy(&h, p, sizeof h);
    const size_t name = up(h.n_namesz), desc = up(h.n_descsz);
    if (static_cast<size_t>(end - p) - sizeof h < name + desc) break;
    const unsigned char* n = p + sizeof h;
    if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 && ::memcmp(n, "GNU", 4) == 0) {
      const uint32_t len = std::min<uint32_t>(h.n_descsz, strata::trace::kMaxBuildId);
      ::memcpy(out, n + name, len);
      return len;
    }
    p = n + name + desc;
  }
  return 0;
}

// Whether [vaddr, vaddr + size) lies in one readable loaded segment of the object (a note
// outside them is not in memory).
bool inLoadedSegment(const dl_phdr_info* info, uint64_t vaddr, uint64_t size) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_R) && vaddr >= ph.p_vaddr &&
        vaddr + size <= ph.p_vaddr + ph.p_filesz)
      return true;
  }
  return false;
}

// The file the kernel mapped at addr (its absolute path, from /proc/self/maps) into out; false
// when addr is in no file mapping. Reads with plain system calls, a line at a time.
bool mappedPath(uint64_t addr, char* out, size_t cap) {
  const int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096], line[PATH_MAX + 256];
  size_t len = 0;
  bool found = false, skipping = false;  // skipping: the rest of a line too long to hold
  for (ssize_t got; !found && (got = ::read(fd, buf, sizeof buf)) > 0;) {
    for (ssize_t i = 0; i < got && !found; ++i) {
      if (buf[i] != '\n') {
        if (len + 1 < sizeof line) line[len++] = buf[i];
        else skipping = true;
        continue;
      }
      line[len] = '\0';
      // "start-end perms offset dev inode   path"
      char* end = nullptr;
      const uint64_t lo = ::strtoull(line, &end, 16);
      const uint64_t hi = *end == '-' ? ::strtoull(end + 1, nullptr, 16) : 0;
      const char* path = ::strchr(line, '/');
      if (!skipping && addr >= lo && addr < hi && path != nullptr &&
          static_cast<size_t>(line + len - path) < cap) {
        ::memcpy(out, path, static_cast<size_t>(line + len - path) + 1);
        found = true;
      }
      len = 0;
      skipping = false;
      if (addr < lo) break;  // the lines are in address order
    }
  }
  ::close(fd);
  return found;
}

struct Scan {
  ModuleList* out;
  const char* exe;
  size_t objects = 0;  // counting pass: objects seen
  bool fill = false;
};

// One loaded object: counted, or described and added.
int visit(dl_phdr_info* info, size_t, void* arg) {
  auto* scan = static_cast<Scan*>(arg);
  if (!scan->fill) {
    ++scan->objects;
    return 0;
  }
  Module m;
  uint64_t lo = ~uint64_t{0}, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    lo = std::min<uint64_t>(lo, info->dlpi_addr + ph.p_vaddr);
    hi = std::max<uint64_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  for (int i = 0; i < info->dlpi_phnum && m.buildIdLength == 0; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_NOTE && inLoadedSegment(info, ph.p_vaddr, ph.p_memsz))
      m.buildIdLength =
          findBuildId(reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr),
                      ph.p_memsz, ph.p_align == 8 ? 8 : 4, m.buildId);
  }
  if (hi <= lo) return 0;
  const char* name = info->dlpi_name;
  char mapped[PATH_MAX];
  if (name == nullptr || name[0] == '\0') {
    name = scan->exe;  // the executable (the loader reports it first, unnamed)
  } else if (name[0] != '/') {
    // A library loaded by a relative path (relative to a directory the program may have
    // left since: the kernel's mapping says where it is), or the vDSO (no file: left out).
    if (!mappedPath(lo, mapped, sizeof mapped)) return 0;
    name = mapped;
  }
  if (name == nullptr || name[0] != '/') return 0;
  m.start = lo;
  m.end = hi;
  m.bias = info->dlpi_addr;
  m.path = name;
  m.pathLength =
      static_cast<uint32_t>(std::min<size_t>(::strlen(name), strata::trace::kMaxModulePath));
  scan->out->add(m);
  return 0;
}

}  // namespace

uint64_t loadGeneration() noexcept {
  uint64_t g = 0;
  dl_iterate_phdr(readGeneration, &g);
  return g;
}

bool scanLoaded(ModuleList& out, const char* exePath) noexcept {
  Scan scan{&out, exePath};
  dl_iterate_phdr(visit, &scan);
  // Room for objects loaded between the two passes too (those beyond are left out); the
  // paths' room is address space, of which only what is written becomes memory.
  const size_t room = scan.objects + 16;
  if (!out.init(room, room * strata::trace::kMaxModulePath)) return false;
  const uint64_t before = loadGeneration();
  scan.fill = true;
  dl_iterate_phdr(visit, &scan);
  out.setGeneration(before);
  return true;
}

}  // namespace strata::record
