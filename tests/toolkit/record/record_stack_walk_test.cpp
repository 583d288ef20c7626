// The recorder's stack walk and loaded-object list (toolkit/record/recorder/stack_walk.hpp, modules.hpp)
// on their own: the walk gives the return addresses the compiler says, innermost first, up
// to its limit, skipping only leading frames in the skip range (this file is built without
// frame pointers, as Debian's programs are); the scan finds this executable (path, build id)
// and the C library; a library loaded and unloaded changes the loader's generation and is
// found under its absolute path while loaded.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>

#include "record/recorder/modules.hpp"
#include "record/recorder/stack_walk.hpp"

namespace {

using strata::record::ModuleList;
using strata::record::walkStack;

struct Seen {
  std::uint64_t frames[16] = {};
  std::size_t n = 0;
  std::uint64_t intoMiddle = 0, intoOuter = 0;  // the return addresses the compiler gives
};

volatile int gDepth = 0;

[[gnu::noinline]] void inner(Seen* s, std::size_t max, std::uintptr_t skipStart,
                             std::uintptr_t skipEnd) {
  s->intoMiddle = reinterpret_cast<std::uint64_t>(__builtin_return_address(0));
  s->n = walkStack(s->frames, max, skipStart, skipEnd);
  gDepth = gDepth + 1;  // no tail call
}
[[gnu::noinline]] void middle(Seen* s, std::size_t max, std::uintptr_t skipStart,
                              std::uintptr_t skipEnd) {
  s->intoOuter = reinterpret_cast<std::uint64_t>(__builtin_return_address(0));
  inner(s, max, skipStart, skipEnd);
  gDepth = gDepth + 1;
}
[[gnu::noinline]] Seen outer(std::size_t max, std::uintptr_t skipStart = 0,
                             std::uintptr_t skipEnd = 0) {
  Seen s;
  middle(&s, max, skipStart, skipEnd);
  gDepth = gDepth + 1;
  return s;
}

// Each test runs with both walkers: the C++ runtime's _Unwind_Backtrace and libunwind's
// unw_backtrace (installed by the project's setup script, so its absence is a failure).
enum class Walker { CxxRuntime, Libunwind };
void PrintTo(Walker w, std::ostream* os) {
  *os << (w == Walker::CxxRuntime ? "_Unwind_Backtrace" : "unw_backtrace");
}

class RecordStackWalk : public testing::TestWithParam<Walker> {
 protected:
  void SetUp() override {
    strata::record::gFastWalker = nullptr;
    if (GetParam() == Walker::Libunwind) {
      ASSERT_TRUE(strata::record::loadFastWalker()) << "libunwind.so.8 (Debian: libunwind8)";
      ASSERT_NE(strata::record::gFastWalker, nullptr);
    }
  }
  void TearDown() override { strata::record::gFastWalker = nullptr; }
};

TEST_P(RecordStackWalk, GivesTheCallersInnermostFirst) {
  const Seen s = outer(16);
  ASSERT_GE(s.n, 3u);
  EXPECT_EQ(s.frames[0], s.intoMiddle);
  EXPECT_EQ(s.frames[1], s.intoOuter);
  for (std::size_t i = 0; i < s.n; ++i) EXPECT_NE(s.frames[i], 0u);
}

TEST_P(RecordStackWalk, StopsAtItsLimit) {
  const Seen s = outer(2);
  ASSERT_EQ(s.n, 2u);
  EXPECT_EQ(s.frames[0], s.intoMiddle);
  EXPECT_EQ(s.frames[1], s.intoOuter);
  EXPECT_EQ(outer(0).n, 0u);
}

TEST_P(RecordStackWalk, SkipsOnlyTheLeadingFramesInTheRange) {
  const Seen plain = outer(16);
  // The range holds the first frame: it is skipped, the walk starts at the second.
  Seen s = outer(16, plain.intoMiddle, plain.intoMiddle + 1);
  ASSERT_GE(s.n, 2u);
  EXPECT_EQ(s.frames[0], s.intoOuter);
  // The range holds only the second frame: not leading, so kept.
  s = outer(16, plain.intoOuter, plain.intoOuter + 1);
  ASSERT_GE(s.n, 2u);
  EXPECT_EQ(s.frames[0], s.intoMiddle);
  EXPECT_EQ(s.frames[1], s.intoOuter);
}

// The second walk of a path (libunwind's: from what it kept of the first) gives the same
// frames as the first.
TEST_P(RecordStackWalk, AWalkAgainGivesTheSameFrames) {
  Seen walks[4];
  for (Seen& w : walks) w = outer(16);  // one call site: the same stack each time
  ASSERT_GE(walks[0].n, 3u);
  for (const Seen& w : walks) {
    ASSERT_EQ(w.n, walks[0].n);
    for (std::size_t k = 0; k < w.n; ++k) EXPECT_EQ(w.frames[k], walks[0].frames[k]) << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Walkers, RecordStackWalk,
                         testing::Values(Walker::CxxRuntime, Walker::Libunwind),
                         [](const testing::TestParamInfo<Walker>& info) {
                           return std::string(info.param == Walker::CxxRuntime ? "CxxRuntime"
                                                                               : "Libunwind");
                         });

// This executable's path, resolved.
std::string selfPath() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

TEST(RecordModules, TheScanFindsThisProgramAndTheCLibrary) {
  ModuleList list;
  const std::string exe = selfPath();
  ASSERT_TRUE(strata::record::scanLoaded(list, exe.c_str()));
  const std::size_t self = list.find(reinterpret_cast<std::uintptr_t>(&outer));
  ASSERT_LT(self, list.size());
  EXPECT_EQ(std::string(list[self].path, list[self].pathLength), exe);
  EXPECT_GT(list[self].buildIdLength, 0u);
  EXPECT_LE(list[self].start, reinterpret_cast<std::uintptr_t>(&outer));
  void* getpidAddr = ::dlsym(RTLD_DEFAULT, "getpid");
  ASSERT_NE(getpidAddr, nullptr);
  const std::size_t libc = list.find(reinterpret_cast<std::uintptr_t>(getpidAddr));
  ASSERT_LT(libc, list.size());
  EXPECT_NE(std::string(list[libc].path, list[libc].pathLength).find("libc.so"), std::string::npos);
  // A module already in the list is not added again.
  EXPECT_FALSE(list.add(list[libc]));
  std::size_t hint = 0;
  EXPECT_TRUE(list.contains(reinterpret_cast<std::uintptr_t>(getpidAddr), &hint));
  EXPECT_EQ(hint, libc);
  EXPECT_FALSE(list.contains(8, &hint));
  EXPECT_EQ(list.generation(), strata::record::loadGeneration());
  list.release();
}

// Loaded by a relative path ("./lib..."), as the loader then names it.
TEST(RecordModules, ALoadedLibraryIsFoundUnderItsAbsolutePath) {
  const std::uint64_t before = strata::record::loadGeneration();
  const std::filesystem::path plugin = RECORD_SITES_PLUGIN;
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(plugin.parent_path());
  void* lib = ::dlopen(("./" + plugin.filename().string()).c_str(), RTLD_NOW);
  std::filesystem::current_path(cwd);
  ASSERT_NE(lib, nullptr) << ::dlerror();
  const std::uint64_t loaded = strata::record::loadGeneration();
  EXPECT_NE(loaded, before);
  void* fn = ::dlsym(lib, "plugin_alloc");
  ASSERT_NE(fn, nullptr);
  ModuleList list;
  ASSERT_TRUE(strata::record::scanLoaded(list, selfPath().c_str()));
  const std::size_t i = list.find(reinterpret_cast<std::uintptr_t>(fn));
  ASSERT_LT(i, list.size());
  char real[PATH_MAX];
  ASSERT_NE(::realpath(RECORD_SITES_PLUGIN, real), nullptr);
  EXPECT_EQ(std::string(list[i].path, list[i].pathLength), real);
  EXPECT_GT(list[i].buildIdLength, 0u);
  list.release();
  ::dlclose(lib);
  EXPECT_NE(strata::record::loadGeneration(), loaded);
}

}  // namespace
