// The live check of `strata tune -- COMMAND`: the command run on an allocator's default and
// on its recommended setting, taking turns, so the predicted gain can be set beside the live
// one.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "registry/allocator_spec.hpp"
#include "tune/tune_report.hpp"

namespace strata::tune {

// Runs `command` `rounds` times on each of the two (stdout and stderr discarded, peak RSS
// measured from strata-exec); medians of wall time and peak RSS. A run that fails ends the
// check with the reason in LiveCheck::detail. `note` is called before each round.
LiveCheck checkLive(const std::string& name, const std::vector<std::string>& command,
                    const registry::ResolvedAllocator& allocator, const Candidate& best,
                    unsigned rounds, const std::function<void(const std::string&)>& note);

}  // namespace strata::tune
