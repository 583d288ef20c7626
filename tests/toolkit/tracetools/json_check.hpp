// A strict little JSON parser for the tests of the CLI's `--json` outputs: checks that the
// output is valid JSON and reads the members of its top-level object (each as its JSON text).
#pragma once
#include <cctype>
#include <cstddef>
#include <map>
#include <string>

namespace tttest {

class Json {
 public:
  explicit Json(const std::string& s) : s_(s) {}
  // Parses the whole text as one object; false when it is not valid JSON.
  bool parseObject(std::map<std::string, std::string>& top) {
    ws();
    if (!object(&top)) return false;
    ws();
    return i_ == s_.size();
  }

 private:
  void ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool lit(const char* w) {
    const std::string word = w;
    if (s_.compare(i_, word.size(), word) != 0) return false;
    i_ += word.size();
    return true;
  }
  bool string(std::string* out) {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    const std::size_t start = ++i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\') ++i_;
      ++i_;
    }
    if (i_ >= s_.size()) return false;
    if (out != nullptr) *out = s_.substr(start, i_ - start);
    ++i_;
    return true;
  }
  bool number() {
    const std::size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
                              s_[i_] == 'e' || s_[i_] == 'E' || s_[i_] == '+' || s_[i_] == '-'))
      ++i_;
    return i_ > start && std::isdigit(static_cast<unsigned char>(s_[i_ - 1]));
  }
  bool value() {
    ws();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '{') return object(nullptr);
    if (c == '[') {
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
      for (;;) {
        if (!value()) return false;
        ws();
        if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
        if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
        return false;
      }
    }
    if (c == '"') return string(nullptr);
    if (c == 't') return lit("true");
    if (c == 'f') return lit("false");
    if (c == 'n') return lit("null");
    return number();
  }
  bool object(std::map<std::string, std::string>* top) {
    if (i_ >= s_.size() || s_[i_] != '{') return false;
    ++i_;
    ws();
    if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
    for (;;) {
      ws();
      std::string key;
      if (!string(&key)) return false;
      ws();
      if (i_ >= s_.size() || s_[i_] != ':') return false;
      ++i_;
      ws();
      const std::size_t start = i_;
      if (!value()) return false;
      if (top != nullptr) (*top)[key] = s_.substr(start, i_ - start);
      ws();
      if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
      if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
      return false;
    }
  }
  const std::string& s_;
  std::size_t i_ = 0;
};

}  // namespace tttest
