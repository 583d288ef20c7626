// The known allocators and where their libraries are (see allocator_registry.hpp).
#include "registry/allocator_registry.hpp"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <climits>
#include <cstdlib>
#include <filesystem>

#include "support/helpers.hpp"

namespace strata::registry {
namespace {

namespace fs = std::filesystem;

constexpr std::array<AllocatorInfo, 8> kAllocators{{
    {"glibc", Origin::System, "", "", ""},
    {"jemalloc", Origin::Peer, "libjemalloc.so.2", "libjemalloc2 (dev: libjemalloc-dev)", ""},
    {"mimalloc", Origin::Peer, "libmimalloc.so.2", "libmimalloc2.0 (dev: libmimalloc-dev)", ""},
    {"tcmalloc", Origin::Peer, "libtcmalloc_minimal.so.4",
     "libtcmalloc-minimal4 or libgoogle-perftools4 (dev: libgoogle-perftools-dev)", ""},
    {"strata-kingsley", Origin::Strata, "libstrata-kingsley.so", "", "strata_malloc_kingsley"},
    {"strata-lea", Origin::Strata, "libstrata-lea.so", "", "strata_malloc_lea"},
    {"strata", Origin::Strata, "libstrata.so", "", "strata_malloc"},
    {"strata-secure", Origin::Strata, "libstrata-secure.so", "", "strata_malloc_secure"},
}};

// The directory the running C library was loaded from (e.g. /lib/x86_64-linux-gnu), found
// from the address of a function only libc defines; empty if the loader cannot say.
fs::path libcDirectory() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&::gnu_get_libc_version), &info) == 0 ||
      info.dli_fname == nullptr || info.dli_fname[0] != '/')
    return {};
  return fs::path(info.dli_fname).parent_path();
}

// Adds `dir` to `dirs` unless it is empty or already there.
void addDir(std::vector<std::string>& dirs, const fs::path& dir) {
  if (dir.empty()) return;
  const std::string s = dir.lexically_normal().string();
  for (const std::string& d : dirs)
    if (d == s) return;
  dirs.push_back(s);
}

}  // namespace

std::span<const AllocatorInfo> knownAllocators() { return kAllocators; }

bool isLibraryFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), R_OK) == 0;
}

const AllocatorInfo* findAllocator(std::string_view name) {
  for (const AllocatorInfo& a : kAllocators)
    if (a.name == name) return &a;
  return nullptr;
}

std::string knownAllocatorNames() {
  std::string names;
  for (const AllocatorInfo& a : kAllocators) {
    if (!names.empty()) names += ", ";
    names += a.name;
  }
  return names;
}

// The multiarch directory is the one libc came from; Debian keeps it under both /lib and
// /usr/lib (merged /usr), and the /usr/lib form is listed first because that is where the
// packages put their files. The build machine's triplet (STRATA_MULTIARCH, from CMake)
// covers a libc found somewhere unusual; the plain and lib64 directories cover other
// distributions. Strata's own directory is <exe>/../lib as in the build tree, or the
// install's library directory when there is no such lib beside bin.
SearchDirs defaultSearchDirs() {
  SearchDirs dirs;
  const fs::path libc = libcDirectory();
  std::string triplet;
  if (!libc.empty() && libc.filename().string().find("-linux-") != std::string::npos)
    triplet = libc.filename().string();
#ifdef STRATA_MULTIARCH
  if (triplet.empty()) triplet = STRATA_MULTIARCH;
#endif
  if (!triplet.empty()) {
    addDir(dirs.system, fs::path("/usr/lib") / triplet);
    addDir(dirs.system, fs::path("/lib") / triplet);
  }
  addDir(dirs.system, libc);
  for (const char* d : {"/usr/local/lib", "/usr/lib", "/usr/lib64", "/lib64"})
    addDir(dirs.system, d);

  dirs.strata = support::strataLibDir();
  return dirs;
}

Location locate(const AllocatorInfo& info, const SearchDirs& dirs) {
  Location where;
  where.info = &info;
  switch (info.origin) {
    case Origin::System:
      where.available = true;
      break;
    case Origin::Peer:
      for (const std::string& d : dirs.system) {
        const std::string path = (fs::path(d) / info.library).string();
        if (isLibraryFile(path)) {
          where.available = true;
          where.path = path;
          break;
        }
      }
      if (!where.available) {
        for (const std::string& d : dirs.system) {
          if (!where.path.empty()) where.path += ", ";
          where.path += d;
        }
      }
      break;
    case Origin::Strata:
      where.path = dirs.strata.empty() ? std::string(info.library)
                                       : (fs::path(dirs.strata) / info.library).string();
      where.available = !dirs.strata.empty() && isLibraryFile(where.path);
      break;
  }
  return where;
}

std::vector<Location> locateAll(const SearchDirs& dirs) {
  std::vector<Location> all;
  for (const AllocatorInfo& a : kAllocators) all.push_back(locate(a, dirs));
  return all;
}

std::string howToGet(const Location& where) {
  const AllocatorInfo& a = *where.info;
  switch (a.origin) {
    case Origin::System:
      return "glibc's malloc is always available";
    case Origin::Peer:
      return std::string(a.library) + " not found in " + where.path + "; install the Debian package " +
             std::string(a.packages);
    case Origin::Strata:
      return where.path + " does not exist; build the CMake target " + std::string(a.cmakeTarget) +
             " (or point STRATA_LIB_DIR at the directory holding " + std::string(a.library) + ")";
  }
  return {};
}

}  // namespace strata::registry
