// Checking search spaces against the installed allocators (tune_check.hpp).
#include "tune/tune_check.hpp"

#include <link.h>

#include <cctype>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>

#include "support/process.hpp"

namespace strata::tune {
namespace {

// The dynamic loader this process runs under (ld-linux-x86-64.so.2 on Debian amd64).
std::string dynamicLoader() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        const std::size_t slash = name.rfind('/');
        if (name.compare(slash == std::string::npos ? 0 : slash + 1, 3, "ld-") == 0) {
          *static_cast<std::string*>(data) = name;
          return 1;
        }
        return 0;
      },
      &found);
  return found;
}

struct Range {
  std::uint64_t min = 0, max = 0;
};

std::optional<std::uint64_t> parseInteger(const std::string& s) {
  if (s.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    const unsigned long long v = std::stoull(s, &used, 0);
    if (used != s.size() || s[0] == '-') return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

// "glibc.malloc.arena_max: 0x0 (min: 0x1, max: 0xffffffffffffffff)" lines of --list-tunables.
std::map<std::string, Range> listTunables(std::string& error) {
  std::map<std::string, Range> tunables;
  const std::string loader = dynamicLoader();
  if (loader.empty()) {
    error = "cannot find the dynamic loader to list glibc's tunables";
    return tunables;
  }
  support::ChildSpec spec;
  spec.argv = {loader, "--list-tunables"};
  spec.captureStdout = true;
  spec.stderrPath = "/dev/null";
  const support::ProcessResult r = support::runChild(spec);
  if (!r.succeeded() || r.out.empty()) {
    error = loader + " --list-tunables failed (" + support::describeStatus(r) +
            "); glibc older than 2.33 cannot list its tunables";
    return tunables;
  }
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    const std::size_t colon = line.find(':');
    const std::size_t min = line.find("(min: "), max = line.find(", max: ");
    if (colon == std::string::npos || min == std::string::npos || max == std::string::npos) continue;
    Range range;
    const auto lo = parseInteger(line.substr(min + 6, max - min - 6));
    const auto hi = parseInteger(line.substr(max + 7, line.find(')', max) - max - 7));
    if (!lo || !hi) continue;
    range.min = *lo;
    range.max = *hi;
    tunables[line.substr(0, colon)] = range;
  }
  return tunables;
}

std::string checkTunables(const Space& space, const std::string& where) {
  std::string error;
  const std::map<std::string, Range> tunables = listTunables(error);
  if (!error.empty()) return error;
  for (const Option& o : space.options) {
    const std::string full = space.prefix + o.name;
    const auto it = tunables.find(full);
    if (it == tunables.end())
      return where + ":" + std::to_string(o.line) + ": option '" + o.name + "': glibc has no tunable " + full;
    for (const std::string& v : o.values) {
      const auto n = parseInteger(v);
      if (!n || *n < it->second.min || *n > it->second.max)
        return where + ":" + std::to_string(o.line) + ": option '" + o.name + "': value '" + v +
               "' is outside glibc's range for " + full + " (" + std::to_string(it->second.min) +
               " to " + std::to_string(it->second.max) + ")";
    }
  }
  return {};
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string checkSpace(const Space& space, const registry::ResolvedAllocator& allocator,
                       const std::string& version, const std::string& spacesPath) {
  const std::string who = space.allocator + (version.empty() ? "" : " (" + version + ")");
  if (space.style == Style::Tunables) {
    const std::string err = checkTunables(space, spacesPath);
    return err.empty() ? err : who + ": " + err;
  }
  // The library's bytes, to find each option's name in them.
  std::string library;
  if (!allocator.preload.empty()) {
    std::ifstream in(allocator.preload, std::ios::binary);
    library.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  for (const Option& o : space.options) {
    const std::string at = spacesPath + ":" + std::to_string(o.line) + ": option '" + o.name + "'";
    if (!library.empty()) {
      const std::string variable = space.prefix + upper(o.name);
      if (library.find(o.name) == std::string::npos && library.find(variable) == std::string::npos)
        return who + ": " + at + " is not recognised: neither " + o.name + " nor " + variable +
               " occurs in " + allocator.preload;
    }
    for (std::size_t v = 0; v < o.values.size(); ++v) {
      Setting setting(space.options.size(), -1);
      setting[static_cast<std::size_t>(&o - space.options.data())] = static_cast<int>(v);
      registry::ResolvedAllocator probeOf = allocator;
      probeOf.spec.settings = environmentFor(space, setting);
      probeOf.spec.settings.insert(probeOf.spec.settings.end(), space.checkEnvironment.begin(),
                                   space.checkEnvironment.end());
      // A value the allocator rejects is an error; one that makes it fail otherwise (crash,
      // exit) is the search's to report, as any setting that fails on the trace.
      const registry::ProbeResult p = registry::probe(probeOf);
      if (!p.ok && p.settingsRejected)
        return who + ": " + at + ", value '" + o.values[v] + "': " + p.reason;
    }
  }
  return {};
}

}  // namespace strata::tune
