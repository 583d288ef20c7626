// heaptrack import (heaptrack.hpp): heaptrack's tables (strings, instruction pointers, traces,
// allocation infos) are kept as read; '+' and '-' become events at once.
#include "tracetools/heaptrack.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <unordered_map>

#include "tracetools/compressed_input.hpp"
#include "tracetools/heaptrack_line.hpp"
#include "tracetools/heaptrack_modules.hpp"
#include "tracetools/trace_file.hpp"
#include "support/error.hpp"
#include "strata/platform/page.hpp"

namespace strata::tracetools {
namespace {

using trace::Event;
using trace::Op;

// The live objects of one allocation info, oldest first.
struct LiveQueue {
  std::vector<std::uint64_t> ids;
  std::size_t head = 0;
  std::size_t size() const { return ids.size() - head; }
  std::uint64_t pop() {
    const std::uint64_t id = ids[head++];
    if (head == ids.size()) {
      ids.clear();
      head = 0;
    } else if (head >= 64 && head * 2 >= ids.size()) {
      ids.erase(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(head));
      head = 0;
    }
    return id;
  }
};

class Importer {
 public:
  Importer(const std::string& inName, const std::string& outPath, ChunkCompression compression)
      : name_(inName), out_(outPath, WithSites::Yes, compression) {}

  void line(std::string_view text, std::uint64_t lineNo) {
    ++result_.lines;
    lineNo_ = lineNo;
    text_ = text;
    if (text.size() >= 2 && (text[0] == 'm' || text[0] == 'x') && text[1] == ' ') failRaw();
    HeaptrackLine l;
    if (std::string why = parseHeaptrackLine(text, result_.fileVersion, l); !why.empty())
      fail(why);
    const std::vector<std::uint64_t>& n = l.numbers;
    switch (l.type) {
      case 'v':
        version(n);
        break;
      case 'I':
        pageSize_ = n[0];
        break;
      case 'A':
        result_.attached = true;
        break;
      case 's':
        strings_.emplace_back(l.text);
        break;
      case 'i': {
        Ip ip{n[0], checkString(n[1], "module"), {}};
        for (std::size_t k = 2; k < n.size(); k += 3) {
          const std::uint64_t fn = checkString(n[k], "function");
          if (k + 2 < n.size()) checkString(n[k + 1], "file");
          if (fn != 0) ip.functions.push_back(fn);
        }
        ips_.push_back(std::move(ip));
        break;
      }
      case 't':
        if (n[0] > ips_.size()) fail(range("instruction pointer", n[0], ips_.size()));
        if (n[1] > traces_.size()) fail(range("parent trace", n[1], traces_.size()));
        traces_.push_back(Trace{n[0], n[1]});
        break;
      case 'a':
        if (n[1] > traces_.size()) fail(range("trace", n[1], traces_.size()));
        infos_.push_back(Info{n[0], n[1]});
        live_.emplace_back();
        break;
      case '+':
        if (result_.fileVersion == 0) allocateByAddress(n[0], n[1], n[2]);
        else allocate(n[0]);
        break;
      case '-':
        if (result_.fileVersion == 0) freeByAddress(n[0]);
        else release(n[0]);
        break;
      case 'c':
        if (n[0] > ~std::uint64_t{0} / 1000000) fail("time stamp out of range");
        timeNs_ = std::max(timeNs_, n[0] * 1000000);  // never back, as in recorded traces
        break;
      default:  // '#', 'X', 'S', 'R': nothing to import
        break;
    }
  }

  HeaptrackImportResult finish() {
    if (result_.lines == 0) throw support::Error(name_ + ": empty: not a heaptrack recording");
    std::vector<HeaptrackModuleEvidence> evidence;
    for (const auto& [stringId, e] : modules_) evidence.push_back(e);
    const std::vector<LocatedModule> located = locateModules(evidence, pageSize_, result_.warnings);
    std::vector<trace::ModuleInfo> infos;
    for (const LocatedModule& m : located)
      infos.push_back(trace::ModuleInfo{m.start, m.end, m.bias, m.path.data(), m.path.size(),
                                        reinterpret_cast<const unsigned char*>(m.buildId.data()),
                                        m.buildId.size()});
    if (!infos.empty()) out_.addModules(infos);
    out_.finish();
    result_.events = out_.events();
    result_.objects = out_.objects();
    result_.modules = infos.size();
    return result_;
  }

