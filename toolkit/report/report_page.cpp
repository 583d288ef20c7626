// report.html's bundle and page (report_page.hpp).
#include "report/report_page.hpp"

#include <algorithm>
#include <array>

#include "support/error.hpp"

#ifndef STRATA_VERSION_TEXT
#define STRATA_VERSION_TEXT "unknown"
#endif

namespace strata::report {

namespace fs = std::filesystem;
using support::JsonValue;

namespace {

// "a, b, c and 4 more": names for a title, kept short.
std::string listed(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 3;
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kShown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > kShown) out += " and " + std::to_string(names.size() - kShown) + " more";
  return out;
}

// The names of the traces of a "traces" array: strings, or objects with a "name".
std::vector<std::string> traceNames(const JsonValue& traces) {
  std::vector<std::string> names;
  for (const JsonValue& t : traces.items()) {
    const std::string& name = t.isString() ? t.string() : t["name"].string();
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

// What was measured, as the main document says it: the two runs of a diff, a command line,
// a trace, else the traces.
std::string subject(const JsonValue& main) {
  const std::string& a = main["a"]["path"].string();
  const std::string& b = main["b"]["path"].string();
  if (!a.empty() && !b.empty()) return a + " vs " + b;
  for (const JsonValue* v : {&main["command"]["command_line"], &main["command_line"],
                             &main["command"], &main["app"], &main["trace"]})
    if (v->isString() && !v->string().empty()) return v->string();
  return listed(traceNames(main["traces"]));
}

}  // namespace

std::string reportTitle(const ResultFolder& folder) {
  std::string what = subject(folder.main);
  if (what.empty()) what = fs::absolute(folder.dir).lexically_normal().filename().string();
  return "strata " + folder.kind + ": " + what;
}

JsonValue reportBundle(const ResultFolder& folder) {
  JsonValue files = JsonValue::makeObject();
  for (const NamedFile& f : folder.files) files.set(f.path, f.content);
  fs::path dir = fs::absolute(folder.dir).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();  // "DIR/" written without the slash
  return JsonValue::makeObject({{"schema", JsonValue::makeString("strata-report-1")},
                                {"kind", JsonValue::makeString(folder.kind)},
                                {"title", JsonValue::makeString(reportTitle(folder))},
                                {"folder", JsonValue::makeString(dir.string())},
                                {"strata_version", JsonValue::makeString(STRATA_VERSION_TEXT)},
                                {"main", folder.main},
                                {"files", std::move(files)}});
}

std::string scriptSafeJson(std::string_view json) {
  std::string out;
  out.reserve(json.size() + json.size() / 64);
  for (std::size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<' && json.substr(i + 1, 1) == "/") {
      out += "<\\/";
      ++i;
    } else if (json[i] == '<' && json.substr(i + 1, 3) == "!--") {
      out += "\\u003c";
    } else {
      out += json[i];
    }
  }
  return out;
}

std::string renderPage(std::string_view page, std::span<const WebAsset> assets,
                       std::string_view data) {
  std::string css, js;
  for (const WebAsset& a : assets) {  // each script ends with ";": one missing it is harmless
    const bool script = a.kind == "js";
    std::string& into = script ? js : css;
    into += "\n/* " + std::string(a.path) + " */\n";
    into += a.bytes;
    into += script ? "\n;" : "\n";
  }
  struct Slot {
    std::string_view marker;
    std::string_view text;
    std::size_t at;
  };
  std::array<Slot, 3> slots{{{"/*@STRATA_CSS@*/", css, 0},
                             {"@STRATA_DATA@", data, 0},
                             {"/*@STRATA_JS@*/", js, 0}}};
  for (Slot& s : slots) {
    s.at = page.find(s.marker);
    if (s.at == std::string_view::npos)
      throw support::Error("report.html's template has no " + std::string(s.marker) +
                           ": this strata was built with a broken page");
  }
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.at < b.at; });
  std::string out;
  out.reserve(page.size() + css.size() + js.size() + data.size());
  std::size_t from = 0;
  for (const Slot& s : slots) {
    out.append(page.substr(from, s.at - from));
    out.append(s.text);
    from = s.at + s.marker.size();
  }
  out.append(page.substr(from));
  return out;
}

}  // namespace strata::report
