// Reading JSON: the toolkit's result documents (results.json, tune.json, ...) parsed back, for
// `strata report` and `strata diff`. A small DOM: objects keep their keys in order, numbers
// keep their text (so a byte count written as an integer is read back exactly and written out
// unchanged). Writing JSON is json_writer.hpp's.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::support {

class JsonValue {
 public:
  enum class Type { Null, Bool, Number, String, Array, Object };
  using Member = std::pair<std::string, JsonValue>;

  JsonValue() = default;
  Type type() const { return type_; }
  bool isNull() const { return type_ == Type::Null; }
  bool isBool() const { return type_ == Type::Bool; }
  bool isNumber() const { return type_ == Type::Number; }
  bool isString() const { return type_ == Type::String; }
  bool isArray() const { return type_ == Type::Array; }
  bool isObject() const { return type_ == Type::Object; }

  // The value as a type; a value of another type gives the fallback.
  bool boolean(bool fallback = false) const;
  double number(double fallback = 0) const;
  std::uint64_t unsignedNumber(std::uint64_t fallback = 0) const;  // exact for integer text
  std::int64_t signedNumber(std::int64_t fallback = 0) const;
  const std::string& string() const;  // the string's value; the empty string otherwise
  const std::string& numberText() const { return text_; }  // a number as it was written

  // Arrays: the elements (empty for other types).
  const std::vector<JsonValue>& items() const;
  // Objects: the members in order (empty for other types), and one by key (nullptr when
  // absent or not an object).
  const std::vector<Member>& members() const;
  const JsonValue* find(std::string_view key) const;
  // find(key), or a null value when absent.
  const JsonValue& operator[](std::string_view key) const;

  // Compact JSON text of the value (numbers as written, strings escaped as json.hpp does).
  std::string dump() const;

  // Builders (for tests and for documents assembled in code).
  static JsonValue makeNull() { return JsonValue(); }
  static JsonValue makeBool(bool b);
  static JsonValue makeNumber(double d);
  static JsonValue makeNumberText(std::string text);  // text must be a valid JSON number
  static JsonValue makeString(std::string s);
  static JsonValue makeArray(std::vector<JsonValue> items = {});
  static JsonValue makeObject(std::vector<Member> members = {});
  void push(JsonValue v);                     // arrays
  void set(std::string key, JsonValue v);     // objects: replaces or appends

 private:
  Type type_ = Type::Null;
  bool bool_ = false;
  std::string text_;  // number text, or string value
  std::shared_ptr<std::vector<JsonValue>> items_;
  std::shared_ptr<std::vector<Member>> members_;
};

// Why a text is not JSON: a sentence, the byte offset, line and column (1-based), and whether
// the text ended early (a truncated file).
struct JsonError {
  std::string message;
  std::size_t offset = 0, line = 1, column = 1;
  bool truncated = false;
};

// Parses `text` as one JSON value (whitespace around it allowed). Nesting deeper than 256
// levels is an error, not a stack overflow. On failure returns nullopt and fills `error`.
std::optional<JsonValue> parseJson(std::string_view text, JsonError* error = nullptr);

// Reads and parses a file. Throws support::Error naming the file: it cannot be read, it is
// empty, it ends early ("truncated"), or where (line:column) it stops being JSON.
JsonValue readJsonFile(const std::string& path);

}  // namespace strata::support