 private:
  struct Ip {
    std::uint64_t address;
    std::uint64_t module;  // string id, 0: unknown
    std::vector<std::uint64_t> functions;  // string ids: the function, then inlined callers
  };
  struct Trace {
    std::uint64_t ip, parent;
  };
  struct Info {
    std::uint64_t size, trace;
  };

  [[noreturn]] void fail(const std::string& why) const {
    std::string m = name_ + ":" + std::to_string(lineNo_) + ": malformed heaptrack line: " + why;
    if (!text_.empty()) {
      // The line as it was, its first 100 bytes, control and non-ASCII bytes as \xNN.
      m += ": '";
      for (const char c : text_.substr(0, 100)) {
        const auto u = static_cast<unsigned char>(c);
        char hex[8];
        if (u >= 0x20 && u < 0x7f) hex[0] = c, hex[1] = 0;
        else std::snprintf(hex, sizeof hex, "\\x%02x", u);
        m += hex;
      }
      m += text_.size() > 100 ? "...'" : "'";
    }
    throw support::Error(m);
  }

  // A raw recording has the load addresses ('m') heaptrack_interpret turns into names, and
  // addresses in '+' and '-': not what this importer reads, and easily made into it.
  [[noreturn]] void failRaw() const {
    throw support::Error(
        name_ + ":" + std::to_string(lineNo_) + ": a raw heaptrack recording ('" +
        std::string(1, text_[0]) + "' lines, as `heaptrack --raw` writes): interpret it first, "
        "e.g. zstd -dc < FILE | /usr/lib/heaptrack/libexec/heaptrack_interpret | zstd -c > "
        "FILE2.zst, and import that");
  }

  // "v HEAPTRACK_VERSION FILE_VERSION". heaptrack 1.2 wrote "v 10200" alone for what is file
  // version 1; files newer than version 3 (heaptrack 1.4) may mean something else by a line.
  void version(const std::vector<std::uint64_t>& n) {
    if (n.size() == 1) {
      result_.fileVersion = n[0] == 0x10200 ? 1 : 0;
      return;
    }
    if (n[1] > kNewestFileVersion)
      fail("file version " + std::to_string(n[1]) + " is newer than this importer reads (0 to " +
           std::to_string(kNewestFileVersion) + "; heaptrack 1.4 writes 3)");
    result_.fileVersion = static_cast<unsigned>(n[1]);
  }
  static constexpr std::uint64_t kNewestFileVersion = 3;

  static std::string range(const char* what, std::uint64_t got, std::uint64_t have) {
    return std::string(what) + " index " + std::to_string(got) + " is not defined yet (" +
           std::to_string(have) + " so far)";
  }

  std::uint64_t checkString(std::uint64_t id, const char* what) const {
    if (id > strings_.size()) fail(range((std::string(what) + " string").c_str(), id, strings_.size()));
    return id;
  }

  // The site of heaptrack trace `t` (defined the first time it is needed), kNoSite for none.
  std::uint64_t siteOf(std::uint64_t t) {
    if (t == 0) return trace::kNoSite;
    if (sites_.size() <= t) sites_.resize(traces_.size() + 1, trace::kNoSite);
    if (sites_[t] != trace::kNoSite) return sites_[t];
    std::uint64_t frames[trace::kMaxSiteDepth];
    std::size_t depth = 0;
    // Parents always have smaller indices (checked on their 't' lines): the walk ends.
    for (std::uint64_t k = t; k != 0 && depth < trace::kMaxSiteDepth; k = traces_[k - 1].parent) {
      const std::uint64_t ipId = traces_[k - 1].ip;
      if (ipId == 0) continue;
      const Ip& ip = ips_[ipId - 1];
      frames[depth++] = ip.address + 1;  // heaptrack's are return addresses - 1
      noteModule(ip);
    }
    if (depth == 0) return trace::kNoSite;
    sites_[t] = out_.defineSite(frames, depth);
    ++result_.sites;
    return sites_[t];
  }

