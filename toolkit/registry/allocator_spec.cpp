// Allocator specs: parsing, resolving and probing (see allocator_spec.hpp).
#include "registry/allocator_spec.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>

#include "support/error.hpp"
#include "support/files.hpp"
#include "support/helpers.hpp"
#include "support/proc.hpp"
#include "support/process.hpp"

namespace strata::registry {
namespace {

namespace fs = std::filesystem;

// A spec that names nothing usable: exit status 2, as for a wrong invocation, but without the
// usage (the message says what to write).
[[noreturn]] void bad(const std::string& message) { throw support::Error(message, 2); }

bool isNameStart(char c) { return (c >= 'A' && c <= 'Z') || c == '_'; }
bool isNameChar(char c) { return isNameStart(c) || (c >= '0' && c <= '9'); }
bool isLabelChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '+' ||
         c == '-';
}

// Length of an environment variable name followed by '=' at the start of `s`; 0 if none.
std::size_t settingNameAt(std::string_view s) {
  if (s.empty() || !isNameStart(s[0])) return 0;
  std::size_t i = 1;
  while (i < s.size() && isNameChar(s[i])) ++i;
  return i < s.size() && s[i] == '=' ? i : 0;
}

// A library path: holds a slash, or ends in ".so" or ".so.<digits and dots>".
bool looksLikePath(std::string_view s) {
  if (s.find('/') != std::string_view::npos) return true;
  const std::size_t so = s.rfind(".so");
  if (so == std::string_view::npos || so == 0) return false;
  for (std::size_t i = so + 3; i < s.size(); ++i)
    if (!(std::isdigit(static_cast<unsigned char>(s[i])) != 0 || s[i] == '.')) return false;
  return s.size() == so + 3 || s[so + 3] == '.';
}

// Length of a LABEL followed by '=' at the start of `s`; 0 if none.
std::size_t labelAt(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && isLabelChar(s[i])) ++i;
  return i > 0 && i < s.size() && s[i] == '=' ? i : 0;
}

// The base of a spec (a known name or a path) at the start of `s`: up to the first ':' that
// starts a setting, or the whole text.
std::string_view baseOf(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i] == ':' && settingNameAt(s.substr(i + 1)) != 0) return s.substr(0, i);
  // A path with no settings may not hold a ':' anyway (LD_PRELOAD cannot carry it).
  return s;
}

// True when `piece` begins a spec of its own: LABEL=BASE, a known name, or a path.
bool startsSpec(std::string_view piece) {
  if (const std::size_t l = labelAt(piece); l != 0) piece.remove_prefix(l + 1);
  const std::string_view base = baseOf(piece);
  return findAllocator(base) != nullptr || base == "none" || looksLikePath(base);
}

// True when the two names are the same file (after links); false if either is missing.
bool sameFile(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// The value of `key=` in the probe's output, or empty.
std::string field(const std::string& out, const std::string& key) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  return {};
}

// True when `line` is the dynamic loader's ("ERROR: ld.so: object ... cannot be preloaded
// (...): ignored.", "symbol lookup error: ...").
bool isLoaderLine(const std::string& line) {
  return line.find("ld.so") != std::string::npos || line.find("symbol lookup error") != std::string::npos ||
         line.find("error while loading shared libraries") != std::string::npos;
}

// The loader's complaint about `library` in the probe's stderr, one line; empty if none
// (complaints about other objects already in the caller's LD_PRELOAD are not ours).
std::string loaderComplaint(const std::string& err, const std::string& library) {
  if (library.empty()) return {};
  std::istringstream in(err);
  std::string line;
  while (std::getline(in, line))
    if (isLoaderLine(line) && line.find(library) != std::string::npos) return line;
  return {};
}

// The probe's stderr without the loader's own lines: what the allocator itself printed.
std::string allocatorWarnings(const std::string& err) {
  std::istringstream in(err);
  std::string line, kept;
  while (std::getline(in, line))
    if (!line.empty() && !isLoaderLine(line)) kept += line + "\n";
  return kept;
}

// The first line of what the allocator printed that rejects a setting (jemalloc's "Invalid
// conf pair" and "Out-of-range conf value", mimalloc's "has an invalid value", libstrata.so's
// "ignoring"), or empty. Other warnings (mimalloc falling back from huge pages) are not.
std::string complaint(const std::string& warnings) {
  std::istringstream in(warnings);
  std::string line;
  while (std::getline(in, line)) {
    std::string lower = line;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* word : {"invalid", "out-of-range", "unknown", "ignoring", "not recognised"})
      if (lower.find(word) != std::string::npos) return line;
  }
  return {};
}

