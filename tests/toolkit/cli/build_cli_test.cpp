// `strata build`: a heap composition (or a header that defines one) made into a drop-in
// malloc library by the system C++ compiler, checked by strata-probe, and usable by
// `strata run`. Each build compiles strata.hpp (seconds), so the cases are few: a composition
// whose library serves a C program's allocations, a header (its includes found by -I), a
// header's type named by --type and one it lacks, a wrong composition whose concept error
// is shown, and one that compiles but cannot serve malloc. The failures that compile nothing (a missing header, no compiler, a wrong
// invocation) are cheap.
//
// Under STRATA_SANITIZE the `strata` command is sanitized but the compiler it runs, the
// library it builds and the programs that preload it are not, so nothing here is skipped.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/process.hpp"
#include "strata_cli.hpp"

namespace {

namespace fs = std::filesystem;
using strata::test::slurp;
using strata::test::TempDir;
using Result = strata::test::RunResult;

const std::string kComposition = "strata::LockedHeap<strata::SpinLock, strata::KingsleyHeap<strata::MmapHeap>>";

Result strata(const std::vector<std::string>& args, const strata::test::EnvChanges& env = {}) {
  return strata::test::runStrata(args, env);
}

using strata::test::contains;

std::size_t count(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

// The value of "key=" in a program's output, or empty.
std::string field(const std::string& out, const std::string& key) {
  const std::size_t at = out.find(key + "=");
  if (at == std::string::npos) return {};
  const std::size_t start = at + key.size() + 1;
  return out.substr(start, out.find('\n', start) - start);
}

bool sameFile(const std::string& a, const fs::path& b) {
  std::error_code ec;
  return !a.empty() && fs::equivalent(a, b, ec);
}

// A library `strata build` wrote must work under `strata run`: the C program's malloc and free
// are the library's, and a shell runs on it.
void expectServesMalloc(const fs::path& lib) {
  const Result c = strata({"run", "--allocator", lib.string(), "--", STRATA_TEST_MALLOC_ORIGIN});
  ASSERT_EQ(c.exitCode(), 0) << c.out << c.err;
  EXPECT_TRUE(sameFile(field(c.out, "malloc"), lib)) << c.out;
  EXPECT_TRUE(sameFile(field(c.out, "free"), lib)) << c.out;
  const Result sh = strata({"run", "--allocator", lib.string(), "--", "sh", "-c", "echo ok"});
  EXPECT_EQ(sh.exitCode(), 0) << sh.err;
  EXPECT_EQ(sh.out, "ok\n");
}

TEST(BuildCli, ACompositionBecomesALibraryThatServesMalloc) {
  TempDir tmp;
  const fs::path lib = tmp.path() / "libmine.so";
  const Result r = strata({"build", kComposition, "-o", lib.string()});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "built " + lib.string() + " (" + kComposition + ")")) << r.out;
  EXPECT_TRUE(contains(r.out, "strata run --allocator " + lib.string() + " -- ")) << r.out;
  EXPECT_TRUE(fs::is_regular_file(lib));
  EXPECT_FALSE(fs::exists(lib.string() + ".log"));
  expectServesMalloc(lib);
}

