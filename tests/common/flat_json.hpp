// JSON text on one line, for tests that look for a run of members in it: each line break and
// the indentation after it removed, a space kept after a comma. The layout support::JsonWriter
// gives a document (indentation, members packed onto lines) then does not matter:
// `"a": 1, "b": [2, 3]` is found however the document was broken into lines.
#pragma once
#include <string>
#include <string_view>

inline std::string flatJson(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      out += text[i];
      continue;
    }
    while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
    if (!out.empty() && out.back() == ',') out += ' ';
  }
  return out;
}
