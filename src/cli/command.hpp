// A subcommand of the `strata` executable: its name, a one-line summary for `strata --help`,
// its full help text, and the function that runs it. Each subcommand lives in its own file
// (allocators.cpp, run.cpp, ...), defines one of the Command objects declared here, and is
// listed once in main.cpp's table.
#pragma once
#include <span>
#include <string_view>

namespace strata::cli {

struct Command {
  std::string_view name;
  std::string_view summary;  // one line, for the command list
  std::string_view help;     // `strata help NAME` / `strata NAME --help`: usage first
  // Runs the command on the arguments after its name; args is a view of main's argv, so
  // args.data()[args.size()] is the terminating null pointer. Returns the exit status.
  int (*run)(std::span<char* const> args);
};

extern const Command kAllocatorsCommand;
extern const Command kRunCommand;
extern const Command kRecordCommand;
extern const Command kStatsCommand;
extern const Command kReplayCommand;
extern const Command kCompareCommand;
extern const Command kGenerateCommand;
extern const Command kImportCommand;
extern const Command kExportCommand;

}  // namespace strata::cli
