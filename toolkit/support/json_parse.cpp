// Reading JSON (json_value.hpp): a recursive-descent parser with a depth limit, and
// readJsonFile's messages. The DOM itself is json_value.cpp.
#include "support/json_value.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "support/error.hpp"
#include "support/files.hpp"

namespace strata::support {

namespace {

constexpr int kMaxDepth = 256;

// Thrown inside the parser only, caught by parseJson.
struct ParseFailure {
  std::string message;
  std::size_t offset;
  bool truncated;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  JsonValue document() {
    JsonValue v = value(0);
    skipSpace();
    if (pos_ < s_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;

  [[noreturn]] void fail(std::string message) const {
    throw ParseFailure{std::move(message), pos_, pos_ >= s_.size()};
  }
  [[noreturn]] void unexpected(std::string_view wanted) const {
    if (pos_ >= s_.size()) fail("the text ends where " + std::string(wanted) + " should be");
    fail("expected " + std::string(wanted) + ", found " + describe(s_[pos_]));
  }
  static std::string describe(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "byte 0x%02x", u);
      return buf;
    }
    return std::string("'") + c + "'";
  }

  void skipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool peekIs(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  void expect(char c, std::string_view wanted) {
    if (!peekIs(c)) unexpected(wanted);
    ++pos_;
  }

  JsonValue value(int depth) {
    skipSpace();
    if (pos_ >= s_.size()) unexpected("a value");
    const char c = s_[pos_];
    if (c == '{' || c == '[') {
      if (depth >= kMaxDepth) fail("nested deeper than 256 levels");
      return c == '{' ? object(depth + 1) : array(depth + 1);
    }
    if (c == '"') return JsonValue::makeString(string());
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    if (literal("true")) return JsonValue::makeBool(true);
    if (literal("false")) return JsonValue::makeBool(false);
    if (literal("null")) return JsonValue::makeNull();
    unexpected("a value");
  }

  // A keyword; a text that ends inside one is truncated, a wrong letter is not JSON.
  bool literal(std::string_view word) {
    if (s_[pos_] != word[0]) return false;
    for (std::size_t i = 1; i < word.size(); ++i) {
      const std::size_t at = pos_ + i;
      if (at >= s_.size()) {
        pos_ = at;
        fail("the text ends inside '" + std::string(word) + "'");
      }
      if (s_[at] != word[i]) {
        pos_ = at;
        fail("expected '" + std::string(word) + "'");
      }
    }
    pos_ += word.size();
    return true;
  }

  JsonValue object(int depth) {
    ++pos_;  // '{'
    std::vector<JsonValue::Member> members;
    skipSpace();
    if (peekIs('}')) {
      ++pos_;
      return JsonValue::makeObject();
    }
    for (;;) {
      skipSpace();
      if (!peekIs('"')) unexpected("a member name in quotes");
      std::string key = string();
      skipSpace();
      expect(':', "':' after a member name");
      members.emplace_back(std::move(key), value(depth));
      skipSpace();
      if (peekIs(',')) {
        ++pos_;
        continue;
      }
      expect('}', "',' or '}' in an object");
      return JsonValue::makeObject(std::move(members));
    }
  }

  JsonValue array(int depth) {
    ++pos_;  // '['
    std::vector<JsonValue> items;
    skipSpace();
    if (peekIs(']')) {
      ++pos_;
      return JsonValue::makeArray();
    }
    for (;;) {
      items.push_back(value(depth));
      skipSpace();
      if (peekIs(',')) {
        ++pos_;
        continue;
      }
      expect(']', "',' or ']' in an array");
      return JsonValue::makeArray(std::move(items));
    }
  }

  void digits(std::string_view what) {
    if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') unexpected(what);
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, kept as its text.
  JsonValue number() {
    const std::size_t start = pos_;
    if (peekIs('-')) ++pos_;
    if (peekIs('0')) {
      ++pos_;
      if (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') fail("a number with a leading zero");
    } else {
      digits("a digit");
    }
    if (peekIs('.')) {
      ++pos_;
      digits("a digit after '.'");
    }
    if (peekIs('e') || peekIs('E')) {
      ++pos_;
      if (peekIs('+') || peekIs('-')) ++pos_;
      digits("a digit in the exponent");
    }
    return JsonValue::makeNumberText(std::string(s_.substr(start, pos_ - start)));
  }

  unsigned hex4() {
    unsigned v = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      if (pos_ >= s_.size()) fail("the text ends inside a \\u escape");
      const char c = s_[pos_];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) fail("a \\u escape needs four hexadecimal digits");
      v = v * 16 + static_cast<unsigned>(d);
    }
    return v;
  }

  static void appendUtf8(std::string& out, unsigned cp) {
    const auto byte = [&out](unsigned b) { out += static_cast<char>(b); };
    if (cp < 0x80) return byte(cp);
    if (cp < 0x800) {
      byte(0xc0 | (cp >> 6));
    } else if (cp < 0x10000) {
      byte(0xe0 | (cp >> 12));
      byte(0x80 | ((cp >> 6) & 0x3f));
    } else {
      byte(0xf0 | (cp >> 18));
      byte(0x80 | ((cp >> 12) & 0x3f));
      byte(0x80 | ((cp >> 6) & 0x3f));
    }
    byte(0x80 | (cp & 0x3f));
  }

  // After "\u": one code point, a surrogate pair joined.
  unsigned codePoint() {
    const unsigned first = hex4();
    if (first >= 0xdc00 && first <= 0xdfff) fail("a \\u escape of a lone low surrogate");
    if (first < 0xd800 || first > 0xdbff) return first;
    if (pos_ + 1 >= s_.size()) {
      pos_ = s_.size();
      fail("the text ends inside a surrogate pair");
    }
    if (s_[pos_] != '\\' || s_[pos_ + 1] != 'u') fail("a high surrogate not followed by a low one");
    pos_ += 2;
    const unsigned second = hex4();
    if (second < 0xdc00 || second > 0xdfff) fail("a high surrogate not followed by a low one");
    return 0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00);
  }

  std::string string() {
    ++pos_;  // '"'
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) fail("the text ends inside a string");
      const char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail("a control character inside a string");
      if (c != '\\') {
        out += c;
        ++pos_;
        continue;
      }
      if (++pos_ >= s_.size()) fail("the text ends inside an escape");
      const char e = s_[pos_++];
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': appendUtf8(out, codePoint()); break;
        default: --pos_; fail("an unknown escape \\" + std::string(1, e));
      }
    }
  }
};

}  // namespace

std::optional<JsonValue> parseJson(std::string_view text, JsonError* error) {
  try {
    return Parser(text).document();
  } catch (const ParseFailure& f) {
    if (error) {
      error->message = f.message;
      error->offset = f.offset;
      error->truncated = f.truncated;
      error->line = 1;
      std::size_t lineStart = 0;
      for (std::size_t i = 0; i < f.offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
          ++error->line;
          lineStart = i + 1;
        }
      }
      error->column = f.offset - lineStart + 1;
    }
    return std::nullopt;
  }
}

JsonValue readJsonFile(const std::string& path) {
  const std::string text = readWholeFile(path);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw Error(path + ": is empty");
  JsonError e;
  std::optional<JsonValue> v = parseJson(text, &e);
  if (v) return std::move(*v);
  if (e.truncated)
    throw Error(path + ": truncated: the JSON ends at byte " + std::to_string(text.size()) +
                " before the document is complete");
  throw Error(path + ": not JSON at line " + std::to_string(e.line) + ", column " +
              std::to_string(e.column) + ": " + e.message);
}

}  // namespace strata::support
