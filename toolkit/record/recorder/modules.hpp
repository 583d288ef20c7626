// The loaded objects (the executable and its shared libraries) a trace with sites names, so
// that a tool can map a site's return addresses back to functions and lines: each one's
// address range, load bias, path and GNU build id, found with dl_iterate_phdr. The list is
// kept in the recorder's own memory and copies each path and build id, because an object
// may be unloaded (dlclose) long before the trace ends; entries are only ever appended, so
// a thread may look an address up without the recorder's lock while another appends.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "strata/trace/format.hpp"

namespace strata::record {

// One loaded object. path points into the list's own memory (not null-terminated).
struct Module {
  uint64_t start = 0, end = 0, bias = 0;
  const char* path = nullptr;
  uint32_t pathLength = 0;
  uint32_t buildIdLength = 0;
  unsigned char buildId[strata::trace::kMaxBuildId] = {};

  strata::trace::ModuleInfo info() const {
    return {start, end, bias, path, pathLength, buildId, buildIdLength};
  }
};

// Append-only list of modules in mmap memory of a fixed capacity: up to maxModules entries
// and pathBytes bytes of paths; a module that does not fit is left out (its frames then show
// as bare addresses). One appending thread at a time (the recorder's lock); contains() and
// reading the first size() entries need no lock.
class ModuleList {
 public:
  bool init(size_t maxModules, size_t pathBytes) noexcept;
  // Gives the memory back; the list is empty and must be init() again before use.
  void release() noexcept;
  size_t size() const { return count_.load(std::memory_order_acquire); }
  const Module& operator[](size_t i) const { return items_[i]; }
  // Whether addr lies in a module of the list. *hint: the index to try first, updated to the
  // module found (a stack's frames mostly lie in one or two objects).
  bool contains(uint64_t addr, size_t* hint) const noexcept;
  // The index of the module holding addr, or size() when none does.
  size_t find(uint64_t addr) const noexcept;
  // Appends m (copying its path) unless a module with the same range, bias and path is in
  // the list. True when it was appended.
  bool add(const Module& m) noexcept;
  // The loader's count of loads and unloads when the list was last filled by scanLoaded.
  uint64_t generation() const { return generation_.load(std::memory_order_relaxed); }
  void setGeneration(uint64_t g) { generation_.store(g, std::memory_order_relaxed); }

 private:
  Module* items_ = nullptr;
  char* paths_ = nullptr;
  size_t capacity_ = 0, pathCapacity_ = 0, pathUsed_ = 0;
  std::atomic<size_t> count_{0};
  std::atomic<uint64_t> generation_{0};
};

// The dynamic loader's count of objects loaded plus objects unloaded so far: when it has not
// changed, neither has the set of loaded objects. One dl_iterate_phdr step.
uint64_t loadGeneration() noexcept;

// Fills `out` (an empty list; init'ed here, to the size the scan needs) with every loaded
// object that has a file: the executable under exePath (the loader gives it no name), each
// library under the path it was loaded by (a relative one: the file's absolute path, as the
// kernel mapped it). The vDSO and objects without a loadable segment are left out. False
// when out of memory. Runs dl_iterate_phdr, so it must not be called with a lock held that a
// thread inside dl_iterate_phdr's callback may want (the recorder's lock). Allocates nothing.
bool scanLoaded(ModuleList& out, const char* exePath) noexcept;

}  // namespace strata::record
