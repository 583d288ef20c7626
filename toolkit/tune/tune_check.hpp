// Checking a search space against the allocator installed here, before `strata tune` replays
// anything: every option must be one the installed version knows and every value one it
// accepts. glibc's tunables are checked against the dynamic loader's --list-tunables (names
// and ranges: glibc ignores unknown tunables silently); every other allocator by starting
// strata-probe with each value set (jemalloc and libstrata.so name a bad setting on stderr)
// and by finding each option's name in the library (an unknown variable is ignored silently).
// A value that makes the probe crash is not an error here: the search reports it as failed.
#pragma once
#include <string>

#include "registry/allocator_spec.hpp"
#include "tune/tune_spaces.hpp"

namespace strata::tune {

// An empty string when every option and value of `space` is accepted by `allocator` (the
// resolved base allocator, available); else one message naming the option, its line in the
// data file, the allocator's version and why.
std::string checkSpace(const Space& space, const registry::ResolvedAllocator& allocator,
                       const std::string& version, const std::string& spacesPath);

}  // namespace strata::tune
