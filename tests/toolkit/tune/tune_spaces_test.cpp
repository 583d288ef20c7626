// The search spaces of `strata tune` (toolkit/tune/tune_spaces.cpp): a data file read into
// spaces and compositions, every malformed line an error naming FILE:LINE with exit status 2,
// and a setting (one choice per option) turned into the child's environment in each of the
// three styles, into words, and into a spec `strata run --allocator` takes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "support/error.hpp"
#include "tune/tune_spaces.hpp"

namespace {

using namespace strata::tune;

// A spaces file with this text, removed at the end of the test.
class SpacesFile {
 public:
  explicit SpacesFile(const std::string& text) {
    char name[] = "/tmp/strata-tune-spaces-XXXXXX";
    const int fd = ::mkstemp(name);
    EXPECT_GE(fd, 0);
    ::close(fd);
    path_ = name;
    std::ofstream(path_) << text;
  }
  ~SpacesFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

constexpr const char* kThreeStyles =
    "# a comment line\n"
    "[glibc]\n"
    "style tunables GLIBC_TUNABLES glibc.malloc.\n"
    "option arena_max 1 2  # a comment after the values\n"
    "option top_pad 0 131072\n"
    "\n"
    "[jemalloc]\n"
    "style conf MALLOC_CONF\n"
    "option narenas 1 4\n"
    "option dirty_decay_ms 0 1000\n"
    "[mimalloc]\n"
    "style env MIMALLOC_\n"
    "check MIMALLOC_SHOW_ERRORS=1\n"
    "option arena_eager_commit 0 1\n"
    "option purge_delay 0 10\n"
    "[compositions]\n"
    "composition kingsley strata::KingsleyHeap<strata::MmapHeap>\n";

// The message of the error loading `text` throws, after checking it asks for exit status 2.
std::string loadError(const std::string& text) {
  const SpacesFile f(text);
  try {
    loadSpaces(f.path());
  } catch (const strata::support::Error& e) {
    EXPECT_EQ(e.exitStatus(), 2) << e.what();
    const std::string m = e.what();
    EXPECT_EQ(m.rfind(f.path() + ":", 0), 0u) << "names the file: " << m;
    return m.substr(f.path().size());
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

TEST(TuneSpaces, ReadsEveryStyleWithLinesAndCompositions) {
  const SpacesFile f(kThreeStyles);
  const Spaces s = loadSpaces(f.path());
  EXPECT_EQ(s.path, f.path());
  ASSERT_EQ(s.allocators.size(), 3u);
  const Space& glibc = s.allocators[0];
  EXPECT_EQ(glibc.allocator, "glibc");
  EXPECT_EQ(glibc.style, Style::Tunables);
  EXPECT_EQ(glibc.variable, "GLIBC_TUNABLES");
  EXPECT_EQ(glibc.prefix, "glibc.malloc.");
  EXPECT_EQ(glibc.line, 2);
  ASSERT_EQ(glibc.options.size(), 2u);
  EXPECT_EQ(glibc.options[0].name, "arena_max");
  EXPECT_EQ(glibc.options[0].values, (std::vector<std::string>{"1", "2"})) << "comment cut off";
  EXPECT_EQ(glibc.options[0].line, 4);
  EXPECT_EQ(s.allocators[1].style, Style::Conf);
  EXPECT_EQ(s.allocators[1].variable, "MALLOC_CONF");
  EXPECT_EQ(s.allocators[2].style, Style::Env);
  EXPECT_EQ(s.allocators[2].prefix, "MIMALLOC_");
  EXPECT_EQ(s.allocators[2].checkEnvironment, std::vector<std::string>{"MIMALLOC_SHOW_ERRORS=1"});
  ASSERT_EQ(s.compositions.size(), 1u);
  EXPECT_EQ(s.compositions[0].name, "kingsley");
  EXPECT_EQ(s.compositions[0].type, "strata::KingsleyHeap<strata::MmapHeap>");
  EXPECT_EQ(s.compositions[0].line, 17);
}

TEST(TuneSpaces, EachMalformedLineIsAnErrorAtItsLine) {
  EXPECT_EQ(loadError("style env X_\n"), ":1: 'style' before any [section]");
  EXPECT_EQ(loadError("[glibc\n"), ":1: a section is [NAME]");
  EXPECT_EQ(loadError("[a]\nstyle env A_\n[a]\n"), ":3: allocator [a] is listed twice");
  EXPECT_EQ(loadError("[a]\nstyle bogus A_\n"),
            ":2: expected: style tunables VAR PREFIX | style conf VAR | style env PREFIX");
  EXPECT_EQ(loadError("[a]\nstyle env A_\noption n\n"), ":3: expected: option NAME VALUE...");
  EXPECT_EQ(loadError("[a]\nstyle env A_\noption n 1\noption n 2\n"),
            ":4: option n is listed twice in [a]");
  EXPECT_EQ(loadError("[a]\nstyle env A_\ncheck =1\n"),
            ":3: expected: check NAME=VALUE (set while the values are checked)");
  EXPECT_EQ(loadError("[a]\nstyle env A_\nset n 1\n"),
            ":3: unknown keyword 'set' (style, check, option, composition)");
  EXPECT_EQ(loadError("[compositions]\ncomposition a\n"),
            ":2: expected: composition NAME TYPE (the type without spaces)");
  EXPECT_EQ(loadError("\n[a]\noption n 1\n"), ":2: [a] has no style line")
      << "the section's own line, found at the end";
}

TEST(TuneSpaces, AFileThatCannotBeReadIsAnError) {
  try {
    loadSpaces("/nonexistent/tune-spaces.conf");
    ADD_FAILURE() << "no error";
  } catch (const strata::support::Error& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/tune-spaces.conf: cannot read the search spaces");
    EXPECT_EQ(e.exitStatus(), 2);
  }
}

TEST(TuneSpaces, ASettingBecomesEnvironmentWordsAndASpecInEachStyle) {
  const SpacesFile f(kThreeStyles);
  const Spaces s = loadSpaces(f.path());
  const Space& glibc = s.allocators[0];
  const Space& jemalloc = s.allocators[1];
  const Space& mimalloc = s.allocators[2];

  EXPECT_TRUE(environmentFor(glibc, {-1, -1}).empty()) << "the default sets nothing";
  EXPECT_EQ(describe(glibc, {-1, -1}), "default");
  EXPECT_EQ(specFor(glibc, {-1, -1}), "glibc");

  EXPECT_EQ(environmentFor(glibc, {1, 0}),
            std::vector<std::string>{"GLIBC_TUNABLES=glibc.malloc.arena_max=2:glibc.malloc.top_pad=0"});
  EXPECT_EQ(describe(glibc, {1, 0}), "arena_max=2 top_pad=0");
  EXPECT_EQ(specFor(glibc, {-1, 1}), "glibc:GLIBC_TUNABLES=glibc.malloc.top_pad=131072");

  EXPECT_EQ(environmentFor(jemalloc, {0, 1}),
            std::vector<std::string>{"MALLOC_CONF=narenas:1,dirty_decay_ms:1000"});
  EXPECT_EQ(specFor(jemalloc, {1, -1}), "jemalloc:MALLOC_CONF=narenas:4");

  EXPECT_EQ(environmentFor(mimalloc, {1, 0}),
            (std::vector<std::string>{"MIMALLOC_ARENA_EAGER_COMMIT=1", "MIMALLOC_PURGE_DELAY=0"}))
      << "one variable per option, the name in capitals";
  EXPECT_EQ(specFor(mimalloc, {-1, 1}), "mimalloc:MIMALLOC_PURGE_DELAY=10");
  EXPECT_EQ(describe(mimalloc, {0, -1}), "arena_eager_commit=0");
}

}  // namespace
