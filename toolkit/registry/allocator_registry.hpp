// The allocators Strata knows (glibc, the peers Debian packages, Strata's own shared
// libraries), where each one's library is, and what to install or build when it is missing.
// A component of its own (target strata_registry) so that the `strata` command, the replay
// runner and bench/preload_table agree on names, order and paths without depending on each other.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata::registry {

// Where an allocator comes from, which decides where its library is looked for.
enum class Origin {
  System,  // glibc: the C library's own malloc, nothing to preload
  Peer,    // another project's library, installed from a Debian package
  Strata,  // one of Strata's own libraries, built from layers/malloc/
};

// One known allocator: its name on the command line, the file name of its library, and how
// to get that library (Debian packages for a peer, the CMake target for Strata's own).
struct AllocatorInfo {
  std::string_view name;
  Origin origin;
  std::string_view library;     // file name; empty for glibc
  std::string_view packages;    // Debian packages providing `library` (peers only)
  std::string_view cmakeTarget; // CMake target building `library` (Strata only)
};

// Every known allocator, in the order the command and the benchmark list them: glibc,
// jemalloc, mimalloc, tcmalloc, strata-kingsley, strata-lea, strata, strata-secure.
std::span<const AllocatorInfo> knownAllocators();

// The allocator with this name, or nullptr.
const AllocatorInfo* findAllocator(std::string_view name);

// The known names joined by ", " (for error messages).
std::string knownAllocatorNames();

// Where libraries are looked for: the system's library directories (peers, searched in
// order) and the directory holding Strata's own libraries.
struct SearchDirs {
  std::vector<std::string> system;
  std::string strata;
};

// The directories for this process: the multiarch directory derived from where the running
// C library was loaded from (plus the usual fallbacks), and Strata's lib dir, which is
// $STRATA_LIB_DIR when set and <directory of this executable>/../lib otherwise.
SearchDirs defaultSearchDirs();

// The result of looking for one allocator's library.
struct Location {
  const AllocatorInfo* info = nullptr;
  bool available = false;
  std::string path;  // the library when available (empty for glibc); else where it was looked for
};

// Looks for one allocator's library in `dirs`. glibc is always available with an empty path.
Location locate(const AllocatorInfo& info, const SearchDirs& dirs);

// True when `path` names a readable regular file (symbolic links followed).
bool isLibraryFile(const std::string& path);

// locate() for every known allocator, in the order of knownAllocators().
std::vector<Location> locateAll(const SearchDirs& dirs);

// What to do when an allocator is not available, in one sentence: the Debian package to
// install for a peer, the target to build for one of Strata's own (naming where it looked).
std::string howToGet(const Location& where);

}  // namespace strata::registry
