// Allocator specs parsed (toolkit/registry/allocator_spec.hpp): names, labels, library paths,
// settings whose values hold ':' and ',', lists split where a new spec starts, and the errors.
#include "registry/allocator_spec.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace {

using strata::registry::AllocatorSpec;
using strata::registry::parseSpec;
using strata::registry::splitSpecList;

AllocatorSpec parsed(const std::string& text) {
  try {
    return parseSpec(text, true);
  } catch (const strata::support::Error& e) {
    ADD_FAILURE() << text << ": " << e.what();
    return {};
  }
}

// The message parseSpec throws (exit status 2: a spec that names nothing usable), or "".
std::string error(const std::string& text) {
  try {
    parseSpec(text);
  } catch (const strata::support::Error& e) {
    EXPECT_EQ(e.exitStatus(), 2) << text;
    return e.what();
  }
  return "";
}

TEST(AllocatorSpec, AKnownNameIsItself) {
  const AllocatorSpec s = parsed("jemalloc");
  ASSERT_NE(s.known, nullptr);
  EXPECT_EQ(s.known->name, "jemalloc");
  EXPECT_EQ(s.label, "jemalloc");
  EXPECT_TRUE(s.settings.empty());
  EXPECT_TRUE(s.library.empty());
  EXPECT_TRUE(parsed("none").isNone);
}

TEST(AllocatorSpec, SettingsKeepColonsAndCommasOfTheirValues) {
  const AllocatorSpec je = parsed("jemalloc:MALLOC_CONF=narenas:1,dirty_decay_ms:0");
  EXPECT_EQ(je.settings, std::vector<std::string>{"MALLOC_CONF=narenas:1,dirty_decay_ms:0"});
  EXPECT_EQ(je.label, "jemalloc:MALLOC_CONF=narenas:1,dirty_decay_ms:0");
  const AllocatorSpec gl =
      parsed("glibc:GLIBC_TUNABLES=glibc.malloc.arena_max=2:glibc.malloc.tcache_count=0");
  EXPECT_EQ(gl.settings, std::vector<std::string>{
                             "GLIBC_TUNABLES=glibc.malloc.arena_max=2:glibc.malloc.tcache_count=0"});
  const AllocatorSpec st = parsed("strata:STRATA_PURGE_DELAY_MS=0:STRATA_DIRTY_SLOTS=1");
  EXPECT_EQ(st.settings,
            (std::vector<std::string>{"STRATA_PURGE_DELAY_MS=0", "STRATA_DIRTY_SLOTS=1"}));
  const AllocatorSpec mi = parsed("mimalloc:MIMALLOC_PURGE_DELAY=0,MIMALLOC_ARENA_EAGER_COMMIT=1");
  EXPECT_EQ(mi.settings, (std::vector<std::string>{"MIMALLOC_PURGE_DELAY=0",
                                                   "MIMALLOC_ARENA_EAGER_COMMIT=1"}));
}

TEST(AllocatorSpec, LibraryPathsNamedOrNot) {
  const AllocatorSpec plain = parsed("./libmine.so");
  EXPECT_EQ(plain.known, nullptr);
  EXPECT_EQ(plain.library, (std::filesystem::current_path() / "libmine.so").string());
  EXPECT_EQ(plain.label, "libmine.so");
  const AllocatorSpec named = parsed("mine=/opt/x/libmine.so.2:MINE_OPT=3");
  EXPECT_EQ(named.label, "mine");
  EXPECT_EQ(named.library, "/opt/x/libmine.so.2");
  EXPECT_EQ(named.settings, std::vector<std::string>{"MINE_OPT=3"});
  const AllocatorSpec bare = parsed("libfoo.so");
  EXPECT_EQ(bare.library, (std::filesystem::current_path() / "libfoo.so").string());
  EXPECT_EQ(parsed("je1=jemalloc:MALLOC_CONF=narenas:1").label, "je1");
}

TEST(AllocatorSpec, ErrorsSayWhatIsWrong) {
  EXPECT_NE(error("jemallocx").find("unknown allocator 'jemallocx'"), std::string::npos);
  EXPECT_NE(error("jemallocx").find("glibc, jemalloc"), std::string::npos);
  EXPECT_NE(error("jemalloc:narenas:1").find("'narenas:1' is not a setting"), std::string::npos);
  EXPECT_NE(error("jemalloc:MALLOC_CONF=").find("MALLOC_CONF has no value"), std::string::npos);
  EXPECT_NE(error("=jemalloc").find("empty label"), std::string::npos);
  EXPECT_NE(error("mine=").find("names nothing"), std::string::npos);
  EXPECT_NE(error("").find("empty"), std::string::npos);
  EXPECT_NE(error("none").find("only for `strata replay`"), std::string::npos);
  EXPECT_NE(error("glibc:LD_PRELOAD=/x.so").find("LD_PRELOAD is strata's"), std::string::npos);
  EXPECT_NE(error("./my lib.so").find("holds a space"), std::string::npos);
}

TEST(AllocatorSpec, ListsSplitWhereANewSpecStarts) {
  EXPECT_EQ(splitSpecList("glibc,jemalloc,strata"),
            (std::vector<std::string>{"glibc", "jemalloc", "strata"}));
  EXPECT_EQ(splitSpecList("jemalloc:MALLOC_CONF=narenas:1,dirty_decay_ms:0,glibc,mine=./libm.so"),
            (std::vector<std::string>{"jemalloc:MALLOC_CONF=narenas:1,dirty_decay_ms:0", "glibc",
                                      "mine=./libm.so"}));
  EXPECT_EQ(splitSpecList("./a.so,/b/libc.so.6,x=strata-lea"),
            (std::vector<std::string>{"./a.so", "/b/libc.so.6", "x=strata-lea"}));
  // An empty piece is kept so that the caller rejects it.
  EXPECT_EQ(splitSpecList("glibc,,strata"), (std::vector<std::string>{"glibc", "", "strata"}));
}

}  // namespace
