// Allocator specs: what the user writes wherever `strata` takes an allocator. Beyond a known
// name ("jemalloc"), a spec names a library of the user's ("./libmine.so", "mine=./libmine.so")
// and settings put in the child's environment only
// ("jemalloc:MALLOC_CONF=narenas:1,dirty_decay_ms:0", "strata:STRATA_PURGE_DELAY_MS=0").
//
//   SPEC     := [LABEL "="] BASE (":" NAME "=" VALUE)*
//   BASE     := a known allocator name | a library path (holds a '/' or ends in .so / .so.N)
//   NAME     := an environment variable name in capitals ([A-Z_][A-Z0-9_]*)
//
// A VALUE runs to the next ':' that is followed by NAME '=' (so MALLOC_CONF's "narenas:1" and
// GLIBC_TUNABLES's "a=1:b=2" stay whole). LABEL ([A-Za-z0-9_.+-]+) is what tables, JSON and
// plots show; without it the label is the spec as written (a path: its file name).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "registry/allocator_registry.hpp"

namespace strata::registry {

struct AllocatorSpec {
  std::string text;                   // as written
  std::string label;                  // readable name for tables, JSON, plots
  const AllocatorInfo* known = nullptr;  // the registry's allocator; nullptr for a library path
  std::string library;                // the library path a path spec names
  std::vector<std::string> settings;  // NAME=VALUE, set in the child's environment only
  bool isNone = false;                // the do-nothing allocator of `strata replay` ("none")
};

// Parses one spec. Throws support::Error with exit status 2 naming what is wrong (unknown
// allocator name with the known ones, a setting that is not NAME=VALUE, an empty label...).
// "none" parses (isNone) only when allowNone.
AllocatorSpec parseSpec(std::string_view text, bool allowNone = false);

// Splits a comma-separated list of specs: a comma starts a new spec only when what follows
// it starts one (a known name, LABEL=, or a path), so commas inside a setting's value
// ("MALLOC_CONF=narenas:1,dirty_decay_ms:0") stay in it.
std::vector<std::string> splitSpecList(std::string_view list);

// Where a spec's library is: locate() for a known allocator (its path, or why it is
// missing), the path itself for a library path. Settings and label are carried along.
struct ResolvedAllocator {
  AllocatorSpec spec;
  Location where;          // where.info is nullptr for a library path
  bool available = false;  // the library exists (always true for glibc and none)
  std::string preload;     // the library to preload; empty for glibc and none
  std::string detail;      // why it is not available (what to install or build)
};
ResolvedAllocator resolve(const AllocatorSpec& spec, const SearchDirs& dirs);

// What a probe of the library preloaded with the spec's settings saw (strata-probe).
struct ProbeResult {
  bool ok = false;         // preloaded, malloc/free are the library's, and small mallocs work
  std::string reason;      // when !ok: why, in one sentence naming the library
  std::string version;     // the allocator's version where it says (glibc, jemalloc, ...)
  std::string warnings;    // what the allocator printed on stderr at start-up (bad settings)
  bool settingsRejected = false;  // !ok because the allocator named a setting it rejects
};

// Starts strata-probe with the library in LD_PRELOAD and the settings in its environment,
// and checks that the library was preloaded, that malloc and free resolve to it (for glibc:
// to the C library), and that malloc serves requests up to 64 KiB. Never throws. The
// result of each (library, settings) pair is remembered for the life of the process.
ProbeResult probe(const ResolvedAllocator& allocator);

// Environment settings in the child: `settings` added to (or replacing in) `set`.
void addSettings(const AllocatorSpec& spec, std::vector<std::string>& set);

// A name safe in a file name: the label with anything but [A-Za-z0-9._-] as '_'.
std::string fileSafeLabel(std::string_view label);

}  // namespace strata::registry
