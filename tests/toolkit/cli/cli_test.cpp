// The `strata` command, run as a user runs it: the built executable with arguments, its
// stdout, stderr and exit status checked. The allocator registry it uses is tested on its own
// in registry_test.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/process.hpp"
#include "common/require.hpp"

namespace {

namespace fs = std::filesystem;
using strata::test::slurp;
using strata::test::TempDir;
using Result = strata::test::RunResult;

// A file standing in for a library in `dir` (the registry only checks that it is there).
fs::path fakeLibrary(const TempDir& dir, const std::string& rel) {
  return dir.write(rel, std::string("not really a library\n"));
}

// Runs `exe` (the built `strata` by default) with `args`, STRATA_LIB_DIR unset unless `env`
// sets it.
Result run(const std::vector<std::string>& args, const strata::test::EnvChanges& env = {},
           const std::string& exe = STRATA_CLI_PATH) {
  strata::test::EnvChanges all{{"STRATA_LIB_DIR", std::nullopt}};
  all.insert(all.end(), env.begin(), env.end());
  return strata::test::runProgram(exe, args, all);
}

// The lines of `text`.
std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) v.push_back(line);
  return v;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The canonical order of allocator names.
const std::vector<std::string> kOrder = {"glibc",           "jemalloc",   "mimalloc",
                                         "tcmalloc",        "strata-kingsley", "strata-lea",
                                         "strata",          "strata-secure"};

// Where this machine's jemalloc is, when the Debian package is installed (found here
// independently of the registry: the build machine's multiarch directory).
std::optional<std::string> systemJemalloc() {
  const std::string multiarch = STRATA_TEST_MULTIARCH;
  if (multiarch.empty()) return std::nullopt;
  const std::string p = "/usr/lib/" + multiarch + "/libjemalloc.so.2";
  return fs::exists(p) ? std::optional(p) : std::nullopt;
}

// ---- the top level: dispatch, help, usage errors -------------------------------------

