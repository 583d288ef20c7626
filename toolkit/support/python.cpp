// Finding Python and the plot scripts (python.hpp).
#include "support/python.hpp"

#include <cstdlib>
#include <vector>

#include "support/process.hpp"

namespace strata::support {

std::optional<std::string> findPython() {
  std::vector<std::string> candidates;
  const char* env = std::getenv("STRATA_PYTHON");
  if (env != nullptr && env[0] != '\0') candidates.emplace_back(env);
  else candidates = {"/usr/bin/python3", "python3"};
  for (const std::string& c : candidates) {
    support::ChildSpec spec;
    spec.argv = {c, "-c", "import matplotlib"};
    spec.quiet = true;
    if (support::runChild(spec).succeeded()) return c;
  }
  return std::nullopt;
}

}  // namespace strata::support
