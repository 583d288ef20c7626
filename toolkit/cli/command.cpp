// What the subcommands of the `strata` executable share (command.hpp).
#include "cli/command.hpp"

#include <cstdio>

namespace strata::cli {

int usageError(std::string_view name, std::string_view help, const std::string& why) {
  const std::size_t blank = help.find("\n\n");
  const std::string_view usage = help.substr(0, blank == std::string_view::npos ? help.size() : blank + 1);
  std::fprintf(stderr, "strata %.*s: %s\n%.*s", static_cast<int>(name.size()), name.data(),
               why.c_str(), static_cast<int>(usage.size()), usage.data());
  return 2;
}

void note(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

std::vector<std::string> commandAfterDashDash(const support::Operands& given,
                                              std::string_view verb) {
  using support::UsageError;
  const std::string to(verb);
  if (!given.operands.empty())
    throw UsageError("missing '--' before the command '" + given.operands[0] + "'");
  if (!given.dashDash) throw UsageError("missing '--' and the COMMAND to " + to);
  if (given.command.empty()) throw UsageError("missing the COMMAND to " + to + " after '--'");
  if (given.command[0].empty()) throw UsageError("the COMMAND is empty");
  return given.command;
}

}  // namespace strata::cli
