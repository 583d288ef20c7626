// Symbolizer (symbolize.hpp): modules by address, ELF symbols by virtual address, and one
// addr2line run per module whose output is matched back to the addresses it was given.
#include "tracetools/symbolize.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "tracetools/elf_symbols.hpp"
#include "support/process.hpp"
#include "support/files.hpp"

namespace strata::tracetools {
namespace {

using support::baseName;  // "/usr/lib/libc.so.6" -> "libc.so.6"

std::string hexAddress(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The lookup address of a return address: inside the call instruction, so the line is the
// call's and a call that ends a function is not credited to the next one.
std::uint64_t callSite(std::uint64_t offset) { return offset == 0 ? 0 : offset - 1; }

// Writes `text` to a new temporary file and returns its path (empty on failure).
std::string temporaryFile(const std::string& text) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") +
                     "/strata-addr2line-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) return {};
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    return {};
  }
  return path;
}

}  // namespace

std::string describe(const SourceFrame& f) {
  const std::string where =
      f.module.empty() ? hexAddress(f.address) : f.module + "+" + hexAddress(f.offset);
  if (f.function.empty()) return where;
  if (f.file.empty()) return f.function + " (" + where + ")";
  return f.function + " (" + baseName(f.file) + ":" + std::to_string(f.line) + ")";
}

Symbolizer::Symbolizer(std::vector<Module> modules) : modules_(std::move(modules)) {}

long Symbolizer::moduleOf(std::uint64_t address) const {
  for (std::size_t i = modules_.size(); i-- > 0;)
    if (address >= modules_[i].start && address < modules_[i].end) return static_cast<long>(i);
  return -1;
}

std::vector<SourceFrame> Symbolizer::resolve(const std::vector<std::uint64_t>& addresses) {
  std::vector<SourceFrame> out(addresses.size());
  std::map<long, std::vector<SourceFrame*>> byModule;  // in module order: warnings too
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    out[i].address = addresses[i];
    const long m = moduleOf(addresses[i]);
    if (m < 0) continue;
    out[i].module = baseName(modules_[static_cast<std::size_t>(m)].path);
    out[i].offset = addresses[i] - modules_[static_cast<std::size_t>(m)].bias;
    byModule[m].push_back(&out[i]);
  }
  for (auto& [m, frames] : byModule) {
    const Module& mod = modules_[static_cast<std::size_t>(m)];
    const ElfSymbols elf(mod.path);
    if (!elf.ok()) {
      warnings_.push_back(mod.path + ": " + elf.error() + " (shown as module+offset)");
      continue;
    }
    if (!mod.buildId.empty() && !elf.buildId().empty() && elf.buildId() != mod.buildId) {
      warnings_.push_back(mod.path +
                          ": not the file the trace was recorded with (another build id; shown "
                          "as module+offset)");
      continue;
    }
    for (SourceFrame* f : frames) f->function = elf.functionAt(callSite(f->offset));
    addLines(mod, frames);
  }
  return out;
}

// Runs `addr2line -a -f -C -i -e FILE` with the frames' call addresses on its input. With -a
// each answer starts with the address in hex, then function / file:line pairs, innermost
// inlined function first: the frame takes the first pair (the function the line is in).
void Symbolizer::addLines(const Module& m, std::vector<SourceFrame*>& frames) {
  std::string input;
  for (const SourceFrame* f : frames) input += hexAddress(callSite(f->offset)) + "\n";
  const std::string in = temporaryFile(input);
  if (in.empty()) return;
  support::ChildSpec spec;
  spec.argv = {"addr2line", "-a", "-f", "-C", "-i", "-e", m.path};
  spec.stdinPath = in;
  spec.captureStdout = true;
  spec.stderrPath = "/dev/null";
  const support::ProcessResult r = support::runChild(spec);
  ::unlink(in.c_str());
  if (!r.succeeded()) {
    const std::string why = r.started ? support::describeStatus(r) : "addr2line not found";
    const std::string w = "addr2line (binutils): " + why + ": no file:line for " + m.path;
    warnings_.push_back(w);
    return;
  }
  std::istringstream lines(r.out);
  std::string line;
  long index = -1;
  bool first = false;  // the next pair is the answer's first
  std::string function;
  while (std::getline(lines, line)) {
    if (line.rfind("0x", 0) == 0) {
      ++index;
      first = true;
      continue;
    }
    if (index < 0 || static_cast<std::size_t>(index) >= frames.size() || !first) continue;
    if (function.empty()) {
      function = line;
      continue;
    }
    // "file:line" or "file:line (discriminator N)"; "??:0" / "??:?" when unknown.
    SourceFrame& f = *frames[static_cast<std::size_t>(index)];
    const std::string where = line.substr(0, line.find(" ("));
    const auto colon = where.rfind(':');
    if (function != "??") f.function = function;
    if (colon != std::string::npos && where.compare(0, 2, "??") != 0) {
      f.file = where.substr(0, colon);
      f.line = static_cast<unsigned>(std::strtoul(where.c_str() + colon + 1, nullptr, 10));
    }
    function.clear();
    first = false;
  }
}

}  // namespace strata::tracetools
