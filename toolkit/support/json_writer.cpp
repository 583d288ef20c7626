// The JSON writer (json_writer.hpp). A container's members are kept as text until it ends:
// only then is it known whether it holds containers and how wide it is, which its layout
// depends on.
#include "support/json_writer.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "support/json.hpp"

namespace strata::support {
namespace {

constexpr std::size_t kColumns = 100;

std::string indent(std::size_t depth) { return std::string(2 * depth, ' '); }

}  // namespace

std::string JsonWriter::quoted(std::string_view s) { return jsonString(s); }

std::string JsonWriter::real(double v, int digits) { return jsonNumber(v, digits); }

std::string JsonWriter::fixedText(double v, int decimals) {
  if (!std::isfinite(v)) return "null";
  char buf[352];  // %.f of the largest double with a few decimals
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

JsonWriter& JsonWriter::object() { return begin(nullptr, true); }
JsonWriter& JsonWriter::object(std::string_view key) { return begin(&key, true); }
JsonWriter& JsonWriter::array() { return begin(nullptr, false); }
JsonWriter& JsonWriter::array(std::string_view key) { return begin(&key, false); }

JsonWriter& JsonWriter::begin(const std::string_view* key, bool isObject) {
  put(key, std::string(), false);  // checks where it may go; the value comes at end()
  Open c;
  c.isObject = isObject;
  c.prefix = key != nullptr ? jsonString(*key) + ": " : std::string();
  open_.push_back(std::move(c));
  return *this;
}

JsonWriter& JsonWriter::end() {
  if (open_.empty()) throw std::logic_error("JsonWriter: end() with no container open");
  std::string text = open_.back().prefix + layout(open_.back());
  const bool empty = open_.back().members.empty();
  open_.pop_back();
  if (open_.empty()) {
    document_ = std::move(text);
    done_ = true;
  } else {
    open_.back().members.push_back(std::move(text));
    open_.back().scalarsOnly = open_.back().scalarsOnly && empty;
  }
  return *this;
}

JsonWriter& JsonWriter::put(const std::string_view* key, std::string value, bool scalar) {
  if (done_) throw std::logic_error("JsonWriter: a value after the document's end");
  if (open_.empty()) {
    if (key != nullptr) throw std::logic_error("JsonWriter: a member outside any object");
    if (scalar) document_ = std::move(value), done_ = true;
    return *this;
  }
  Open& c = open_.back();
  if (c.isObject != (key != nullptr))
    throw std::logic_error(c.isObject ? "JsonWriter: an object's member without a key"
                                      : "JsonWriter: an array's element with a key");
  if (scalar) c.members.push_back(key != nullptr ? jsonString(*key) + ": " + value : value);
  return *this;
}

// The container's text from its bracket on; its first line starts after its prefix, at the
// indentation of its depth.
std::string JsonWriter::layout(const Open& c) const {
  const char* brackets = c.isObject ? "{}" : "[]";
  std::string out(1, brackets[0]);
  if (c.members.empty()) return out + brackets[1];
  const std::size_t depth = open_.size() - 1;
  if (c.scalarsOnly) {
    std::size_t width = 2 * depth + c.prefix.size() + 2;  // the brackets
    for (const std::string& m : c.members) width += m.size() + 2;
    if (width <= kColumns) {
      for (std::size_t i = 0; i < c.members.size(); ++i) out += (i ? ", " : "") + c.members[i];
      return out + brackets[1];
    }
  }
  // One member a line, or scalars packed onto lines of at most kColumns.
  std::string line = indent(depth + 1);
  for (std::size_t i = 0; i < c.members.size(); ++i) {
    const std::string& m = c.members[i];
    const bool fresh = line.size() == 2 * (depth + 1);
    if (!fresh && (!c.scalarsOnly || line.size() + 1 + m.size() + 1 > kColumns)) {
      out += "\n" + line;
      line = indent(depth + 1);
    } else if (!fresh) {
      line += ' ';
    }
    line += m;
    if (i + 1 < c.members.size()) line += ',';
  }
  return out + "\n" + line + "\n" + indent(depth) + brackets[1];
}

std::string JsonWriter::text() const {
  if (!open_.empty()) throw std::logic_error("JsonWriter: text() with a container open");
  if (!done_) throw std::logic_error("JsonWriter: text() of an empty document");
  return document_ + "\n";
}

}  // namespace strata::support