TEST(CliMain, NoCommandIsAUsageError) {
  const Result r = run({});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_TRUE(contains(r.err, "usage: strata COMMAND")) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(CliMain, HelpListsEveryCommand) {
  for (const char* flag : {"--help", "-h", "help"}) {
    const Result r = run({flag});
    EXPECT_EQ(r.exitCode(), 0) << flag;
    EXPECT_TRUE(contains(r.out, "usage: strata COMMAND")) << r.out;
    for (const char* cmd : {"\n  allocators ", "\n  run ", "\n  build ", "\n  help "})
      EXPECT_TRUE(contains(r.out, cmd)) << flag << " does not list" << cmd;
  }
}

TEST(CliMain, UnknownCommandIsAnErrorWithUsage) {
  const Result r = run({"frobnicate", "x"});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_TRUE(contains(r.err, "unknown command 'frobnicate'")) << r.err;
  EXPECT_TRUE(contains(r.err, "usage: strata COMMAND")) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(CliMain, HelpForOneCommandMatchesItsHelpFlag) {
  for (const char* cmd : {"allocators", "run", "build"}) {
    const Result viaHelp = run({"help", cmd});
    const Result viaFlag = run({cmd, "--help"});
    EXPECT_EQ(viaHelp.exitCode(), 0);
    EXPECT_EQ(viaFlag.exitCode(), 0);
    EXPECT_EQ(viaHelp.out.rfind(std::string("usage: strata ") + cmd, 0), 0u) << viaHelp.out;
    EXPECT_EQ(viaHelp.out, viaFlag.out);
  }
  const Result r = run({"help", "nope"});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_TRUE(contains(r.err, "unknown command 'nope'")) << r.err;
}

TEST(CliMain, Version) {
  const Result r = run({"--version"});
  EXPECT_EQ(r.exitCode(), 0);
  EXPECT_EQ(r.out.rfind("strata ", 0), 0u) << r.out;
}

// ---- strata allocators ----------------------------------------------------------------

TEST(CliAllocators, ListsEveryKnownAllocatorInOrder) {
  const Result r = run({"allocators"});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  const std::vector<std::string> ls = lines(r.out);
  ASSERT_EQ(ls.size(), kOrder.size() + 1) << r.out;  // a header, then one line each
  for (std::size_t i = 0; i < kOrder.size(); ++i) {
    std::istringstream fields(ls[i + 1]);
    std::string name, status;
    fields >> name >> status;
    EXPECT_EQ(name, kOrder[i]);
    EXPECT_TRUE(status == "available" || status == "not") << ls[i + 1];
  }
  EXPECT_TRUE(contains(ls[1], "available"));
  if (const auto je = systemJemalloc()) {
    EXPECT_TRUE(contains(ls[2], *je)) << ls[2];
  }
}

TEST(CliAllocators, MissingOwnLibrariesSayWhatToBuild) {
  TempDir empty;
  const Result r = run({"allocators"}, {{"STRATA_LIB_DIR", empty.path().string()}});
  ASSERT_EQ(r.exitCode(), 0);
  const std::vector<std::string> ls = lines(r.out);
  ASSERT_EQ(ls.size(), 9u);
  EXPECT_TRUE(contains(ls[5], "not built")) << ls[5];
  EXPECT_TRUE(contains(ls[5], "strata_malloc_kingsley")) << ls[5];
  EXPECT_TRUE(contains(ls[7], "strata_malloc")) << ls[7];
  EXPECT_TRUE(contains(ls[7], (empty.path() / "libstrata.so").string())) << ls[7];
  EXPECT_TRUE(contains(ls[8], "strata_malloc_secure")) << ls[8];
  EXPECT_TRUE(contains(ls[8], (empty.path() / "libstrata-secure.so").string())) << ls[8];
}

TEST(CliAllocators, PathsListOnlyAvailableOnesAsNameTabLibrary) {
  TempDir lib;
  const fs::path own = fakeLibrary(lib, "libstrata.so");
  const Result r = run({"allocators", "--paths"}, {{"STRATA_LIB_DIR", lib.path().string()}});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  const std::vector<std::string> ls = lines(r.out);
  ASSERT_FALSE(ls.empty());
  EXPECT_EQ(ls.front(), "glibc\t");
  EXPECT_EQ(ls.back(), "strata\t" + own.string());
  std::size_t next = 0;  // position in kOrder: names must come in that order
  for (const std::string& line : ls) {
    const std::size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    EXPECT_EQ(line.find('\t', tab + 1), std::string::npos) << line;
    const std::string name = line.substr(0, tab), path = line.substr(tab + 1);
    while (next < kOrder.size() && kOrder[next] != name) ++next;
    ASSERT_LT(next, kOrder.size()) << "unknown or out-of-order name " << name;
    EXPECT_NE(name, "strata-kingsley");
    EXPECT_NE(name, "strata-lea");
    if (name != "glibc") {
      EXPECT_TRUE(fs::is_regular_file(path)) << line;
    }
  }
  if (const auto je = systemJemalloc()) {
    EXPECT_NE(std::find(ls.begin(), ls.end(), "jemalloc\t" + *je), ls.end()) << r.out;
  }
}

TEST(CliAllocators, OwnLibrariesAreFoundBesideTheExecutable) {
  // A copy of strata in DIR/bin finds Strata's libraries in DIR/lib by itself.
  TempDir tree;
  fs::create_directories(tree.path() / "bin");
  const fs::path exe = tree.path() / "bin" / "strata";
  fs::copy_file(STRATA_CLI_PATH, exe);
  const fs::path lea = fakeLibrary(tree, "lib/libstrata-lea.so");
  const Result r = run({"allocators", "--paths"}, {}, exe.string());
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  const std::vector<std::string> ls = lines(r.out);
  EXPECT_EQ(ls.back(), "strata-lea\t" + lea.string()) << r.out;
  // STRATA_LIB_DIR overrides it.
  TempDir other;
  const fs::path kingsley = fakeLibrary(other, "libstrata-kingsley.so");
  const Result o = run({"allocators", "--paths"}, {{"STRATA_LIB_DIR", other.path().string()}},
                       exe.string());
  EXPECT_EQ(lines(o.out).back(), "strata-kingsley\t" + kingsley.string()) << o.out;
}

TEST(CliAllocators, UnknownArgumentIsAUsageError) {
  const Result r = run({"allocators", "--bogus"});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_TRUE(contains(r.err, "unknown argument '--bogus'")) << r.err;
  EXPECT_TRUE(contains(r.err, "usage: strata allocators")) << r.err;
}

// ---- strata run -----------------------------------------------------------------------

TEST(CliRun, InvocationErrorsExitWith2AndSayWhy) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"run"}, "missing --allocator SPEC"},
      {{"run", "--", "true"}, "missing --allocator SPEC"},
      {{"run", "--allocator"}, "--allocator needs a SPEC"},
      {{"run", "--allocator", "glibc"}, "missing '--' and the COMMAND"},
      {{"run", "--allocator", "glibc", "true"}, "missing '--' before the command 'true'"},
      {{"run", "--allocator", "glibc", "--"}, "missing the COMMAND to run after '--'"},
      {{"run", "--allocator=glibc", "--frob", "--", "true"}, "unknown option '--frob'"},
      {{"run", "--allocator", "ptmalloc9", "--", "true"},
       "unknown allocator 'ptmalloc9'; known allocators: glibc, jemalloc, mimalloc, tcmalloc, "
       "strata-kingsley, strata-lea, strata, strata-secure"},
  };
  for (const Case& c : cases) {
    const Result r = run(c.args);
    EXPECT_EQ(r.exitCode(), 2) << c.message;
    EXPECT_TRUE(contains(r.err, c.message)) << "expected '" << c.message << "' in: " << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST(CliRun, OwnLibraryNotBuiltNamesTheTarget) {
  TempDir empty;
  const Result r = run({"run", "--allocator", "strata-lea", "--", "echo", "ran"},
                       {{"STRATA_LIB_DIR", empty.path().string()}});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_EQ(r.out, "");  // the command did not run
  EXPECT_TRUE(contains(r.err, "allocator 'strata-lea' is not available")) << r.err;
  EXPECT_TRUE(contains(r.err, "strata_malloc_lea")) << r.err;
}

TEST(CliRun, ExitStatusIsTheCommands) {
  for (int code : {0, 1, 7, 42}) {
    const Result r =
        run({"run", "--allocator", "glibc", "--", "sh", "-c", "exit " + std::to_string(code)});
    EXPECT_EQ(r.exitCode(), code);
  }
}

TEST(CliRun, ASignalEndsStrataToo) {
  // strata execs the command, so the signal that kills it is what the caller sees.
  const Result r = run({"run", "--allocator", "glibc", "--", "sh", "-c", "kill -TERM $$"});
  ASSERT_TRUE(WIFSIGNALED(r.status)) << "status " << r.status;
  EXPECT_EQ(WTERMSIG(r.status), SIGTERM);
}

TEST(CliRun, CommandNotFoundIs127AndNotExecutableIs126) {
  const Result r = run({"run", "--allocator", "glibc", "--", "strata-no-such-command-xyz"});
  EXPECT_EQ(r.exitCode(), 127);
  EXPECT_TRUE(contains(r.err, "strata-no-such-command-xyz: command not found")) << r.err;
  TempDir dir;
  const fs::path plain = dir.write("plain.txt", std::string("echo hi\n"));
  fs::permissions(plain, fs::perms::owner_read | fs::perms::owner_write);
  const Result n = run({"run", "--allocator", "glibc", "--", plain.string()});
  EXPECT_EQ(n.exitCode(), 126);
  EXPECT_TRUE(contains(n.err, "cannot execute")) << n.err;
}

TEST(CliRun, ArgumentsAfterDashDashBelongToTheCommand) {
  const Result r = run({"run", "--allocator", "glibc", "--", "sh", "-c", "echo \"$@\"", "sh",
                        "--help", "-h", "--allocator", "x"});
  EXPECT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_EQ(r.out, "--help -h --allocator x\n");
}

TEST(CliRun, PrependsTheLibraryToLdPreload) {
  // A stand-in library as Strata's (it takes over malloc by handing it to the C library's).
  TempDir lib;
  const fs::path own = lib.path() / "libstrata-kingsley.so";
  fs::create_symlink(STRATA_TEST_ENV_LIB, own);
  const std::vector<std::string> args = {"run", "--allocator", "strata-kingsley", "--",
                                         "sh", "-c", "printf '%s' \"$LD_PRELOAD\""};
  const Result r = run(args, {{"STRATA_LIB_DIR", lib.path().string()}, {"LD_PRELOAD", std::nullopt}});
  EXPECT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_EQ(r.out, own.string());
  // Whatever was preloaded already stays, after ours (a path that does not exist, so nothing
  // is preloaded into strata itself, which may be a sanitizer build).
  const Result both = run(args, {{"STRATA_LIB_DIR", lib.path().string()},
                                 {"LD_PRELOAD", "/nonexistent/libother.so"}});
  EXPECT_EQ(both.exitCode(), 0) << both.err;
  EXPECT_EQ(both.out, own.string() + ":/nonexistent/libother.so");
}

TEST(CliRun, GlibcLeavesLdPreloadAsItIs) {
  const std::vector<std::string> args = {"run", "--allocator", "glibc", "--",
                                         "sh", "-c", "printf '%s' \"${LD_PRELOAD-unset}\""};
  EXPECT_EQ(run(args, {{"LD_PRELOAD", std::nullopt}}).out, "unset");
  EXPECT_EQ(run(args, {{"LD_PRELOAD", "/nonexistent/libother.so"}}).out,
            "/nonexistent/libother.so");
}

TEST(CliRun, APeerLibraryIsReallyLoaded) {
  const auto je = systemJemalloc();
  if (!je) STRATA_SKIP_OR_FAIL("libjemalloc.so.2 not found (Debian package: libjemalloc2)");
  const Result r = run({"run", "--allocator", "jemalloc", "--", "cat", "/proc/self/maps"},
                       {{"LD_PRELOAD", std::nullopt}});
  EXPECT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_TRUE(contains(r.out, *je)) << "jemalloc is not mapped into the command";
  const Result plain = run({"run", "--allocator", "glibc", "--", "cat", "/proc/self/maps"},
                           {{"LD_PRELOAD", std::nullopt}});
  EXPECT_FALSE(contains(plain.out, "jemalloc"));
}

// ---- one option parser for every subcommand ---------------------------------------------

// Every subcommand whose help offers --heap-limit takes "1T" (and "=1T"), the same sizes;
// the others refuse the option by name.
TEST(CliOptions, HeapLimitTakesTheSameSizesInEverySubcommand) {
  TempDir tmp;
  const std::string trace = tmp / "w.trace";
  ASSERT_EQ(run({"generate", "web-proxy", "--size", "0.01", "-o", trace}).exitCode(), 0);
  const std::vector<std::string> all = {"replay", "run",    "record", "stats", "generate",
                                        "import", "export", "compare", "allocators"};
  std::vector<std::string> taking;
  for (const std::string& c : all)
    if (contains(run({"help", c}).out, "--heap-limit")) taking.push_back(c);
  EXPECT_EQ(taking, (std::vector<std::string>{"replay", "compare"}));
  for (const std::string& form : {std::string("1T"), std::string("1TiB")}) {
    const Result replay = run({"replay", trace, "--allocator", "glibc", "--heap-limit", form});
    EXPECT_EQ(replay.exitCode(), 0) << form << replay.err;
    const Result compare = run({"compare", trace, "--allocators", "glibc", "--runs", "1",
                                "--no-plots", "--out", tmp / "out", "--heap-limit=" + form});
    EXPECT_EQ(compare.exitCode(), 0) << form << compare.err;
  }
  for (const std::string& c : {std::string("replay"), std::string("compare")}) {
    const Result bad = run({c, trace, c == "replay" ? "--allocator" : "--allocators", "glibc",
                            "--heap-limit", "1X"});
    EXPECT_EQ(bad.exitCode(), 2) << c;
    EXPECT_TRUE(contains(bad.err, "1X")) << c << ": " << bad.err;
  }
  const Result stats = run({"stats", trace, "--heap-limit", "1T"});
  EXPECT_EQ(stats.exitCode(), 2);
  EXPECT_TRUE(contains(stats.err, "--heap-limit")) << stats.err;
}

}  // namespace
