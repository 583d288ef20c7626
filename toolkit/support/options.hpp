// Command-line parsing shared by every `strata` subcommand: numbers, byte sizes, lists, one
// walk over the arguments that knows which options take a value, so that every subcommand
// accepts "--name VALUE" and "--name=VALUE" alike and parses sizes the same way, and the
// option table a subcommand declares its options in once (parsing, checks, --help).
#pragma once
#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.hpp"

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

// ---- the option table: what a subcommand declares once ---------------------------------
//
// A subcommand lists its options in one table; parseOptions walks the arguments with it (as
// parseArgs does), then hands each value given to its option's binding, in the order given;
// formatOptions writes the options part of the subcommand's --help from the same table.
// Every error is a support::UsageError (error.hpp): the dispatcher prints it with the usage.
//
//   std::vector<support::Option> table(Settings& s) {
//     return {{.name = "--out", .value = "DIR", .help = "where results go", .bind = s.out},
//             {.name = "--json", .help = "print JSON", .bind = s.json},
//             {.name = "--runs", .value = "N", .help = "runs per allocator",
//              .bind = [&s](const std::string& v) { s.runs = ...; }}};
//   }

// Where an option's value goes: a flag sets a bool (to true, or as `{o.plots, false}`), a value
// replaces a string or is appended to a list, and anything else is a setter that checks the
// value and may throw UsageError (badValue() words the usual message).
class Binding {
 public:
  Binding(bool& flag, bool value = true);
  Binding(std::string& text);
  Binding(std::vector<std::string>& list);
  template <std::invocable<const std::string&> F>
  Binding(F setter) : set_(std::move(setter)) {}
  void operator()(const std::string& value) const { set_(value); }

 private:
  std::function<void(const std::string&)> set_;
};

struct Option {
  std::string_view name = {};       // "--out"
  std::string_view shortName = {};  // "-o", or empty
  std::string_view value = {};      // the value's name in the help ("DIR"); empty for a flag
  std::string_view help = {};       // the help lines, '\n' between them
  Binding bind;
  std::string_view needs = "a value";  // "--out needs a value" when it is missing
  bool glued = false;               // the short name also takes its value joined ("-IDIR")
};

// The arguments that are not options: operands, and what follows "--" (when there was one).
struct Operands {
  std::vector<std::string> operands;
  std::vector<std::string> command;
  bool dashDash = false;
};

// Walks `args` with the table (the forms and messages of parseArgs), then calls each given
// option's binding with its value ("" for a flag) in the order given. Throws UsageError.
Operands parseOptions(std::span<char* const> args, std::span<const Option> options);

// The options part of a --help: one entry per option, "  -o DIR, --out DIR" padded to
// `width` columns (two spaces past a longer one) then its help, further help lines indented
// to `width`.
std::string formatOptions(std::span<const Option> options, std::size_t width);

// "invalid value 'V' for --name (why)": the error for a value an option does not take.
UsageError badValue(std::string_view name, std::string_view value, std::string_view why = {});

// A binding for an unsigned number from `min` to `max` into `target`; any other value is
// badValue(name, value, why).
template <std::unsigned_integral T>
Binding numberIn(std::string_view name, T& target, std::uint64_t min, std::uint64_t max,
                 std::string_view why = {}) {
  return [=, &target](const std::string& v) {
    const std::optional<std::uint64_t> n = parseUnsigned(v);
    if (!n || *n < min || *n > max) throw badValue(name, v, why);
    target = static_cast<T>(*n);
  };
}

}  // namespace strata::support
