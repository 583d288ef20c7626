// Running the built `strata` (STRATA_CLI_PATH) as a user would, for the command's end-to-end
// tests: without STRATA_LIB_DIR, LD_PRELOAD and STRATA_INCLUDE_DIR from the caller's
// environment, so the libraries and headers found are the build tree's, unless `env` sets
// them.
#pragma once
#include <string>
#include <vector>

#include "common/process.hpp"

namespace strata::test {

inline RunResult runStrata(const std::vector<std::string>& args, const EnvChanges& env = {}) {
  EnvChanges all{{"STRATA_LIB_DIR", std::nullopt},
                 {"LD_PRELOAD", std::nullopt},
                 {"STRATA_INCLUDE_DIR", std::nullopt}};
  all.insert(all.end(), env.begin(), env.end());
  return runProgram(STRATA_CLI_PATH, args, all);
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace strata::test
