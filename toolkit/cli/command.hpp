// A subcommand of the `strata` executable: its name, a one-line summary for `strata --help`,
// its full help text, and the function that runs it. Each subcommand lives in its own file
// (allocators.cpp, run.cpp, ...), defines one of the Command objects declared here, and is
// listed once in main.cpp's table.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/options.hpp"

namespace strata::cli {

struct Command {
  std::string_view name;
  std::string_view summary;  // one line, for the command list
  std::string_view help;     // `strata help NAME` / `strata NAME --help`: usage first
  // Runs the command on the arguments after its name; args is a view of main's argv, so
  // args.data()[args.size()] is the terminating null pointer. Returns the exit status.
  int (*run)(std::span<char* const> args);
};

// Reports a wrong invocation of a subcommand on stderr: "strata NAME: why", then the usage
// lines that open its help (up to the first blank line). Returns 2, the exit status for it.
int usageError(std::string_view name, std::string_view help, const std::string& why);

// One line on stderr: what a command is doing, or what went wrong along the way. The sink a
// command passes to its library as support::Notes.
void note(const std::string& line);

// The COMMAND after "--" of a subcommand that runs one (`strata record`, `strata drag`), from
// what parseOptions left: throws support::UsageError when an operand comes before "--", when
// "--" or the COMMAND after it is missing ("missing the COMMAND to VERB after '--'"), or
// when the COMMAND's name is empty.
std::vector<std::string> commandAfterDashDash(const support::Operands& given,
                                              std::string_view verb);

extern const Command kAllocatorsCommand;
extern const Command kRunCommand;
extern const Command kBuildCommand;
extern const Command kRecordCommand;
extern const Command kStatsCommand;
extern const Command kReplayCommand;
extern const Command kCompareCommand;
extern const Command kGenerateCommand;
extern const Command kImportCommand;
extern const Command kExportCommand;
extern const Command kTuneCommand;
extern const Command kDragCommand;
extern const Command kDoctorCommand;
extern const Command kDiffCommand;
extern const Command kReportCommand;

}  // namespace strata::cli
