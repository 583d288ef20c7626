// Command-line parsing shared by the subcommands (options.hpp).
#include "options.hpp"

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
