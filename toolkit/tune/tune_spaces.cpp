// Reading tune-spaces.conf and turning settings into environment entries (tune_spaces.hpp).
#include "tune/tune_spaces.hpp"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "support/error.hpp"
#include "support/helpers.hpp"

namespace strata::tune {
namespace {

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Spaces loadSpaces(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw support::Error(path + ": cannot read the search spaces", 2);
  Spaces spaces;
  spaces.path = path;
  enum class Section { None, Allocator, Compositions } section = Section::None;
  int number = 0;
  const auto fail = [&](const std::string& why) {
    throw support::Error(path + ":" + std::to_string(number) + ": " + why, 2);
  };
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const std::vector<std::string> w = words(line);
    if (w.empty()) continue;
    if (w[0].front() == '[') {
      if (w.size() != 1 || w[0].back() != ']' || w[0].size() < 3) fail("a section is [NAME]");
      const std::string name = w[0].substr(1, w[0].size() - 2);
      if (name == "compositions") {
        section = Section::Compositions;
        continue;
      }
      for (const Space& s : spaces.allocators)
        if (s.allocator == name) fail("allocator [" + name + "] is listed twice");
      section = Section::Allocator;
      spaces.allocators.push_back(Space{name, Style::Env, "", "", {}, {}, number});
      continue;
    }
    if (section == Section::None) fail("'" + w[0] + "' before any [section]");
    if (section == Section::Compositions) {
      if (w[0] != "composition" || w.size() != 3) fail("expected: composition NAME TYPE (the type without spaces)");
      spaces.compositions.push_back(Composition{w[1], w[2], number});
      continue;
    }
    Space& space = spaces.allocators.back();
    if (w[0] == "style") {
      if (w.size() == 4 && w[1] == "tunables") {
        space.style = Style::Tunables;
        space.variable = w[2];
        space.prefix = w[3];
      } else if (w.size() == 3 && w[1] == "conf") {
        space.style = Style::Conf;
        space.variable = w[2];
      } else if (w.size() == 3 && w[1] == "env") {
        space.style = Style::Env;
        space.prefix = w[2];
      } else {
        fail("expected: style tunables VAR PREFIX | style conf VAR | style env PREFIX");
      }
    } else if (w[0] == "check") {
      if (w.size() != 2 || w[1].find('=') == std::string::npos || w[1].front() == '=')
        fail("expected: check NAME=VALUE (set while the values are checked)");
      space.checkEnvironment.push_back(w[1]);
    } else if (w[0] == "option") {
      if (w.size() < 3) fail("expected: option NAME VALUE...");
      for (const Option& o : space.options)
        if (o.name == w[1]) fail("option " + w[1] + " is listed twice in [" + space.allocator + "]");
      space.options.push_back(Option{w[1], std::vector<std::string>(w.begin() + 2, w.end()), number});
    } else {
      fail("unknown keyword '" + w[0] + "' (style, check, option, composition)");
    }
  }
  for (const Space& s : spaces.allocators)
    if (s.style != Style::Env ? s.variable.empty() : s.prefix.empty())
      throw support::Error(path + ":" + std::to_string(s.line) + ": [" + s.allocator +
                           "] has no style line", 2);
  return spaces;
}

std::string defaultSpacesPath() {
  return support::helperPath(support::HelperId::TuneSpaces);
}

std::vector<std::string> environmentFor(const Space& space, const Setting& setting) {
  std::vector<std::string> env;
  std::string joined;
  for (std::size_t i = 0; i < setting.size() && i < space.options.size(); ++i) {
    if (setting[i] < 0) continue;
    const Option& o = space.options[i];
    const std::string& v = o.values[static_cast<std::size_t>(setting[i])];
    switch (space.style) {
      case Style::Tunables:
        joined += (joined.empty() ? "" : ":") + space.prefix + o.name + "=" + v;
        break;
      case Style::Conf:
        joined += (joined.empty() ? "" : ",") + o.name + ":" + v;
        break;
      case Style::Env:
        env.push_back(space.prefix + upper(o.name) + "=" + v);
        break;
    }
  }
  if (!joined.empty()) env.push_back(space.variable + "=" + joined);
  return env;
}

std::string describe(const Space& space, const Setting& setting) {
  std::string out;
  for (std::size_t i = 0; i < setting.size() && i < space.options.size(); ++i)
    if (setting[i] >= 0)
      out += (out.empty() ? "" : " ") + space.options[i].name + "=" +
             space.options[i].values[static_cast<std::size_t>(setting[i])];
  return out.empty() ? "default" : out;
}

std::string specFor(const Space& space, const Setting& setting) {
  std::string spec = space.allocator;
  for (const std::string& e : environmentFor(space, setting)) spec += ":" + e;
  return spec;
}

}  // namespace strata::tune
