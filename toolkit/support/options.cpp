// Command-line parsing shared by the subcommands (options.hpp).
#include "support/options.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace strata::support {

std::optional<std::uint64_t> parseUnsigned(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

std::optional<std::uint64_t> parseSize(std::string_view s) {
  std::size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
  const std::optional<std::uint64_t> n = parseUnsigned(s.substr(0, digits));
  if (!n) return std::nullopt;
  std::string_view unit = s.substr(digits);
  if (unit.ends_with("iB")) {
    unit.remove_suffix(2);
    if (unit.empty()) return std::nullopt;  // "12iB"
  } else if (unit.ends_with("B") || unit.ends_with("b")) {
    unit.remove_suffix(1);
  }
  int shift = 0;
  if (unit == "K" || unit == "k") shift = 10;
  else if (unit == "M" || unit == "m") shift = 20;
  else if (unit == "G" || unit == "g") shift = 30;
  else if (unit == "T" || unit == "t") shift = 40;
  else if (!unit.empty()) return std::nullopt;
  if (*n > (UINT64_MAX >> shift)) return std::nullopt;
  return *n << shift;
}

std::optional<double> parseNumber(std::string_view s) {
  if (s.empty() || s.front() == ' ') return std::nullopt;
  const std::string text(s);
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !std::isfinite(x)) return std::nullopt;
  return x;
}

std::vector<std::string> splitList(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = s.find(',', start);
    out.emplace_back(s.substr(start, comma == std::string_view::npos ? s.npos : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

std::string parseArgs(std::span<char* const> args, std::span<const OptionSpec> specs,
                      ParsedArgs& out) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "--") {
      out.dashDash = true;
      for (std::size_t k = i + 1; k < args.size(); ++k) out.command.emplace_back(args[k]);
      return {};
    }
    if (!a.starts_with("-") || a == "-") {
      out.operands.emplace_back(a);
      continue;
    }
    std::string_view name = a, value;
    bool inlineValue = false;
    if (a.starts_with("--")) {
      if (const std::size_t eq = a.find('='); eq != std::string_view::npos) {
        name = a.substr(0, eq);
        value = a.substr(eq + 1);
        inlineValue = true;
      }
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : specs)
      if (s.name == name || (!s.shortName.empty() && s.shortName == name)) spec = &s;
    if (spec == nullptr) return "unknown option '" + std::string(a) + "'";
    if (!spec->takesValue) {
      if (inlineValue) return "option '" + std::string(spec->name) + "' takes no value";
      out.options.push_back({spec->name, {}});
      continue;
    }
    if (!inlineValue) {
      if (i + 1 >= args.size())
        return std::string(name) + " needs " + std::string(spec->valueName);
      value = args[++i];
    }
    out.options.push_back({spec->name, std::string(value)});
  }
  return {};
}

}  // namespace strata::support

namespace strata::support {

Binding::Binding(bool& flag, bool value) : set_([&flag, value](const std::string&) { flag = value; }) {}
Binding::Binding(std::string& text) : set_([&text](const std::string& v) { text = v; }) {}
Binding::Binding(std::vector<std::string>& list)
    : set_([&list](const std::string& v) { list.push_back(v); }) {}

namespace {

// "-IDIR" split into "-I" "DIR" for the options that take their value joined, unless it is
// itself the value of the option before it ("--cxxflags -Ifoo").
std::vector<std::string> splitGlued(std::span<char* const> args, std::span<const Option> options) {
  std::vector<std::string> out;
  bool isValue = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "--") {
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    const Option* glued = nullptr;
    for (const Option& o : options)
      if (o.glued && !isValue && a.size() > o.shortName.size() && a.starts_with(o.shortName))
        glued = &o;
    if (glued != nullptr) {
      out.emplace_back(glued->shortName);
      out.emplace_back(a.substr(glued->shortName.size()));
      isValue = false;
      continue;
    }
    out.emplace_back(a);
    bool next = false;
    if (!isValue)
      for (const Option& o : options)
        if (!o.value.empty() && (a == o.name || (!o.shortName.empty() && a == o.shortName)))
          next = true;
    isValue = next;
  }
  return out;
}

}  // namespace

Operands parseOptions(std::span<char* const> rawArgs, std::span<const Option> options) {
  std::vector<std::string> words = splitGlued(rawArgs, options);
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  std::vector<OptionSpec> specs;
  for (const Option& o : options)
    specs.push_back({o.name, !o.value.empty(), o.shortName, o.needs});
  ParsedArgs parsed;
  if (std::string err = parseArgs(argv, specs, parsed); !err.empty()) throw UsageError(err);
  for (const GivenOption& g : parsed.options)
    for (const Option& o : options)
      if (o.name == g.name) o.bind(g.value);
  return {std::move(parsed.operands), std::move(parsed.command), parsed.dashDash};
}

std::string formatOptions(std::span<const Option> options, std::size_t width) {
  std::string out;
  for (const Option& o : options) {
    std::string names = "  ";
    const std::string value = o.value.empty() ? "" : " " + std::string(o.value);
    if (!o.shortName.empty()) names += std::string(o.shortName) + value + ", ";
    names += std::string(o.name) + value;
    names.resize(std::max(width, names.size() + 2), ' ');
    out += names;
    std::string_view help = o.help;
    while (true) {
      const std::size_t nl = help.find('\n');
      out += help.substr(0, nl);
      out += '\n';
      if (nl == std::string_view::npos) break;
      help.remove_prefix(nl + 1);
      out.append(width, ' ');
    }
  }
  return out;
}

UsageError badValue(std::string_view name, std::string_view value, std::string_view why) {
  std::string m = "invalid value '" + std::string(value) + "' for " + std::string(name);
  if (!why.empty()) m += " (" + std::string(why) + ")";
  return UsageError(m);
}

}  // namespace strata::support