ProbeResult runProbe(const ResolvedAllocator& a) {
  ProbeResult r;
  const std::string name = a.preload.empty() ? a.spec.label : a.preload;
  if (!support::helperPresent(support::HelperId::Probe)) {
    r.reason = "cannot check " + name + ": the probe program " +
               support::helperMissing(support::HelperId::Probe);
    return r;
  }
  const std::string probe = support::helperPath(support::HelperId::Probe);
  // The probe's stderr goes to a private file: the loader's and the allocator's complaints.
  const char* tmpdir = std::getenv("TMPDIR");
  std::string errPath = std::string(tmpdir != nullptr && tmpdir[0] != '\0' ? tmpdir : "/tmp") +
                        "/strata-probe-XXXXXX";
  const int fd = ::mkstemp(errPath.data());
  if (fd < 0) {
    r.reason = "cannot check " + name + ": cannot create a temporary file in " + errPath;
    return r;
  }
  ::close(fd);
  support::ChildSpec spec;
  spec.argv = {probe};
  spec.preload = a.preload;
  addSettings(a.spec, spec.set);
  spec.captureStdout = true;
  spec.stderrPath = errPath;
  const support::ProcessResult run = support::runChild(spec);
  const std::string err = support::readFile(errPath);
  ::unlink(errPath.c_str());
  r.warnings = allocatorWarnings(err);
  r.version = field(run.out, "version");
  if (a.spec.known != nullptr && a.spec.known->origin == Origin::System) r.version = field(run.out, "libc");
#ifdef STRATA_VERSION
  if (a.spec.known != nullptr && a.spec.known->origin == Origin::Strata) r.version = "strata " STRATA_VERSION;
#endif
  const std::string loader = loaderComplaint(err, a.preload);
  if (!run.succeeded()) {
    r.reason = name + " cannot be preloaded: " +
               (!loader.empty() ? loader
                                   : "a program with it preloaded ended with " +
                                         support::describeStatus(run) +
                                         (r.warnings.empty() ? "" : " (" + r.warnings.substr(0, r.warnings.find('\n')) + ")"));
    return r;
  }
  if (!loader.empty()) {
    r.reason = name + " cannot be preloaded: " + loader;
    return r;
  }
  const std::string mallocFrom = field(run.out, "malloc");
  const std::string freeFrom = field(run.out, "free");
  if (const std::string bad = complaint(r.warnings); !bad.empty() && !a.spec.settings.empty()) {
    r.settingsRejected = true;
    r.reason = a.spec.label + ": the allocator rejects its settings" +
               (r.version.empty() ? "" : " (" + r.version + ")") + ": " + bad;
    return r;
  }
  // A request of 64 KiB or less it cannot serve (the probe lists them smallest first): no
  // program gets far on it (a heap with no memory behind it).
  if (const std::string nomem = field(run.out, "nomem");
      !nomem.empty() && std::strtoull(nomem.c_str(), nullptr, 10) <= 65536) {
    r.reason = name + " does not work as malloc: with it preloaded, malloc(" + nomem + ") returned NULL";
    return r;
  }
  if (a.preload.empty()) {
    r.ok = true;  // glibc: nothing preloaded; malloc is the C library's
    return r;
  }
  if (!sameFile(mallocFrom, a.preload) || !sameFile(freeFrom, a.preload)) {
    r.reason = name + " does not take over malloc and free: preloaded, malloc comes from " +
               (mallocFrom.empty() ? std::string("nowhere") : mallocFrom) + " and free from " +
               (freeFrom.empty() ? std::string("nowhere") : freeFrom) +
               " (does the library export malloc, free, calloc and realloc?)";
    return r;
  }
  r.ok = true;
  return r;
}

}  // namespace

