// Command-line parsing shared by every `strata` subcommand: numbers, byte sizes, lists, and
// one walk over the arguments that knows which options take a value, so that every
// subcommand accepts "--name VALUE" and "--name=VALUE" alike and parses sizes the same way.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata::support {

// An unsigned decimal integer ("0", "1234"); nullopt for anything else or on overflow.
std::optional<std::uint64_t> parseUnsigned(std::string_view s);

// A byte count: digits with an optional K, M, G or T suffix (powers of 1024, either case),
// optionally followed by "iB" or "B" ("512M", "2GiB", "1T", "100000", "64KB").
std::optional<std::uint64_t> parseSize(std::string_view s);

// What parseSize accepts, for error messages.
inline constexpr std::string_view kSizeHelp = "bytes, or a number with K, M, G or T";

// A finite decimal number ("1", "0.5", "2e3"); nullopt for anything else.
std::optional<double> parseNumber(std::string_view s);

// "a,b,c" split at commas; empty names are kept so the caller can reject them.
std::vector<std::string> splitList(std::string_view s);

// One option a subcommand takes: its long name ("--out"), an optional short one ("-o"),
// whether it takes a value, and what the value is for the message when it is missing
// ("--out needs a DIR").
struct OptionSpec {
  std::string_view name;
  bool takesValue = false;
  std::string_view shortName = {};
  std::string_view valueName = "a value";
};

// One option as given: the spec's long name and its value (empty for a flag).
struct GivenOption {
  std::string_view name;
  std::string value;
};

// The arguments sorted out: options in the order given, the other arguments (operands), and
// everything after "--" (a command to run) when there was a "--".
struct ParsedArgs {
  std::vector<GivenOption> options;
  std::vector<std::string> operands;
  std::vector<std::string> command;
  bool dashDash = false;
};

// Walks `args`: "--name VALUE", "--name=VALUE", "-o VALUE", flags, operands ("-" is one), and
// "--" after which everything is the command. Returns an error message ("unknown option
// '--x'", "--out needs a value", "option '--json' takes no value"), or empty on success.
std::string parseArgs(std::span<char* const> args, std::span<const OptionSpec> specs,
                      ParsedArgs& out);

}  // namespace strata::support
