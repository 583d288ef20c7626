// mtrace import (mtrace.hpp): mtrace lines to a Strata trace. The export is mtrace_export.cpp.
#include "tracetools/mtrace.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "support/error.hpp"
#include "tracetools/hex.hpp"
#include "tracetools/trace_file.hpp"

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
  Importer(const std::string& inName, const std::string& outPath, ChunkCompression compression)
      : name_(inName), out_(outPath, WithSites::No, compression) {}

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
    throw support::Error(m);
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

}  // namespace

MtraceImportResult importMtrace(std::istream& in, const std::string& inName,
                                const std::string& outPath, ChunkCompression compression) {
  Importer imp(inName, outPath, compression);
  std::string text;
  std::uint64_t lineNo = 0;
  while (std::getline(in, text)) imp.line(text, ++lineNo);
  if (in.bad()) throw support::Error(inName + ": read error");
  return imp.finish(lineNo);
}

MtraceImportResult importMtrace(const std::string& inPath, const std::string& outPath,
                                ChunkCompression compression) {
  std::ifstream in(inPath, std::ios::binary);
  if (!in) throw support::Error(inPath + ": cannot open: " + std::strerror(errno));
  return importMtrace(in, inPath, outPath, compression);
}

}  // namespace strata::tracetools
