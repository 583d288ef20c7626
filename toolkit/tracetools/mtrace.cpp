// mtrace import and export (mtrace.hpp).
#include "mtrace.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hex.hpp"
#include "strata/trace/reader.hpp"
#include "trace_file.hpp"

namespace strata::tracetools {
namespace {

using trace::Event;
using trace::kNoObject;
using trace::Op;

// One parsed event line: its op character and up to two numbers.
struct Line {
  char op = 0;
  std::uint64_t addr = 0;  // 0 for "(nil)"
  std::uint64_t size = 0;
};

// Splits a line at runs of spaces and tabs.
std::vector<std::string_view> tokens(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

// Parses "0x1f" (or "0", which is how "%#lx" prints zero) into v; false when malformed.
bool parseHex(std::string_view t, std::uint64_t& v) {
  if (t == "0") {
    v = 0;
    return true;
  }
  if (t.size() < 3 || t[0] != '0' || (t[1] != 'x' && t[1] != 'X')) return false;
  return parseHexDigits(t.substr(2), v);
}

// An address token: "%p" output, "(nil)" for null.
bool parseAddr(std::string_view t, std::uint64_t& v) {
  if (t == "(nil)") {
    v = 0;
    return true;
  }
  return parseHex(t, v);
}

bool isOp(std::string_view t) {
  return t.size() == 1 && (t[0] == '+' || t[0] == '-' || t[0] == '<' || t[0] == '>' || t[0] == '!');
}

// Parses one event line (caller prefix allowed). Returns an empty string on success, else why
// the line is malformed.
std::string parseLine(std::string_view text, Line& out) {
  const std::vector<std::string_view> t = tokens(text);
  std::size_t k = 0;
  if (!t.empty() && t[0] == "@") {
    // Skip the caller: the op is the first op token followed by an address.
    k = 1;
    while (k < t.size() && !(isOp(t[k]) && k + 1 < t.size() &&
                             (t[k + 1] == "(nil)" || t[k + 1].starts_with("0x"))))
      ++k;
    if (k == t.size()) return "a caller ('@ ...') with no event after it";
  }
  if (k >= t.size() || !isOp(t[k])) return "expected an event (+ - < > !) or '= Start'/'= End'";
  out.op = t[k][0];
  const bool hasSize = out.op == '+' || out.op == '>' || out.op == '!';
  const std::size_t want = hasSize ? 2 : 1;
  if (t.size() - k - 1 != want)
    return std::string("'") + out.op + "' takes " + (hasSize ? "an address and a size" : "one address");
  if (!parseAddr(t[k + 1], out.addr)) return "bad address '" + std::string(t[k + 1]) + "'";
  out.size = 0;
  if (hasSize && !parseHex(t[k + 2], out.size)) return "bad size '" + std::string(t[k + 2]) + "'";
  return {};
}

// Converts the mtrace lines to events, keeping the live address -> id map.
class Importer {
 public:
  Importer(const std::string& inName, const std::string& outPath)
      : name_(inName), out_(outPath) {}

  // Handles one line (number `lineNo`, without its newline).
  void line(std::string_view text, std::uint64_t lineNo) {
    ++result_.lines;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.find_first_not_of(" \t") == std::string_view::npos) return;
    if (text.starts_with("= ")) return;  // "= Start", "= End"
    Line l;
    const std::string why = parseLine(text, l);
    if (!why.empty()) fail(lineNo, why, text);
    if (pending_ && l.op != '>') fail(lineNo, "'<' on line " + std::to_string(pendingLine_) + " is not followed by '>'", text);
    switch (l.op) {
      case '+': {
        Event e;
        e.op = Op::Malloc;
        e.size = l.size;
        if (l.addr == 0) {
          e.flags = trace::kFlagFailed;
          append(e);
        } else {
          if (live_.contains(l.addr)) ++result_.reusedAddresses;
          live_[l.addr] = append(e);
        }
        break;
      }
      case '-': {
        if (l.addr == 0) break;
        const auto it = live_.find(l.addr);
        if (it == live_.end()) {
          ++result_.unknownFrees;
          break;
        }
        Event e;
        e.op = Op::Free;
        e.object = it->second;
        live_.erase(it);
        append(e);
        break;
      }
      case '<':
        pending_ = true;
        pendingLine_ = lineNo;
        pendingAddr_ = l.addr;
        break;
      case '>': {
        if (!pending_) fail(lineNo, "'>' without the '<' line before it", text);
        pending_ = false;
        if (l.addr == 0) fail(lineNo, "'>' with a null address", text);
        Event e = reallocOf(pendingAddr_);
        e.size = l.size;
        if (live_.contains(l.addr)) ++result_.reusedAddresses;
        live_[l.addr] = append(e);
        break;
      }
      case '!': {
        Event e = reallocOf(l.addr);
        e.flags |= trace::kFlagFailed;
        e.size = l.size;
        if (e.target != kNoObject) live_[l.addr] = e.target;  // a failed realloc keeps it
        append(e);
        break;
      }
    }
  }

  // Checks nothing is left half-read, then writes the trailer.
  MtraceImportResult finish(std::uint64_t lastLine) {
    if (pending_)
      fail(lastLine, "the file ends after the '<' on line " + std::to_string(pendingLine_), "");
    out_.finish();
    result_.events = out_.events();
    result_.objects = out_.objects();
    return result_;
  }

 private:
  [[noreturn]] void fail(std::uint64_t lineNo, const std::string& why, std::string_view text) {
    std::string m = name_ + ":" + std::to_string(lineNo) + ": malformed mtrace line: " + why;
    if (!text.empty()) {
      // The line as it was, its first 100 bytes, with control and non-ASCII bytes as \xNN
      // so that a binary file does not garble the terminal.
      m += ": '";
      for (const char c : text.substr(0, 100)) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f) {
          m += c;
        } else {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", u);
          m += hex;
        }
      }
      m += text.size() > 100 ? "...'" : "'";
    }
    throw std::runtime_error(m);
  }

