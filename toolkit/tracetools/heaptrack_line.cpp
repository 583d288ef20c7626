// Splitting heaptrack lines (heaptrack_line.hpp).
#include "tracetools/heaptrack_line.hpp"

#include <cstdio>

#include "tracetools/hex.hpp"

namespace strata::tracetools {
namespace {

// Appends the space-separated hex numbers of `s` to `out`; "" or why not.
std::string parseNumbers(std::string_view s, std::vector<std::uint64_t>& out) {
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] != ' ') ++i;
    if (i == start) break;
    std::uint64_t v = 0;
    const std::string_view t = s.substr(start, i - start);
    if (!parseHexDigits(t, v)) return "bad hex number '" + std::string(t.substr(0, 40)) + "'";
    out.push_back(v);
  }
  return {};
}

// "'t' takes 2 numbers, got 1".
std::string countError(char type, const char* want, std::size_t got) {
  return std::string("'") + type + "' takes " + want + ", got " + std::to_string(got);
}

}  // namespace

std::string parseHeaptrackLine(std::string_view line, unsigned fileVersion, HeaptrackLine& out) {
  out.numbers.clear();
  out.text = {};
  if (line.empty() || line[0] == '#') {
    out.type = '#';
    return {};
  }
  out.type = line[0];
  if (std::string_view("XSAsvitac+-cRI").find(out.type) == std::string_view::npos) {
    const auto u = static_cast<unsigned char>(out.type);
    char shown[8];
    if (u >= 0x20 && u < 0x7f) std::snprintf(shown, sizeof shown, "%c", out.type);
    else std::snprintf(shown, sizeof shown, "\\x%02x", u);
    return std::string("unknown line type '") + shown + "'";
  }
  if (line.size() > 1 && line[1] != ' ') return "expected a space after the line type";
  const std::string_view rest = line.size() > 1 ? line.substr(2) : std::string_view{};
  switch (out.type) {
    case 'X': case 'S':
      out.text = rest;
      return {};
    case 'A':
      return {};
    case 's': {
      if (fileVersion < 3) {
        out.text = rest;
        return {};
      }
      // "s LENGTH TEXT": LENGTH hex bytes of text follow one space.
      const std::size_t sp = rest.find(' ');
      std::uint64_t len = 0;
      if (sp == std::string_view::npos || !parseHexDigits(rest.substr(0, sp), len))
        return "'s' takes a hex length, a space and the string";
      if (len != rest.size() - sp - 1)
        return "the string's length is " + std::to_string(rest.size() - sp - 1) + " bytes, not " +
               std::to_string(len) + " as its line says";
      out.text = rest.substr(sp + 1);
      return {};
    }
    default:  // the types made of numbers
      break;
  }
  if (std::string why = parseNumbers(rest, out.numbers); !why.empty()) return why;
  const std::size_t n = out.numbers.size();
  switch (out.type) {
    case 'v':
      if (n < 1 || n > 2) return countError('v', "1 or 2 numbers", n);
      break;
    case 'i':
      // IP MODULE, then nothing, a function, or function file line and inlined triples.
      if (n < 2 || (n > 3 && (n - 2) % 3 != 0)) return countError('i', "2, 3 or 2 + 3k numbers", n);
      break;
    case 't': case 'a':
      if (n != 2) return countError(out.type, "2 numbers", n);
      break;
    case '+':
      if (fileVersion >= 1 ? n != 1 : n != 3)
        return countError('+', fileVersion >= 1 ? "1 number" : "3 numbers (file version 0)", n);
      break;
    case '-': case 'c': case 'R':
      if (n != 1) return countError(out.type, "1 number", n);
      break;
    case 'I':
      if (n < 1) return countError('I', "at least 1 number", n);
      break;
  }
  return {};
}

}  // namespace strata::tracetools
