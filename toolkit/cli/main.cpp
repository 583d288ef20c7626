// The `strata` command: dispatches on its first argument to one subcommand from kCommands.
// Adding a subcommand is a file defining its Command (declared in command.hpp) and one line
// in kCommands; `strata --help` and `strata help NAME` pick it up from there.
#include <array>
#include <cstdio>
#include <exception>
#include <span>
#include <string_view>

#include "cli/command.hpp"
#include "support/error.hpp"

namespace strata::cli {
namespace {

// Every subcommand, in the order `strata --help` lists them.
constexpr std::array<const Command*, 15> kCommands{
    &kCompareCommand,    &kTuneCommand,     &kRecordCommand, &kReplayCommand, &kStatsCommand,
    &kDragCommand,       &kDiffCommand,     &kReportCommand, &kGenerateCommand,
    &kImportCommand,     &kExportCommand,   &kAllocatorsCommand, &kRunCommand,
    &kBuildCommand,      &kDoctorCommand,
};

// The command with this name, or nullptr.
const Command* findCommand(std::string_view name) {
  for (const Command* c : kCommands)
    if (c->name == name) return c;
  return nullptr;
}

// The top-level usage: what strata is and the list of subcommands.
void printUsage(std::FILE* out) {
  std::fputs(
      "usage: strata COMMAND [ARGS...]\n"
      "\n"
      "Strata's tools: its allocators as malloc replacements, and the programs that measure them.\n"
      "\n"
      "commands:\n",
      out);
  for (const Command* c : kCommands)
    std::fprintf(out, "  %-12.*s %.*s\n", static_cast<int>(c->name.size()), c->name.data(),
                 static_cast<int>(c->summary.size()), c->summary.data());
  std::fputs(
      "  help         show a command's help: strata help COMMAND\n"
      "\n"
      "'strata COMMAND --help' shows the same. 'strata --version' prints the version.\n",
      out);
}

// Prints one command's help text to stdout.
int printHelp(const Command& c) {
  std::fwrite(c.help.data(), 1, c.help.size(), stdout);
  return 0;
}

// True when an argument before any "--" asks for help (after "--" they belong to a program).
bool asksForHelp(std::span<char* const> args) {
  for (const char* a : args) {
    const std::string_view s = a;
    if (s == "--") return false;
    if (s == "--help" || s == "-h") return true;
  }
  return false;
}

// Runs a subcommand; its errors are caught here, once (error.hpp): "strata NAME: message" and
// exit 1 (or the status the error carries), a wrong invocation with the usage and exit 2.
int runCaught(const Command& c, std::span<char* const> args) {
  const auto fail = [&](const char* message, int status) {
    std::fprintf(stderr, "strata %.*s: %s\n", static_cast<int>(c.name.size()), c.name.data(), message);
    return status;
  };
  try {
    return c.run(args);
  } catch (const strata::support::UsageError& e) {
    return usageError(c.name, c.help, e.what());
  } catch (const strata::support::Error& e) {
    return fail(e.what(), e.exitStatus());
  } catch (const std::exception& e) {  // a library's std::runtime_error, std::bad_alloc, ...
    return fail(e.what(), 1);
  }
}

}  // namespace
}  // namespace strata::cli

int main(int argc, char** argv) {
  using namespace strata::cli;
  if (argc < 2) {
    std::fputs("strata: no command given\n\n", stderr);
    printUsage(stderr);
    return 2;
  }
  const std::string_view first = argv[1];
  if (first == "--help" || first == "-h" || (first == "help" && argc == 2)) {
    printUsage(stdout);
    return 0;
  }
  if (first == "--version") {
    std::printf("strata %s\n", STRATA_VERSION);
    return 0;
  }
  if (first == "help") {
    const Command* c = findCommand(argv[2]);
    if (argc > 3) {
      std::fputs("strata help: give one command name\n\n", stderr);
      printUsage(stderr);
      return 2;
    }
    if (c == nullptr) {
      std::fprintf(stderr, "strata help: unknown command '%s'\n\n", argv[2]);
      printUsage(stderr);
      return 2;
    }
    return printHelp(*c);
  }
  const Command* c = findCommand(first);
  if (c == nullptr) {
    std::fprintf(stderr, "strata: unknown command '%s'\n\n", argv[1]);
    printUsage(stderr);
    return 2;
  }
  const std::span<char* const> args(argv + 2, static_cast<std::size_t>(argc - 2));
  if (asksForHelp(args)) return printHelp(*c);
  return runCaught(*c, args);
}
