// A small JSON reader for the compare tests, to check results.json as a program would read it.
#pragma once
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/process.hpp"

namespace strata::test {

struct Json;
using JsonPtr = std::shared_ptr<Json>;

// One JSON value; objects keep their keys in a map (results.json has no duplicate keys).
struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;
  const Json& operator[](const std::string& key) const {
    static const Json kMissing;
    const auto it = object.find(key);
    return it == object.end() ? kMissing : it->second;
  }
  bool has(const std::string& key) const { return object.count(key) != 0; }
};

// A recursive-descent parser of RFC 8259 JSON; parse() throws std::runtime_error with the
// offset of the first thing it cannot read.
class JsonParser {
 public:
  explicit JsonParser(std::string text) : s_(std::move(text)) {}
  Json parse() {
    Json v = value();
    space();
    if (i_ != s_.size()) fail("trailing text");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    throw std::runtime_error("JSON: " + why + " at offset " + std::to_string(i_));
  }
  void space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool word(const char* w) {
    const std::string_view sw = w;
    if (s_.compare(i_, sw.size(), sw) != 0) return false;
    i_ += sw.size();
    return true;
  }
  std::string str() {
    expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c == '\\') {
        if (i_ >= s_.size()) fail("unterminated escape");
        c = s_[i_++];
        switch (c) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'u':
            if (i_ + 4 > s_.size()) fail("short \\u escape");
            out += static_cast<char>(std::stoi(s_.substr(i_, 4), nullptr, 16));
            i_ += 4;
            break;
          case '"': case '\\': case '/': out += c; break;
          default: fail("bad escape");
        }
      } else {
        out += c;
      }
    }
    if (i_ >= s_.size()) fail("unterminated string");
    ++i_;
    return out;
  }
  Json value() {
    space();
    if (i_ >= s_.size()) fail("unexpected end");
    Json v;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      v.kind = Json::Object;
      if (eat('}')) return v;
      do {
        space();
        std::string key = str();
        expect(':');
        v.object[key] = value();
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++i_;
      v.kind = Json::Array;
      if (eat(']')) return v;
      do v.array.push_back(value());
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.kind = Json::String;
      v.string = str();
    } else if (word("true")) {
      v.kind = Json::Bool;
      v.boolean = true;
    } else if (word("false")) {
      v.kind = Json::Bool;
    } else if (word("null")) {
      v.kind = Json::Null;
    } else {
      std::size_t used = 0;
      try {
        v.number = std::stod(s_.substr(i_, 40), &used);
      } catch (const std::exception&) {
        fail("bad value");
      }
      v.kind = Json::Number;
      i_ += used;
    }
    return v;
  }

  std::string s_;
  std::size_t i_ = 0;
};

inline Json parseJsonFile(const std::filesystem::path& p) { return JsonParser(slurp(p)).parse(); }

}  // namespace strata::test
