// Building the search spaces' compositions (tune_compositions.hpp).
#include "tune/tune_compositions.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include "support/proc.hpp"
#include "support/process.hpp"

namespace strata::tune {

std::vector<BuiltComposition> buildCompositions(const Spaces& spaces, const std::filesystem::path& dir,
                                                std::vector<std::string>& skipped) {
  std::vector<BuiltComposition> built;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    skipped.push_back("compositions: cannot create " + dir.string() + ": " + ec.message());
    return built;
  }
  for (const Composition& c : spaces.compositions) {
    const std::string library = (dir / ("lib" + c.name + ".so")).string();
    const std::string log = (dir / (c.name + ".build.log")).string();
    std::fprintf(stderr, "strata tune: building the composition %s\n", c.name.c_str());
    support::ChildSpec spec;
    spec.argv = {support::selfExe(), "build", c.type, "-o", library};
    spec.stdoutPath = "/dev/null";
    spec.stderrPath = log;
    const support::ProcessResult r = support::runChild(spec);
    if (!r.succeeded()) {
      std::ifstream in(log);
      std::string first;
      std::getline(in, first);
      skipped.push_back(c.name + " (" + spaces.path + ":" + std::to_string(c.line) +
                        "): strata build failed: " + (first.empty() ? support::describeStatus(r) : first) +
                        " (all of it in " + log + ")");
      continue;
    }
    built.push_back({c.name, c.type, library});
  }
  return built;
}

}  // namespace strata::tune
