// `strata tune --compositions`: the heap compositions of the search spaces built into drop-in
// libraries by the build library (what `strata build` does), each then measured as an
// allocator of its own.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "support/notes.hpp"
#include "tune/tune_spaces.hpp"

namespace strata::tune {

struct BuiltComposition {
  std::string name;     // the space's name for it: the label of its library
  std::string type;     // the C++ heap type
  std::string library;  // the built library
};

// Builds every composition of `spaces` into `dir`/lib<name>.so, telling `notes` which one is
// being built; one that does not build (or does not take over malloc) is left out with the
// reason in `skipped`, and what the compiler said in `dir`/<name>.build.log.
std::vector<BuiltComposition> buildCompositions(const Spaces& spaces, const std::filesystem::path& dir,
                                                std::vector<std::string>& skipped,
                                                const support::Notes& notes);

}  // namespace strata::tune
