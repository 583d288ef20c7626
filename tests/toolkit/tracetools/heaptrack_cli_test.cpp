// `strata import --from heaptrack` as a user runs it: heaptrack_program recorded now by the
// installed heaptrack, imported, its objects checked and its sites named by
// `strata stats --sites` (skipped, saying so, where heaptrack is not installed: the project's
// setup script installs it); bad and corrupt input exit 1 naming the file and line.
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/require.hpp"
#include "test_util.hpp"

namespace {

using namespace tttest;
using Result = strata::test::RunResult;

Result strata(const std::vector<std::string>& args) {
  return strata::test::runProgram(STRATA_CLI_PATH, args);
}

// The heaptrack script on $PATH, or "".
std::string findHeaptrack() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/heaptrack";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

TEST(ImportHeaptrack, AFreshRecordingOfAKnownProgram) {
  const std::string heaptrack = findHeaptrack();
  if (heaptrack.empty())
    STRATA_SKIP_OR_FAIL("heaptrack is not installed (Debian package: heaptrack; "
                        "scripts/setup.sh installs it)");
  TempDir dir;
  const Result rec = strata::test::runProgram(heaptrack, {"-o", dir / "rec", STRATA_HEAPTRACK_PROGRAM});
  ASSERT_EQ(rec.exitCode(), 0) << rec.out << rec.err;
  // heaptrack compresses with zstd when it finds it, else with gzip.
  const std::string file = fs::exists(dir / "rec.zst") ? dir / "rec.zst" : dir / "rec.gz";
  ASSERT_TRUE(fs::exists(file)) << rec.out;

  const Result imp = strata({"import", "--from", "heaptrack", file, "-o", dir / "t.trace"});
  ASSERT_EQ(imp.exitCode(), 0) << imp.err;
  EXPECT_TRUE(contains(imp.out, "imported " + file + ": ")) << imp.out;

  // The program's objects (by their sizes: the runtime's own, such as libstdc++'s pool, are
  // larger), in the order it made them, freed in the order it freed them, nodes oldest first.
  const std::set<std::uint64_t> programSizes = {48, 1000, 3000, 200, 640};
  std::vector<std::uint64_t> sizes, ids;  // the program's objects' sizes and ids, in order
  std::vector<std::uint64_t> frees;       // the frees of those, in order
  std::set<std::uint64_t> live;
  std::uint64_t nextId = 0;
  for (const Event& e : readEvents(dir / "t.trace")) {
    if (e.op == Op::Malloc) {
      if (programSizes.count(e.size) != 0) {
        sizes.push_back(e.size);
        ids.push_back(nextId);
        live.insert(nextId);
      }
      ++nextId;
    } else if (e.op == Op::Free && live.erase(e.object) != 0) {
      frees.push_back(e.object);
    } else {
      EXPECT_EQ(e.op, Op::Free) << "heaptrack's recordings import as malloc and free only";
    }
  }
  ASSERT_EQ(sizes, (std::vector<std::uint64_t>{48, 48, 48, 1000, 3000, 200, 640}));
  // realloc's free of the 1000; free(nodes[1]) frees the oldest node; calloc's, aligned_alloc's,
  // the buffer, then the second node.
  EXPECT_EQ(frees, (std::vector<std::uint64_t>{ids[3], ids[0], ids[5], ids[6], ids[4], ids[1]}));
  EXPECT_EQ(live, std::set<std::uint64_t>{ids[2]});

  const Result st = strata({"stats", "--sites", dir / "t.trace", "--out", dir / "stats"});
  ASSERT_EQ(st.exitCode(), 0) << st.err;
  for (const char* fn : {"make_node (heaptrack_program.c:", "resize_buffer (heaptrack_program.c:",
                         "main (heaptrack_program.c:"})
    EXPECT_TRUE(contains(st.out, fn)) << fn << " in\n" << st.out;
}

TEST(ImportHeaptrack, BadInputExitsOneNamingTheFileAndLine) {
  TempDir dir;
  std::ofstream(dir / "bad.ht") << "v 10400 3\n+ 0\n";
  const Result r = strata({"import", "--from", "heaptrack", dir / "bad.ht", "-o", dir / "t.trace"});
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_TRUE(contains(r.err, "strata import: " + dir / "bad.ht" +
                                  ":2: malformed heaptrack line: allocation info index 0"))
      << r.err;

  // A zstd recording cut short.
  const std::string whole = slurp(std::string(STRATA_HEAPTRACK_DATA) + "/heaptrack_program.zst");
  std::ofstream(dir / "cut.zst", std::ios::binary) << whole.substr(0, whole.size() - 10);
  const Result c = strata({"import", "--from", "heaptrack", dir / "cut.zst", "-o", dir / "t.trace"});
  EXPECT_EQ(c.exitCode(), 1);
  EXPECT_TRUE(contains(c.err, dir / "cut.zst" + ": the zstd stream ends early")) << c.err;

  const Result u = strata({"import", "--from", "massif", dir / "bad.ht", "-o", dir / "t.trace"});
  EXPECT_EQ(u.exitCode(), 2);
  EXPECT_TRUE(contains(u.err, "supported: mtrace, heaptrack")) << u.err;
}

}  // namespace
