// The allocator registry (toolkit/registry, target strata_registry) called directly with
// directories of our own. This test links the registry alone, without the `strata` command
// or the replay runner: the registry depends on neither.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "common/process.hpp"
#include "registry/allocator_registry.hpp"

namespace {

namespace fs = std::filesystem;
using strata::registry::AllocatorInfo;
using strata::registry::Location;
using strata::registry::SearchDirs;
using strata::test::TempDir;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A file standing in for a library in `dir` (the registry only checks that it is there).
fs::path fakeLibrary(const TempDir& dir, const std::string& rel) {
  return dir.write(rel, std::string("not really a library\n"));
}

// The canonical order of allocator names.
const std::vector<std::string> kOrder = {"glibc",           "jemalloc",   "mimalloc",
                                         "tcmalloc",        "strata-kingsley", "strata-lea",
                                         "strata",          "strata-secure"};

TEST(AllocatorRegistry, KnowsTheAllocatorsInOrder) {
  std::vector<std::string> names;
  for (const AllocatorInfo& a : strata::registry::knownAllocators()) names.emplace_back(a.name);
  EXPECT_EQ(names, kOrder);
  EXPECT_EQ(strata::registry::findAllocator("strata-lea")->library, "libstrata-lea.so");
  EXPECT_EQ(strata::registry::findAllocator("tcmalloc")->library, "libtcmalloc_minimal.so.4");
  EXPECT_EQ(strata::registry::findAllocator("dlmalloc"), nullptr);
}

TEST(AllocatorRegistry, MissingPeersNameTheirDebianPackage) {
  TempDir empty;
  const SearchDirs dirs{{empty.path().string()}, empty.path().string()};
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"jemalloc", "libjemalloc2"}, {"mimalloc", "libmimalloc2.0"}, {"tcmalloc", "libtcmalloc-minimal4"}};
  for (const auto& [name, package] : expected) {
    const Location l = strata::registry::locate(*strata::registry::findAllocator(name), dirs);
    EXPECT_FALSE(l.available) << name;
    const std::string how = strata::registry::howToGet(l);
    EXPECT_TRUE(contains(how, package)) << how;
    EXPECT_TRUE(contains(how, empty.path().string())) << how;
  }
}

TEST(AllocatorRegistry, PeersAreSearchedInOrderOfTheDirectories) {
  TempDir a, b;
  const fs::path inB = fakeLibrary(b, "libmimalloc.so.2");
  const SearchDirs dirs{{a.path().string(), b.path().string()}, ""};
  Location l = strata::registry::locate(*strata::registry::findAllocator("mimalloc"), dirs);
  EXPECT_TRUE(l.available);
  EXPECT_EQ(l.path, inB.string());
  const fs::path inA = fakeLibrary(a, "libmimalloc.so.2");
  l = strata::registry::locate(*strata::registry::findAllocator("mimalloc"), dirs);
  EXPECT_EQ(l.path, inA.string());
  // A directory by the library's name is not a library.
  fs::create_directories(a.path() / "libjemalloc.so.2");
  EXPECT_FALSE(strata::registry::locate(*strata::registry::findAllocator("jemalloc"), dirs).available);
}

TEST(AllocatorRegistry, DefaultDirsIncludeTheMultiarchDirectory) {
  const std::string multiarch = STRATA_TEST_MULTIARCH;
  if (multiarch.empty()) GTEST_SKIP() << "not a multiarch system";
  const SearchDirs dirs = strata::registry::defaultSearchDirs();
  ASSERT_FALSE(dirs.system.empty());
  EXPECT_EQ(dirs.system.front(), "/usr/lib/" + multiarch);
}

}  // namespace