TEST(BuildCli, AHeaderDefinesHeapOrTheTypeNamedByType) {
  TempDir tmp;
  // The header's own layer comes from a directory given with -I.
  tmp.write("inc/counting_layer.hpp", std::string(R"(#pragma once
#include <cstddef>
template <strata::Heap Super>
class CountingLayer : public Super {
 public:
  static constexpr std::size_t Alignment = Super::Alignment;
  void* malloc(std::size_t n) noexcept { ++calls; return Super::malloc(n); }
  std::size_t calls = 0;
};
)"));
  const fs::path header = tmp.write("src/myheap.hpp", std::string(R"(#pragma once
#include "counting_layer.hpp"
using Heap = strata::ForkSafeHeap<CountingLayer<strata::KingsleyHeap<strata::MmapHeap>>>;
)"));
  const fs::path lib = tmp.path() / "libheader.so";
  const Result r = strata({"build", header.string(), "-I", (tmp.path() / "inc").string(), "-o", lib.string()});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "(::Heap)")) << r.out;
  expectServesMalloc(lib);

  // A type of another name, in a namespace; "-IDIR" and --cxxflags are taken too.
  const fs::path named = tmp.write("named.hh", std::string(R"(
namespace mine {
using Small = strata::LockedHeap<strata::SpinLock, strata::KingsleyHeap<strata::MmapHeap>>;
}
)"));
  const fs::path lib2 = tmp.path() / "libnamed.so";
  const Result n = strata({"build", named.string(), "--type", "mine::Small", "-I" + tmp.path().string(),
                           "--cxxflags", "-O1 -g0", "-o", lib2.string()});
  ASSERT_EQ(n.exitCode(), 0) << n.out << n.err;
  EXPECT_TRUE(contains(n.out, "(::mine::Small)")) << n.out;
  EXPECT_TRUE(fs::is_regular_file(lib2));

  // Without --type the header lacks Heap, and the message says what it must define.
  const Result missing = strata({"build", named.string(), "-o", (tmp.path() / "libnone.so").string()});
  EXPECT_EQ(missing.exitCode(), 1) << missing.out << missing.err;
  EXPECT_TRUE(contains(missing.err, "error:")) << missing.err;
  EXPECT_TRUE(contains(missing.err, "must define the heap type Heap")) << missing.err;
  EXPECT_FALSE(fs::exists(tmp.path() / "libnone.so"));
}

TEST(BuildCli, AWrongCompositionShowsTheFirstErrorWithTheConceptItFails) {
  TempDir tmp;
  const fs::path lib = tmp.write("libbad.so", std::string("the old library\n"));
  // KingsleyHeap over int: int is not a heap (tests/layers/compile_fail/layer_over_non_heap.cpp).
  const Result r = strata({"build", "strata::LockedHeap<strata::SpinLock, strata::KingsleyHeap<int>>",
                           "-o", lib.string()});
  EXPECT_EQ(r.exitCode(), 1) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains(r.err, "does not compile")) << r.err;
  EXPECT_EQ(count(r.err, "error:"), 1u) << "only the first error:\n" << r.err;
  EXPECT_TRUE(contains(r.err, "strata-build.cpp:")) << r.err;
  EXPECT_TRUE(contains(r.err, "Heap<")) << r.err;
  EXPECT_TRUE(contains(r.err, "constraints not satisfied") || contains(r.err, "does not satisfy")) << r.err;
  EXPECT_FALSE(contains(r.err, "/strata-build-")) << "the temporary directory shows:\n" << r.err;
  EXPECT_EQ(slurp(lib), "the old library\n") << "a failed build must leave the output alone";
  const std::string log = slurp(lib.string() + ".log");
  EXPECT_TRUE(contains(r.err, lib.string() + ".log")) << r.err;
  EXPECT_GE(count(log, "error:"), 1u) << log;
}

TEST(BuildCli, ALibraryThatCannotServeMallocIsKeptButRefused) {
  // It compiles, preloads and exports malloc, but has no memory behind it.
  TempDir tmp;
  const fs::path lib = tmp.path() / "libnull.so";
  const Result r = strata({"build", "strata::LockedHeap<strata::SpinLock, strata::SizeHeap<strata::NullHeap<>>>",
                           "-o", lib.string()});
  EXPECT_EQ(r.exitCode(), 1) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains(r.err, "built " + lib.string() + ", but it fails the check")) << r.err;
  EXPECT_TRUE(contains(r.err, "malloc(16) returned NULL")) << r.err;
  EXPECT_TRUE(fs::is_regular_file(lib));
}

TEST(BuildCli, AMissingHeaderAndWrongInvocationsExitWith2) {
  TempDir tmp;
  const std::string lib = (tmp.path() / "lib.so").string();
  const Result r = strata({"build", (tmp.path() / "nowhere/myheap.hpp").string(), "-o", lib});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_TRUE(contains(r.err, "no such header: " + (tmp.path() / "nowhere/myheap.hpp").string())) << r.err;
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"build"}, "missing the COMPOSITION or HEADER"},
      {{"build", kComposition}, "missing -o LIBRARY"},
      {{"build", kComposition, "-o"}, "-o needs a LIBRARY"},
      {{"build", kComposition, "--type", "X", "-o", lib}, "--type names the heap of a HEADER"},
      {{"build", "a", "b", "-o", lib}, "give one COMPOSITION or HEADER"},
  };
  for (const Case& c : cases) {
    const Result e = strata(c.args);
    EXPECT_EQ(e.exitCode(), 2) << c.message;
    EXPECT_TRUE(contains(e.err, c.message)) << "expected '" << c.message << "' in: " << e.err;
    EXPECT_TRUE(contains(e.err, "usage: strata build")) << e.err;
  }
  EXPECT_FALSE(fs::exists(lib));
}

TEST(BuildCli, NoCompilerNamesTheOneItTriedAndThePackage) {
  TempDir tmp;
  const Result r = strata({"build", kComposition, "-o", (tmp.path() / "lib.so").string()},
                          {{"CXX", "/nonexistent/c++"}});
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_TRUE(contains(r.err, "/nonexistent/c++")) << r.err;
  EXPECT_TRUE(contains(r.err, "g++")) << r.err;
  EXPECT_FALSE(fs::exists(tmp.path() / "lib.so"));
}

}  // namespace