  // Records what `ip` says of its module, for locateModules.
  void noteModule(const Ip& ip) {
    if (ip.module == 0) return;
    HeaptrackModuleEvidence& m = modules_[ip.module];
    if (m.path.empty()) m.path = strings_[ip.module - 1];
    m.low = std::min(m.low, ip.address + 1);  // the frames' addresses
    m.high = std::max(m.high, ip.address + 1);
    if (!ip.functions.empty() && m.samples.size() < HeaptrackModuleEvidence::kMaxSamples) {
      HeaptrackModuleEvidence::Sample s{ip.address, {}};
      for (const std::uint64_t f : ip.functions) s.functions.push_back(strings_[f - 1]);
      m.samples.push_back(std::move(s));
    }
  }

  std::uint64_t malloc(std::uint64_t size, std::uint64_t traceId) {
    Event e;
    e.op = Op::Malloc;
    e.size = size;
    e.timeNs = timeNs_;
    e.site = siteOf(traceId);
    return out_.append(e);
  }

  void free(std::uint64_t object) {
    Event e;
    e.op = Op::Free;
    e.object = object;
    e.timeNs = timeNs_;
    out_.append(e);
  }

  void allocate(std::uint64_t info) {
    if (info >= infos_.size()) fail(range("allocation info", info, infos_.size()));
    live_[info].ids.push_back(malloc(infos_[info].size, infos_[info].trace));
  }

  void release(std::uint64_t info) {
    if (info >= infos_.size()) fail(range("allocation info", info, infos_.size()));
    LiveQueue& q = live_[info];
    if (q.size() == 0) {
      ++result_.unknownFrees;
      return;
    }
    if (q.size() > 1) ++result_.ambiguousFrees;
    free(q.pop());
  }

  // File version 0: '+' and '-' name addresses, so identity is exact.
  void allocateByAddress(std::uint64_t size, std::uint64_t traceId, std::uint64_t ptr) {
    if (traceId > traces_.size()) fail(range("trace", traceId, traces_.size()));
    byAddress_[ptr] = malloc(size, traceId);
  }
  void freeByAddress(std::uint64_t ptr) {
    const auto it = byAddress_.find(ptr);
    if (it == byAddress_.end()) {
      ++result_.unknownFrees;
      return;
    }
    free(it->second);
    byAddress_.erase(it);
  }

  std::string name_;
  TraceFile out_;
  HeaptrackImportResult result_;
  std::uint64_t lineNo_ = 0;
  std::string_view text_;
  std::uint64_t timeNs_ = 0;
  std::uint64_t pageSize_ = platform::kPageSize;  // the recording system's, when it says none
  std::vector<std::string> strings_;
  std::vector<Ip> ips_;
  std::vector<Trace> traces_;
  std::vector<Info> infos_;
  std::vector<LiveQueue> live_;
  std::vector<std::uint64_t> sites_;  // trace id -> site id
  std::map<std::uint64_t, HeaptrackModuleEvidence> modules_;   // by module string id
  std::unordered_map<std::uint64_t, std::uint64_t> byAddress_;
};

}  // namespace

HeaptrackImportResult importHeaptrack(std::istream& in, const std::string& inName,
                                      const std::string& outPath, ChunkCompression compression) {
  CompressedInput input(in, inName);
  Importer imp(inName, outPath, compression);
  std::string text;
  std::uint64_t lineNo = 0;
  while (input.getLine(text)) imp.line(text, ++lineNo);
  return imp.finish();
}

HeaptrackImportResult importHeaptrack(const std::string& inPath, const std::string& outPath,
                                      ChunkCompression compression) {
  std::ifstream in(inPath, std::ios::binary);
  if (!in) throw support::Error(inPath + ": cannot open: " + std::strerror(errno));
  return importHeaptrack(in, inPath, outPath, compression);
}

}  // namespace strata::tracetools
