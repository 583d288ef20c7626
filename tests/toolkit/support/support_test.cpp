// The helpers the subcommands and the benchmarks share (toolkit/support, target strata_support),
// linked alone: sizes and options parsed the same way everywhere, and a child process run
// with its exit status or signal, output and resource usage.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <vector>

#include "common/process.hpp"
#include "support/options.hpp"
#include "support/proc.hpp"
#include "support/process.hpp"

namespace {

using namespace strata::support;

TEST(SupportOptions, SizesTakeSuffixesUpToTerabytes) {
  EXPECT_EQ(parseSize("100000"), 100000u);
  EXPECT_EQ(parseSize("64K"), 64u << 10);
  EXPECT_EQ(parseSize("512m"), 512u << 20);
  EXPECT_EQ(parseSize("2GiB"), 2ull << 30);
  EXPECT_EQ(parseSize("1T"), 1ull << 40);
  EXPECT_EQ(parseSize("3MB"), 3u << 20);
  EXPECT_EQ(parseSize("7B"), 7u);
  EXPECT_FALSE(parseSize(""));
  EXPECT_FALSE(parseSize("M"));
  EXPECT_FALSE(parseSize("1X"));
  EXPECT_FALSE(parseSize("12iB"));
  EXPECT_FALSE(parseSize("-1K"));
  EXPECT_FALSE(parseSize("99999999999999999T")) << "overflow";
  EXPECT_FALSE(parseUnsigned("18446744073709551616")) << "one past the largest";
  EXPECT_EQ(parseUnsigned("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(parseNumber("0.5"), 0.5);
  EXPECT_FALSE(parseNumber("1e999"));
  EXPECT_FALSE(parseNumber("2x"));
  EXPECT_EQ(splitList("a,,b"), (std::vector<std::string>{"a", "", "b"}));
}

TEST(SupportOptions, ParseArgsTakesBothValueFormsOperandsAndACommand) {
  static constexpr OptionSpec kSpecs[] = {{"--out", true, "-o"}, {"--json"}};
  std::vector<std::string> text = {"a", "--out=x", "-o", "y", "--json", "-", "--", "cmd", "--json"};
  std::vector<char*> argv;
  for (std::string& s : text) argv.push_back(s.data());
  argv.push_back(nullptr);
  ParsedArgs p;
  ASSERT_EQ(parseArgs(std::span<char* const>(argv.data(), text.size()), kSpecs, p), "");
  ASSERT_EQ(p.options.size(), 3u);
  EXPECT_EQ(p.options[0].name, "--out");
  EXPECT_EQ(p.options[0].value, "x");
  EXPECT_EQ(p.options[1].name, "--out") << "the short name gives the long one";
  EXPECT_EQ(p.options[1].value, "y");
  EXPECT_EQ(p.options[2].name, "--json");
  EXPECT_EQ(p.operands, (std::vector<std::string>{"a", "-"}));
  EXPECT_TRUE(p.dashDash);
  EXPECT_EQ(p.command, (std::vector<std::string>{"cmd", "--json"}));

  const auto error = [&](std::vector<std::string> args) {
    std::vector<char*> v;
    for (std::string& s : args) v.push_back(s.data());
    ParsedArgs q;
    return parseArgs(std::span<char* const>(v.data(), v.size()), kSpecs, q);
  };
  EXPECT_EQ(error({"--bogus"}), "unknown option '--bogus'");
  EXPECT_EQ(error({"--out"}), "--out needs a value");
  EXPECT_EQ(error({"--json=1"}), "option '--json' takes no value");
}

// The option table: one declaration gives the parse, the bindings in the order given, the
// errors as UsageError, and the options part of the help.
struct TableSettings {
  std::string out;
  bool json = false, plots = true;
  std::vector<std::string> includes;
  unsigned runs = 3;
};

std::vector<Option> tableFor(TableSettings& s) {
  return {{.name = "--output", .shortName = "-o", .value = "DIR", .help = "where it goes",
           .bind = s.out, .needs = "a DIR"},
          {.name = "--runs", .value = "N", .help = "runs\nper allocator",
           .bind = numberIn("--runs", s.runs, 1, UINT32_MAX, "1 or more")},
          {.name = "--include-dir", .shortName = "-I", .value = "DIR", .help = "headers",
           .bind = s.includes, .glued = true},
          {.name = "--json", .help = "JSON", .bind = s.json},
          {.name = "--no-plots", .help = "no plots", .bind = {s.plots, false}}};
}

std::string parseError(std::vector<std::string> args) {
  std::vector<char*> v;
  for (std::string& a : args) v.push_back(a.data());
  TableSettings s;
  try {
    parseOptions(v, tableFor(s));
  } catch (const UsageError& e) {
    EXPECT_EQ(e.exitStatus(), 2);
    return e.what();
  }
  return "";
}

TEST(SupportOptions, TableBindsEveryFormInOrder) {
  std::vector<std::string> text = {"x", "-o", "a", "--output=b", "--runs", "7", "-Iinc",
                                   "-I", "more", "--json", "--no-plots", "--", "cmd", "-Ino"};
  std::vector<char*> argv;
  for (std::string& t : text) argv.push_back(t.data());
  TableSettings s;
  const Operands rest = parseOptions(argv, tableFor(s));
  EXPECT_EQ(s.out, "b") << "the last value given wins";
  EXPECT_EQ(s.runs, 7u);
  EXPECT_EQ(s.includes, (std::vector<std::string>{"inc", "more"}));
  EXPECT_TRUE(s.json);
  EXPECT_FALSE(s.plots);
  EXPECT_EQ(rest.operands, std::vector<std::string>{"x"});
  EXPECT_TRUE(rest.dashDash);
  EXPECT_EQ(rest.command, (std::vector<std::string>{"cmd", "-Ino"})) << "nothing split after --";
}

TEST(SupportOptions, TableErrorsAreUsageErrorsWithTheirMessages) {
  EXPECT_EQ(parseError({"--bogus"}), "unknown option '--bogus'");
  EXPECT_EQ(parseError({"-o"}), "-o needs a DIR");
  EXPECT_EQ(parseError({"--runs"}), "--runs needs a value");
  EXPECT_EQ(parseError({"--json=yes"}), "option '--json' takes no value");
  EXPECT_EQ(parseError({"--runs", "0"}), "invalid value '0' for --runs (1 or more)");
  EXPECT_EQ(parseError({"--runs=4294967296"}), "invalid value '4294967296' for --runs (1 or more)");
  EXPECT_EQ(parseError({"--runs=-1"}), "invalid value '-1' for --runs (1 or more)");
  EXPECT_EQ(parseError({"--runs=2", "-I", "d"}), "");
  EXPECT_EQ(parseError({"-Ox"}), "unknown option '-Ox'") << "only -I takes a joined value";
}

TEST(SupportOptions, TableWritesTheHelpColumns) {
  TableSettings s;
  EXPECT_EQ(formatOptions(tableFor(s), 20),
            "  -o DIR, --output DIR  where it goes\n"
            "  --runs N          runs\n"
            "                    per allocator\n"
            "  -I DIR, --include-dir DIR  headers\n"
            "  --json            JSON\n"
            "  --no-plots        no plots\n");
}

TEST(SupportProcess, ExitCodeOutputAndUsage) {
  strata::test::TempDir tmp;
  ChildSpec spec;
  spec.argv = {"sh", "-c", "echo out-$X; echo err >&2; read line || echo eof; exit 7"};
  spec.set = {"X=1"};
  spec.stdoutPath = tmp / "out";
  spec.stderrPath = tmp / "err";
  const ProcessResult r = runChild(spec);
  ASSERT_TRUE(r.started);
  EXPECT_EQ(r.exitCode, 7);
  EXPECT_EQ(r.signal, 0);
  EXPECT_FALSE(r.succeeded());
  EXPECT_EQ(describeStatus(r), "exit 7");
  EXPECT_EQ(r.shellStatus(), 7);
  EXPECT_EQ(strata::test::slurp(tmp.path() / "out"), "out-1\neof\n") << "stdin is /dev/null";
  EXPECT_EQ(strata::test::slurp(tmp.path() / "err"), "err\n");
  EXPECT_GT(r.maxRssBytes, 0u);
  EXPECT_GT(r.wallSeconds, 0);
}

TEST(SupportProcess, SignalNotFoundCaptureAndPreload) {
  ChildSpec crash;
  crash.argv = {"sh", "-c", "kill -SEGV $$"};
  const ProcessResult c = runChild(crash);
  EXPECT_EQ(c.signal, SIGSEGV);
  EXPECT_EQ(describeStatus(c), "signal 11 (SIGSEGV)");
  EXPECT_EQ(c.shellStatus(), 128 + SIGSEGV);

  ChildSpec missing;
  missing.argv = {"strata-no-such-command-x"};
  const ProcessResult m = runChild(missing);
  EXPECT_FALSE(m.started);
  EXPECT_EQ(describeStatus(m), "not found");
  EXPECT_EQ(m.shellStatus(), 127);
  std::string why;
  EXPECT_EQ(resolveCommand("strata-no-such-command-x", why), "");
  EXPECT_EQ(why, "command not found");
  EXPECT_NE(resolveCommand("sh", why), "");

  // The preload goes in front of what LD_PRELOAD held; an unloadable one only warns.
  ChildSpec env;
  env.argv = {"sh", "-c", "printf %s \"$LD_PRELOAD\""};
  env.set = {"LD_PRELOAD=/nonexistent-b.so"};
  env.preload = "/nonexistent-a.so";
  env.captureStdout = true;
  env.quiet = true;
  const ProcessResult e = runChild(env);
  EXPECT_TRUE(e.succeeded()) << describeStatus(e);
  EXPECT_EQ(e.out, "/nonexistent-a.so:/nonexistent-b.so");
}

// A child forked from a large process reports that process's resident size as its own peak
// (Linux keeps the peak across fork and exec); started from strata-exec it reports its own.
TEST(SupportProcess, OwnPeakRssIsTheCommandsNotTheParents) {
  ::setenv("STRATA_EXEC", STRATA_EXEC_PATH, 1);
  ASSERT_EQ(measuringLauncher(), STRATA_EXEC_PATH);
  constexpr std::size_t kBig = 96u << 20;
  std::vector<unsigned char> ballast(kBig, 1);  // resident in this process
  ChildSpec spec;
  spec.argv = {"sh", "-c", "exit 5"};
  const ProcessResult plain = runChild(spec);
  spec.ownPeakRss = true;
  const ProcessResult own = runChild(spec);
  EXPECT_GT(ballast[kBig - 1] + ballast[0], 0);
  ASSERT_TRUE(plain.started);
  ASSERT_TRUE(own.started) << describeStatus(own);
  EXPECT_TRUE(own.ownPeakRss);
  EXPECT_FALSE(plain.ownPeakRss);
  EXPECT_EQ(own.exitCode, 5);
  EXPECT_GE(plain.maxRssBytes, kBig) << "the inherited peak this launcher exists to avoid";
  EXPECT_LT(own.maxRssBytes, std::uint64_t{16} << 20);
  EXPECT_GT(own.maxRssBytes, 0u);

  // Signals, a command that cannot start, and argv[0] pass through the launcher unchanged.
  ChildSpec crash;
  crash.argv = {"sh", "-c", "kill -SEGV $$"};
  crash.ownPeakRss = true;
  EXPECT_EQ(runChild(crash).signal, SIGSEGV);
  ChildSpec name;
  name.argv = {"sh", "-c", "printf %s \"$0\""};
  name.captureStdout = true;
  name.ownPeakRss = true;
  EXPECT_EQ(runChild(name).out, "sh");
  ::unsetenv("STRATA_EXEC");
}

// What a child that stands in for this process needs (`strata run`, `strata record`): a
// signal another process sends to this one reaches the child, which ends as it decides; the
// child's own pid in the environment; and, as execvp, a script without "#!" run by /bin/sh.
TEST(SupportProcess, RelaysSignalsNamesThePidAndRunsScriptsWithoutInterpreter) {
  ChildSpec relay;
  relay.argv = {"sh", "-c", "trap 'exit 9' TERM; kill -TERM $PPID; i=0; "
                            "while [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done; exit 1"};
  relay.relaySignals = true;
  const ProcessResult r = runChild(relay);
  EXPECT_EQ(r.exitCode, 9) << describeStatus(r);
  EXPECT_EQ(r.shellStatus(), 9);

  ChildSpec pid;
  pid.argv = {"sh", "-c", "[ \"$STRATA_TEST_PID\" = \"$$\" ] && printf ok"};
  pid.set = {"STRATA_TEST_PID=stale"};
  pid.pidVariable = "STRATA_TEST_PID";
  pid.captureStdout = true;
  EXPECT_EQ(runChild(pid).out, "ok");

  char path[] = "/tmp/strata-support-script-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string body = "printf %s \"$0:$1\"; exit 7\n";
  ASSERT_EQ(::write(fd, body.data(), body.size()), static_cast<ssize_t>(body.size()));
  ::fchmod(fd, 0700);
  ::close(fd);
  ChildSpec script;
  script.argv = {path, "arg"};
  script.captureStdout = true;
  const ProcessResult sr = runChild(script);
  ::unlink(path);
  EXPECT_EQ(sr.exitCode, 7) << describeStatus(sr);
  EXPECT_EQ(sr.out, std::string(path) + ":arg");

  ChildSpec empty;
  empty.argv = {""};
  EXPECT_EQ(runChild(empty).shellStatus(), 127) << "an empty name is not found, as execvp";
}

TEST(SupportProc, ReadsThisProcess) {
  EXPECT_FALSE(selfExe().empty());
  EXPECT_EQ(selfExe(), procExe(static_cast<int>(::getpid())));
  const auto hwm = procStatusBytes("VmHWM");
  ASSERT_TRUE(hwm.has_value());
  EXPECT_GT(*hwm, 0u);
  EXPECT_FALSE(procStatusBytes("NoSuchField").has_value());
}

}  // namespace