  // A realloc event of the object at `addr`, taken off the live map; realloc(NULL, n) when
  // addr is null or not live (the latter counted).
  Event reallocOf(std::uint64_t addr) {
    Event e;
    e.op = Op::Realloc;
    const auto it = addr == 0 ? live_.end() : live_.find(addr);
    if (it == live_.end()) {
      if (addr != 0) ++result_.unknownReallocs;
      e.flags = trace::kFlagNull;
    } else {
      e.target = it->second;
      live_.erase(it);
    }
    return e;
  }

  std::uint64_t append(const Event& e) { return out_.append(e); }

  std::string name_;
  TraceFile out_;
  std::unordered_map<std::uint64_t, std::uint64_t> live_;  // address -> object id
  MtraceImportResult result_;
  bool pending_ = false;
  std::uint64_t pendingLine_ = 0;
  std::uint64_t pendingAddr_ = 0;
};

// A FILE* that is closed on every path; writes report errors through fail().
class TextOut {
 public:
  explicit TextOut(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "w")) {
    if (f_ == nullptr) throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
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
      throw std::runtime_error(path_ + ": cannot write: " + std::strerror(errno));
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

MtraceImportResult importMtrace(std::istream& in, const std::string& inName,
                                const std::string& outPath) {
  Importer imp(inName, outPath);
  std::string text;
  std::uint64_t lineNo = 0;
  while (std::getline(in, text)) imp.line(text, ++lineNo);
  if (in.bad()) throw std::runtime_error(inName + ": read error");
  return imp.finish(lineNo);
}

MtraceImportResult importMtrace(const std::string& inPath, const std::string& outPath) {
  std::ifstream in(inPath, std::ios::binary);
  if (!in) throw std::runtime_error(inPath + ": cannot open: " + std::strerror(errno));
  return importMtrace(in, inPath, outPath);
}

MtraceExportResult exportMtrace(const std::string& tracePath, const std::string& outPath) {
  const int fd = ::open(tracePath.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(tracePath + ": cannot open: " + std::strerror(errno));
  trace::TraceReader<trace::FdSource> reader(trace::FdSource{fd});
  MtraceExportResult result;
  try {
    TextOut out(outPath);
    Exporter ex(out.get());
    std::fputs("= Start\n", out.get());
    Event e;
    trace::ReadStatus status;
    while ((status = reader.next(e)) == trace::ReadStatus::Event) {
      ex.apply(e);
      ++result.events;
    }
    if (status == trace::ReadStatus::Error)
      throw std::runtime_error(tracePath + ": " + reader.error().message());
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
