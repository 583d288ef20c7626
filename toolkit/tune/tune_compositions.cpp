// Building the search spaces' compositions (tune_compositions.hpp).
#include "tune/tune_compositions.hpp"

#include <system_error>

#include "build/build_library.hpp"
#include "support/files.hpp"

namespace strata::tune {

std::vector<BuiltComposition> buildCompositions(const Spaces& spaces, const std::filesystem::path& dir,
                                                std::vector<std::string>& skipped,
                                                const support::Notes& notes) {
  std::vector<BuiltComposition> built;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    skipped.push_back("compositions: cannot create " + dir.string() + ": " + ec.message());
    return built;
  }
  for (const Composition& c : spaces.compositions) {
    notes("strata tune: building the composition " + c.name);
    build::BuildRequest request;
    request.composition = c.type;
    request.output = (dir / ("lib" + c.name + ".so")).string();
    const build::BuildResult r = build::buildLibrary(request);
    if (!r.ok()) {
      const std::string log = (dir / (c.name + ".build.log")).string();
      support::writeFileAtomically(log, build::failureLine(request, r) + "\n" + r.fullLog);
      skipped.push_back(c.name + " (" + spaces.path + ":" + std::to_string(c.line) +
                        "): strata build failed: " + build::failureLine(request, r) +
                        " (all of it in " + log + ")");
      continue;
    }
    built.push_back({c.name, c.type, request.output});
  }
  return built;
}

}  // namespace strata::tune
