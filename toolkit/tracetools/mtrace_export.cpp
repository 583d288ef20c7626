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
#include <vector>

#include "strata/trace/live_table.hpp"
#include "strata/trace/parallel_reader.hpp"
#include "strata/trace/reader.hpp"
#include "tracetools/reap_members.hpp"
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

// What a live id is in the export: an object at its synthesised address, or a reap.
struct Placed {
  std::uint64_t address = 0;
  bool reap = false;
};

// Writes mtrace lines for a trace's events: synthesised addresses, reaps expanded. Only the
// ids live now are kept (a LiveTable), so memory follows the live set. An id no longer live
// has no address any more: a free of it writes nothing (nor does realloc(p, 0)), a realloc
// of it is written as realloc(NULL, n) ('+', or '! (nil)' when it failed).
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
          if (e.op == Op::ReapMalloc) member(e.target, e.object);
        }
        break;
      case Op::Realloc:
        realloc(e, failed);
        break;
      case Op::Free: case Op::Delete: case Op::ReapFree:
        if (e.object != kNoObject) minus(e.object);
        break;
      case Op::ReapCreate:
        if (!failed) {
          if (e.target != kNoObject) member(e.target, e.object);
          live_[e.object] = Placed{0, true};
        }
        break;
      case Op::ReapClear: case Op::ReapDestroy:
        clearReap(e.target);
        if (e.op == Op::ReapDestroy) {
          if (const Placed* r = live_.find(e.target); r != nullptr && r->reap) live_.erase(e.target);
        }
        break;
      case Op::Touch: case Op::ThreadStart: case Op::ThreadEnd:
        break;  // mtrace has no such lines
    }
  }

  std::uint64_t lines() const { return lines_; }

 private:
  // The address of live object `id`, or 0 when it is not one.
  std::uint64_t addressOf(std::uint64_t id) const {
    const Placed* p = live_.find(id);
    return p != nullptr && !p->reap ? p->address : 0;
  }
  void realloc(const Event& e, bool failed) {
    const std::uint64_t old = e.target == kNoObject ? 0 : addressOf(e.target);
    if (failed && e.size == 0 && e.target != kNoObject) {
      minus(e.target);  // realloc(p, 0) that freed p
    } else if (old == 0) {
      if (failed) bang(0, e.size);
      else plus(e);
    } else if (!failed) {
      std::fprintf(f_, "< %#" PRIx64 "\n", old);
      live_.erase(e.target);
      const std::uint64_t a = place(e);
      std::fprintf(f_, "> %#" PRIx64, a);
      putSize(f_, e.size);
      lines_ += 2;
    } else {
      bang(old, e.size);
    }
  }
  // Gives object e.object a fresh address: after everything handed out so far, aligned to
  // 16 bytes or the requested alignment, with a 16-byte gap like a malloc header.
  std::uint64_t place(const Event& e) {
    std::uint64_t align = 16;
    if ((e.flags & trace::kFlagAligned) && e.alignLog2 < 40 && (std::uint64_t{1} << e.alignLog2) > align)
      align = std::uint64_t{1} << e.alignLog2;
    const std::uint64_t a = (next_ + align - 1) & ~(align - 1);
    next_ = a + ((e.size + 15) & ~std::uint64_t{15}) + 16;
    live_[e.object] = Placed{a, false};
    return a;
  }
  void plus(const Event& e) {
    const std::uint64_t a = place(e);
    std::fprintf(f_, "+ %#" PRIx64, a);
    putSize(f_, e.size);
    ++lines_;
  }
  void minus(std::uint64_t id) {
    const Placed* p = live_.find(id);
    if (p == nullptr || p->reap) return;
    std::fprintf(f_, "- %#" PRIx64 "\n", p->address);
    live_.eraseFound(p);
    ++lines_;
  }
  void bang(std::uint64_t addr, std::uint64_t size) {
    if (addr == 0) std::fputs("! (nil)", f_);
    else std::fprintf(f_, "! %#" PRIx64, addr);
    putSize(f_, size);
    ++lines_;
  }
  void member(std::uint64_t reap, std::uint64_t id) {
    members_.add(reap, id, [this](std::uint64_t m) { return live_.find(m) != nullptr; });
  }
  // "-" for every live object of the reap and of the reaps under it, which are destroyed
  // with it (worklist, no recursion).
  void clearReap(std::uint64_t reap) {
    std::vector<std::uint64_t> work{reap};
    bool top = true;
    while (!work.empty()) {
      const std::uint64_t r = work.back();
      work.pop_back();
      if (!top) live_.erase(r);
      top = false;
      for (const std::uint64_t id : members_.take(r)) {
        const Placed* p = live_.find(id);
        if (p == nullptr) continue;
        if (p->reap) work.push_back(id);
        else minus(id);
      }
    }
  }

  std::FILE* f_;
  std::uint64_t next_ = 0x10000000;
  trace::LiveTable<Placed> live_;
  ReapMembers members_;
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
