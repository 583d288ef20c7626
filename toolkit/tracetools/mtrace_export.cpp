// mtrace export (mtrace.hpp): a Strata trace as the lines glibc's mtrace would have written,
// with synthesised addresses and reaps expanded into their objects.
#include "tracetools/mtrace.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "strata/trace/parallel_reader.hpp"
#include "strata/trace/reader.hpp"
#include "tracetools/trace_error.hpp"

namespace strata::tracetools {
namespace {

using trace::Event;
using trace::kNoObject;
using trace::Op;

// A FILE* that is closed on every path; writes report errors through fail().
class TextOut {
 public:
  explicit TextOut(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "w")) {
    if (f_ == nullptr) throw support::Error(path + ": cannot create: " + std::strerror(errno));
  }
  ~TextOut() {
    if (f_ != nullptr) std::fclose(f_);
  }
  TextOut(const TextOut&) = delete;
  TextOut& operator=(const TextOut&) = delete;
  std::FILE* get() const { return f_; }
  // Flushes and closes; throws naming the file if any write failed.
  void close() {
    std::FILE* f = f_;
    f_ = nullptr;
    const bool bad = std::ferror(f) != 0;
    if (std::fclose(f) != 0 || bad)
      throw support::Error(path_ + ": cannot write: " + std::strerror(errno));
  }

 private:
  std::string path_;
  std::FILE* f_;
};

// Prints a size as glibc's "%#lx" does ("0" for zero).
void putSize(std::FILE* f, std::uint64_t size) {
  if (size == 0) std::fputs(" 0\n", f);
  else std::fprintf(f, " %#" PRIx64 "\n", size);
}

// Writes mtrace lines for a trace's events: synthesised addresses, reaps expanded.
class Exporter {
 public:
  explicit Exporter(std::FILE* f) : f_(f) {}

  void apply(const Event& e) {
    const bool failed = (e.flags & trace::kFlagFailed) != 0;
    switch (e.op) {
      case Op::Malloc: case Op::Calloc: case Op::Memalign: case Op::New: case Op::ReapMalloc:
        if (failed) {
          std::fputs("+ (nil)", f_);
          putSize(f_, e.size);
          ++lines_;
        } else {
          plus(e);
          if (e.op == Op::ReapMalloc) members_[e.target].push_back(e.object);
        }
        break;
      case Op::Realloc:
        if (e.target == kNoObject) {
          if (failed) bang(0, e.size);
          else plus(e);
        } else if (!failed) {
          std::fprintf(f_, "< %#" PRIx64 "\n", addr_[e.target]);
          live_[e.target] = false;
          place(e);
          std::fprintf(f_, "> %#" PRIx64, addr_[e.object]);
          putSize(f_, e.size);
          lines_ += 2;
        } else if (e.size == 0) {
          minus(e.target);
        } else {
          bang(addr_[e.target], e.size);
        }
        break;
      case Op::Free: case Op::Delete: case Op::ReapFree:
        if (e.object != kNoObject) minus(e.object);
        break;
      case Op::ReapCreate:
        if (!failed) {
          slot(e.object);
          if (e.target != kNoObject) members_[e.target].push_back(e.object);
          reap_[e.object] = true;
        }
        break;
      case Op::ReapClear: case Op::ReapDestroy:
        clearReap(e.target);
        break;
      case Op::Touch: case Op::ThreadStart: case Op::ThreadEnd:
        break;  // mtrace has no such lines
    }
  }

  std::uint64_t lines() const { return lines_; }

 private:
  void slot(std::uint64_t id) {
    if (id >= addr_.size()) {
      const std::size_t n = id + 1 > 2 * addr_.size() ? id + 1 : 2 * addr_.size();
      addr_.resize(n, 0);
      live_.resize(n, false);
      reap_.resize(n, false);
    }
  }
  // Gives object e.object a fresh address: after everything handed out so far, aligned to
  // 16 bytes or the requested alignment, with a 16-byte gap like a malloc header.
  void place(const Event& e) {
    slot(e.object);
    std::uint64_t align = 16;
    if ((e.flags & trace::kFlagAligned) && e.alignLog2 < 40 && (std::uint64_t{1} << e.alignLog2) > align)
      align = std::uint64_t{1} << e.alignLog2;
    const std::uint64_t a = (next_ + align - 1) & ~(align - 1);
    next_ = a + ((e.size + 15) & ~std::uint64_t{15}) + 16;
    addr_[e.object] = a;
    live_[e.object] = true;
  }
  void plus(const Event& e) {
    place(e);
    std::fprintf(f_, "+ %#" PRIx64, addr_[e.object]);
    putSize(f_, e.size);
    ++lines_;
  }
  void minus(std::uint64_t id) {
    if (id >= addr_.size() || reap_[id]) return;
    std::fprintf(f_, "- %#" PRIx64 "\n", addr_[id]);
    live_[id] = false;
    ++lines_;
  }
  void bang(std::uint64_t addr, std::uint64_t size) {
    if (addr == 0) std::fputs("! (nil)", f_);
    else std::fprintf(f_, "! %#" PRIx64, addr);
    putSize(f_, size);
    ++lines_;
  }
  // "-" for every live object of the reap and of the reaps under it (worklist, no recursion).
  void clearReap(std::uint64_t reap) {
    std::vector<std::uint64_t> work{reap};
    while (!work.empty()) {
      const std::uint64_t r = work.back();
      work.pop_back();
      const auto it = members_.find(r);
      if (it == members_.end()) continue;
      const std::vector<std::uint64_t> ids = std::move(it->second);
      members_.erase(it);
      for (const std::uint64_t id : ids) {
        if (reap_[id]) work.push_back(id);
        else if (live_[id]) minus(id);
      }
    }
  }

  std::FILE* f_;
  std::uint64_t next_ = 0x10000000;
  std::vector<std::uint64_t> addr_;
  std::vector<bool> live_;
  std::vector<bool> reap_;
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> members_;
  std::uint64_t lines_ = 0;
};

}  // namespace

MtraceExportResult exportMtrace(const std::string& tracePath, const std::string& outPath) {
  const int fd = ::open(tracePath.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw support::Error(tracePath + ": cannot open: " + std::strerror(errno));
  MtraceExportResult result;
  try {
    TextOut out(outPath);
    trace::ParallelReader<trace::FdSource> reader(trace::FdSource{fd});  // decodes on a 2nd core
    Exporter ex(out.get());
    std::fputs("= Start\n", out.get());
    Event e;
    trace::ReadStatus status;
    while ((status = reader.next(e)) == trace::ReadStatus::Event) {
      ex.apply(e);
      ++result.events;
    }
    if (status == trace::ReadStatus::Error)
      throw traceError(tracePath, reader.error());
    std::fputs("= End\n", out.get());
    out.close();
    result.lines = ex.lines();
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return result;
}

}  // namespace strata::tracetools