AllocatorSpec parseSpec(std::string_view text, bool allowNone) {
  AllocatorSpec out;
  out.text = std::string(text);
  if (text.empty()) bad("empty allocator spec");
  std::string_view rest = text;
  if (const std::size_t l = labelAt(rest); l != 0 && !looksLikePath(rest.substr(0, l))) {
    out.label = std::string(rest.substr(0, l));
    rest.remove_prefix(l + 1);
    if (rest.empty()) bad("allocator spec '" + out.text + "' names nothing after '" + out.label + "='");
  } else if (!rest.empty() && rest[0] == '=') {
    bad("allocator spec '" + out.text + "' has an empty label before '='");
  }
  const std::string_view base = baseOf(rest);
  std::string_view settings = rest.substr(base.size());
  if (base.empty()) bad("allocator spec '" + out.text + "' names no allocator before ':'");
  if (base == "none") {
    if (!allowNone) bad("allocator 'none' is only for `strata replay`");
    out.isNone = true;
  } else if (const AllocatorInfo* info = findAllocator(base); info != nullptr) {
    out.known = info;
  } else if (looksLikePath(base)) {
    if (base.find(':') != std::string_view::npos)
      bad("library path '" + std::string(base) + "' holds a ':', which LD_PRELOAD cannot carry");
    out.library = fs::absolute(fs::path(std::string(base))).lexically_normal().string();
    if (out.library.find_first_of(" \t") != std::string::npos)
      bad("library path '" + out.library + "' holds a space, which LD_PRELOAD cannot carry");
  } else if (base.find(':') != std::string_view::npos) {
    const std::size_t colon = base.find(':');
    const std::string_view head = base.substr(0, colon);
    if (findAllocator(head) != nullptr || looksLikePath(head))
      bad("allocator spec '" + out.text + "': '" + std::string(base.substr(colon + 1)) +
          "' is not a setting (write NAME=VALUE with NAME in capitals, e.g. " +
          "jemalloc:MALLOC_CONF=narenas:1)");
    bad("unknown allocator '" + std::string(head) + "'; known allocators: " + knownAllocatorNames() +
        ", or a library path (./libmine.so)");
  } else {
    bad("unknown allocator '" + std::string(base) + "'; known allocators: " + knownAllocatorNames() +
        ", or a library path (./libmine.so)");
  }
  // Settings: ":NAME=VALUE" each, a value running to the next ':' or ',' that starts a setting.
  while (!settings.empty()) {
    settings.remove_prefix(1);  // the ':' or ','
    const std::size_t nameLen = settingNameAt(settings);
    if (nameLen == 0)
      bad("allocator spec '" + out.text + "': '" + std::string(settings) + "' is not a setting");
    std::size_t end = nameLen + 1;
    while (end < settings.size() &&
           !((settings[end] == ':' || settings[end] == ',') && settingNameAt(settings.substr(end + 1)) != 0))
      ++end;
    if (end == nameLen + 1)
      bad("allocator spec '" + out.text + "': setting " + std::string(settings.substr(0, nameLen)) +
          " has no value");
    const std::string setting(settings.substr(0, end));
    if (setting.rfind("LD_PRELOAD=", 0) == 0)
      bad("allocator spec '" + out.text + "': LD_PRELOAD is strata's to set (name the library instead)");
    out.settings.push_back(setting);
    settings.remove_prefix(end);
  }
  if (out.isNone && !out.settings.empty()) bad("allocator 'none' takes no settings");
  if (out.label.empty()) {
    if (!out.library.empty()) {
      out.label = fs::path(out.library).filename().string();
      for (const std::string& s : out.settings) out.label += ":" + s;
    } else {
      out.label = std::string(rest);
    }
  }
  return out;
}

std::vector<std::string> splitSpecList(std::string_view list) {
  std::vector<std::string> specs;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] != ',') continue;
    const std::string_view piece = list.substr(start, i - start);
    if (!specs.empty() && !piece.empty() && !startsSpec(piece) &&
        specs.back().find(':') != std::string::npos) {
      specs.back() += ",";
      specs.back() += piece;
    } else {
      specs.emplace_back(piece);
    }
    start = i + 1;
  }
  return specs;
}

ResolvedAllocator resolve(const AllocatorSpec& spec, const SearchDirs& dirs) {
  ResolvedAllocator r;
  r.spec = spec;
  if (spec.isNone) {
    r.available = true;
    return r;
  }
  if (spec.known != nullptr) {
    r.where = locate(*spec.known, dirs);
    r.available = r.where.available;
    if (r.available) {
      r.preload = r.where.path;
    } else {
      r.detail = howToGet(r.where);
    }
    return r;
  }
  r.where.path = spec.library;
  r.available = isLibraryFile(spec.library);
  r.where.available = r.available;
  if (r.available) {
    r.preload = spec.library;
  } else {
    r.detail = spec.library + " does not exist or cannot be read";
  }
  return r;
}

ProbeResult probe(const ResolvedAllocator& allocator) {
  static std::mutex lock;
  static std::map<std::string, ProbeResult> seen;
  std::string key = allocator.preload;
  for (const std::string& s : allocator.spec.settings) key += '\n' + s;
  {
    std::lock_guard<std::mutex> guard(lock);
    if (const auto it = seen.find(key); it != seen.end()) return it->second;
  }
  ProbeResult r;
  if (allocator.spec.isNone) {
    r.ok = true;
  } else if (!allocator.available) {
    r.reason = allocator.detail;
  } else {
    r = runProbe(allocator);
  }
  std::lock_guard<std::mutex> guard(lock);
  seen[key] = r;
  return r;
}


void addSettings(const AllocatorSpec& spec, std::vector<std::string>& set) {
  for (const std::string& s : spec.settings) {
    const std::string name = s.substr(0, s.find('=') + 1);
    bool replaced = false;
    for (std::string& existing : set)
      if (existing.rfind(name, 0) == 0) {
        existing = s;
        replaced = true;
      }
    if (!replaced) set.push_back(s);
  }
}

std::string fileSafeLabel(std::string_view label) {
  std::string out(label);
  for (char& c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-')) c = '_';
  return out;
}

}  // namespace strata::registry
