// Reading JSON (json_value.hpp): the DOM's accessors, builders and dump(). The parser is
// json_parse.cpp.
#include "support/json_value.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "support/error.hpp"
#include "support/json.hpp"

namespace strata::support {

// ---- the value ----------------------------------------------------------------------------

bool JsonValue::boolean(bool fallback) const { return isBool() ? bool_ : fallback; }

double JsonValue::number(double fallback) const {
  return isNumber() ? std::strtod(text_.c_str(), nullptr) : fallback;
}

std::uint64_t JsonValue::unsignedNumber(std::uint64_t fallback) const {
  if (!isNumber()) return fallback;
  std::uint64_t v = 0;
  const char* end = text_.data() + text_.size();
  const auto [p, ec] = std::from_chars(text_.data(), end, v);
  if (ec == std::errc() && p == end) return v;
  const double d = number();  // "1e3", "2.0": exact only as far as a double is
  if (d >= 0 && d < 18446744073709551616.0) return static_cast<std::uint64_t>(d);
  return fallback;
}

std::int64_t JsonValue::signedNumber(std::int64_t fallback) const {
  if (!isNumber()) return fallback;
  std::int64_t v = 0;
  const char* end = text_.data() + text_.size();
  const auto [p, ec] = std::from_chars(text_.data(), end, v);
  if (ec == std::errc() && p == end) return v;
  const double d = number();
  if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return static_cast<std::int64_t>(d);
  return fallback;
}

const std::string& JsonValue::string() const {
  static const std::string empty;
  return isString() ? text_ : empty;
}

const std::vector<JsonValue>& JsonValue::items() const {
  static const std::vector<JsonValue> empty;
  return items_ ? *items_ : empty;
}

const std::vector<JsonValue::Member>& JsonValue::members() const {
  static const std::vector<Member> empty;
  return members_ ? *members_ : empty;
}

const JsonValue* JsonValue::find(std::string_view key) const {
  if (!members_) return nullptr;
  for (const Member& m : *members_)
    if (m.first == key) return &m.second;
  return nullptr;
}

const JsonValue& JsonValue::operator[](std::string_view key) const {
  static const JsonValue null;
  const JsonValue* v = find(key);
  return v ? *v : null;
}

namespace {
void dumpTo(const JsonValue& v, std::string& out) {
  switch (v.type()) {
    case JsonValue::Type::Null: out += "null"; return;
    case JsonValue::Type::Bool: out += v.boolean() ? "true" : "false"; return;
    case JsonValue::Type::Number: out += v.numberText(); return;
    case JsonValue::Type::String: out += jsonString(v.string()); return;
    case JsonValue::Type::Array:
      out += '[';
      for (std::size_t i = 0; i < v.items().size(); ++i) {
        if (i) out += ',';
        dumpTo(v.items()[i], out);
      }
      out += ']';
      return;
    case JsonValue::Type::Object:
      out += '{';
      for (std::size_t i = 0; i < v.members().size(); ++i) {
        if (i) out += ',';
        out += jsonString(v.members()[i].first);
        out += ':';
        dumpTo(v.members()[i].second, out);
      }
      out += '}';
      return;
  }
}
}  // namespace

std::string JsonValue::dump() const {
  std::string out;
  dumpTo(*this, out);
  return out;
}

JsonValue JsonValue::makeBool(bool b) {
  JsonValue v;
  v.type_ = Type::Bool;
  v.bool_ = b;
  return v;
}

JsonValue JsonValue::makeNumber(double d) {
  if (!std::isfinite(d)) return JsonValue();  // JSON has no NaN or infinity
  char buf[40];
  const bool integral = d == std::trunc(d) && std::fabs(d) < 9007199254740992.0;
  std::snprintf(buf, sizeof buf, integral ? "%.0f" : "%.17g", d);
  return makeNumberText(buf);
}

JsonValue JsonValue::makeNumberText(std::string text) {
  JsonValue v = makeString(std::move(text));
  v.type_ = Type::Number;
  return v;
}

JsonValue JsonValue::makeString(std::string s) {
  JsonValue v;
  v.type_ = Type::String;
  v.text_ = std::move(s);
  return v;
}

JsonValue JsonValue::makeArray(std::vector<JsonValue> items) {
  JsonValue v;
  v.type_ = Type::Array;
  v.items_ = std::make_shared<std::vector<JsonValue>>(std::move(items));
  return v;
}

JsonValue JsonValue::makeObject(std::vector<Member> members) {
  JsonValue v;
  v.type_ = Type::Object;
  v.members_ = std::make_shared<std::vector<Member>>(std::move(members));
  return v;
}

// Copies share their elements; a copy that is changed gets its own first.
void JsonValue::push(JsonValue item) {
  if (!isArray()) return;
  if (items_.use_count() > 1) items_ = std::make_shared<std::vector<JsonValue>>(*items_);
  items_->push_back(std::move(item));
}

void JsonValue::set(std::string key, JsonValue value) {
  if (!isObject()) return;
  if (members_.use_count() > 1) members_ = std::make_shared<std::vector<Member>>(*members_);
  for (Member& m : *members_) {
    if (m.first == key) {
      m.second = std::move(value);
      return;
    }
  }
  members_->emplace_back(std::move(key), std::move(value));
}

}  // namespace strata::support
