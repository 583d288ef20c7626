// Writing JSON: the one writer of the toolkit's documents (results.json, tune.json, drag.json,
// diff.json, the sites and stats documents, the --json outputs). A document is written in
// order, member by member; strings are escaped by jsonString, integers written as
// std::to_string writes them, doubles by jsonNumber (null for NaN and infinities).
//
//   JsonWriter w(9);                 // doubles with 9 significant digits
//   w.object().field("format", "strata-x-1").field("runs", 3);
//   w.array("traces");
//   w.object().field("name", name).field("ratio", 1.5).end();
//   w.end().array("notes", notes).end();
//   std::string text = w.text();
//
// The layout, one rule for every document: two spaces of indentation per level; a container
// holding only scalars (or empty containers) on one line when it fits in 100 columns, else its
// members packed onto lines of at most 100 columns; any other container one member a line.
#pragma once
#include <concepts>
#include <optional>
#include <ranges>
#include <string>
#include <string_view>
#include <vector>

namespace strata::support {

class JsonWriter {
 public:
  // `digits`: the significant digits of the doubles field(key, double) and item(double) write.
  explicit JsonWriter(int digits = 17) : digits_(digits) {}

  // Begins an object or array: the document, an array's element, or (with a key) a member of
  // the object open. end() closes the innermost container.
  JsonWriter& object();
  JsonWriter& object(std::string_view key);
  JsonWriter& array();
  JsonWriter& array(std::string_view key);
  JsonWriter& end();

  // A member of the object open.
  JsonWriter& field(std::string_view key, std::string_view s) { return put(&key, quoted(s)); }
  JsonWriter& field(std::string_view key, const char* s) { return field(key, std::string_view(s)); }
  JsonWriter& field(std::string_view key, bool b) { return put(&key, b ? "true" : "false"); }
  template <std::integral T>
  JsonWriter& field(std::string_view key, T v) { return put(&key, std::to_string(v)); }
  JsonWriter& field(std::string_view key, double v) { return field(key, v, digits_); }
  JsonWriter& field(std::string_view key, double v, int digits) { return put(&key, real(v, digits)); }
  template <class T>
  JsonWriter& field(std::string_view key, const std::optional<T>& v) {
    return v ? field(key, *v) : null(key);
  }
  JsonWriter& null(std::string_view key) { return put(&key, "null"); }
  // A double as printf's %.<decimals>f writes it (null for NaN and infinities).
  JsonWriter& fixed(std::string_view key, double v, int decimals) {
    return put(&key, fixedText(v, decimals));
  }
  // A member holding an array of scalars, one element per value.
  template <std::ranges::input_range R>
    requires(!std::convertible_to<const R&, std::string_view>)
  JsonWriter& array(std::string_view key, const R& values) {
    array(key);
    for (const auto& v : values) item(v);
    return end();
  }

  // An element of the array open (or the document itself, a scalar).
  JsonWriter& item(std::string_view s) { return put(nullptr, quoted(s)); }
  JsonWriter& item(const char* s) { return item(std::string_view(s)); }
  JsonWriter& item(bool b) { return put(nullptr, b ? "true" : "false"); }
  template <std::integral T>
  JsonWriter& item(T v) { return put(nullptr, std::to_string(v)); }
  JsonWriter& item(double v) { return item(v, digits_); }
  JsonWriter& item(double v, int digits) { return put(nullptr, real(v, digits)); }
  JsonWriter& null() { return put(nullptr, "null"); }
  template <std::ranges::input_range R>
    requires(!std::convertible_to<const R&, std::string_view>)
  JsonWriter& array(const R& values) {
    array();
    for (const auto& v : values) item(v);
    return end();
  }

  // The document and a newline. Throws std::logic_error while a container is open or before
  // anything was written.
  std::string text() const;

 private:
  struct Open {
    bool isObject = false;
    std::string prefix;                // `"key": ` of a member, empty for an element
    std::vector<std::string> members;  // each written in full: prefix and value
    bool scalarsOnly = true;
  };

  static std::string quoted(std::string_view s);
  static std::string real(double v, int digits);
  static std::string fixedText(double v, int decimals);
  // Adds a value (a member when key is given, else an element) to the container open.
  JsonWriter& put(const std::string_view* key, std::string value, bool scalar = true);
  JsonWriter& begin(const std::string_view* key, bool isObject);
  std::string layout(const Open& c) const;

  int digits_;
  std::vector<Open> open_;
  std::string document_;
  bool done_ = false;
};

}  // namespace strata::support
