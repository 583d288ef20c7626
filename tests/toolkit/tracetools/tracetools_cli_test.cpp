// `strata stats`, `strata generate`, `strata import` and `strata export` end to end: the built
// executable run with arguments, its output, messages and exit status checked.
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <map>
#include <vector>

#include "json_check.hpp"
#include "test_util.hpp"

namespace {

using namespace tttest;

using Result = strata::test::RunResult;

// Runs `strata ARGS...`, stdout and stderr captured through files.
Result strata(const std::vector<std::string>& args) {
  return strata::test::runProgram(STRATA_CLI_PATH, args);
}

TEST(TraceToolsCli, GenerateThenStatsTableAndJson) {
  TempDir dir;
  const std::string trace = dir / "p.trace";
  const Result g = strata({"generate", "web-proxy", "--seed", "3", "--size", "0.02", "-o", trace});
  ASSERT_EQ(g.exitCode(), 0) << g.err;
  EXPECT_TRUE(contains(g.err, "events")) << g.err;

  const Result t = strata({"stats", trace});
  ASSERT_EQ(t.exitCode(), 0) << t.err;
  for (const char* part : {"total objects", "max live objects", "average object size",
                           "total bytes allocated", "peak live bytes", "total / peak", "threads",
                           "malloc", "free", "object sizes", "64-127 B", "1-2 KiB",
                           "bytes allocated between birth and death", "#"})
    EXPECT_TRUE(contains(t.out, part)) << part << " missing from:\n" << t.out;

  const Result j = strata({"stats", "--json", trace});
  ASSERT_EQ(j.exitCode(), 0) << j.err;
  std::map<std::string, std::string> top;
  ASSERT_TRUE(Json(j.out).parseObject(top)) << j.out;
  EXPECT_EQ(top["events"], std::to_string(readEvents(trace).size()));
  EXPECT_EQ(top["threads"], "1");
  EXPECT_EQ(top["complete"], "true");
  EXPECT_GT(std::stoull(top["peak_live_bytes"]), 900'000u);  // 48 MiB x 0.02
  EXPECT_EQ(top["size_histogram_log2"].front(), '[');
}

TEST(TraceToolsCli, GenerateIsDeterministicAndListsWorkloads) {
  TempDir dir;
  const std::string a = dir / "a.trace", b = dir / "b.trace";
  ASSERT_EQ(strata({"generate", "server", "--size=0.01", "--seed=9", "-o", a}).exitCode(), 0);
  ASSERT_EQ(strata({"generate", "server", "--size", "0.01", "--seed", "9", "--output", b}).exitCode(), 0);
  EXPECT_EQ(slurp(a), slurp(b));
  const Result l = strata({"generate", "--list"});
  EXPECT_EQ(l.exitCode(), 0);
  for (const char* w : {"web-proxy", "editor", "server", "steady"})
    EXPECT_TRUE(contains(l.out, w)) << l.out;
}

TEST(TraceToolsCli, GenerateUsageErrors) {
  TempDir dir;
  const Result u = strata({"generate", "nosuch", "-o", dir / "x.trace"});
  EXPECT_EQ(u.exitCode(), 2);
  EXPECT_TRUE(contains(u.err, "unknown workload 'nosuch'")) << u.err;
  EXPECT_TRUE(contains(u.err, "web-proxy, editor, server, steady")) << u.err;
  EXPECT_EQ(strata({"generate", "editor"}).exitCode(), 2);                                   // no -o
  EXPECT_EQ(strata({"generate", "editor", "--size", "0", "-o", dir / "x"}).exitCode(), 2);
  EXPECT_EQ(strata({"generate", "editor", "--size", "abc", "-o", dir / "x"}).exitCode(), 2);
  EXPECT_EQ(strata({"generate", "editor", "--seed", "-1", "-o", dir / "x"}).exitCode(), 2);
  EXPECT_EQ(strata({"generate", "editor", "--bogus"}).exitCode(), 2);
  const Result w = strata({"generate", "editor", "--size", "0.01", "-o", dir / "no/such/dir/x"});
  EXPECT_EQ(w.exitCode(), 1);
  EXPECT_TRUE(contains(w.err, "no/such/dir/x")) << w.err;
}

TEST(TraceToolsCli, StatsBadInput) {
  TempDir dir;
  const std::string trace = dir / "t.trace";
  ASSERT_EQ(strata({"generate", "editor", "--size", "0.01", "-o", trace}).exitCode(), 0);
  // Flip a byte inside the first chunk's payload: a CRC mismatch at that chunk (offset 16).
  std::string bytes = slurp(trace);
  bytes[100] = static_cast<char>(bytes[100] ^ 0x5a);
  const std::string bad = dir / "bad.trace";
  writeFile(bad, std::vector<unsigned char>(bytes.begin(), bytes.end()));
  const Result c = strata({"stats", bad});
  EXPECT_EQ(c.exitCode(), 1);
  EXPECT_TRUE(contains(c.err, "strata stats: " + bad + ": chunk CRC mismatch at byte offset 16")) << c.err;
  // Truncated in the middle of a chunk.
  const std::string cut = dir / "cut.trace";
  writeFile(cut, std::vector<unsigned char>(bytes.begin(), bytes.begin() + 1000));
  const Result t = strata({"stats", cut});
  EXPECT_EQ(t.exitCode(), 1);
  EXPECT_TRUE(contains(t.err, "truncated chunk at byte offset 16")) << t.err;
  // Not a trace at all, and a missing file.
  const std::string text = dir / "text.trace";
  writeFile(text, std::vector<unsigned char>{'h', 'e', 'l', 'l', 'o'});
  const Result n = strata({"stats", text});
  EXPECT_EQ(n.exitCode(), 1);
  EXPECT_TRUE(contains(n.err, "not a Strata trace")) << n.err;
  const Result m = strata({"stats", dir / "missing.trace"});
  EXPECT_EQ(m.exitCode(), 1);
  EXPECT_TRUE(contains(m.err, "missing.trace: cannot open")) << m.err;
  // Usage errors.
  EXPECT_EQ(strata({"stats"}).exitCode(), 2);
  EXPECT_EQ(strata({"stats", trace, trace}).exitCode(), 2);
  EXPECT_EQ(strata({"stats", "--bogus", trace}).exitCode(), 2);
  EXPECT_EQ(strata({"stats", "--help"}).exitCode(), 0);
}

TEST(TraceToolsCli, ExportImportRoundTrip) {
  TempDir dir;
  const std::string trace = dir / "e.trace", text = dir / "e.mtrace", back = dir / "b.trace";
  ASSERT_EQ(strata({"generate", "editor", "--size", "0.01", "-o", trace}).exitCode(), 0);
  const Result x = strata({"export", "--to", "mtrace", trace, "-o", text});
  ASSERT_EQ(x.exitCode(), 0) << x.err;
  EXPECT_TRUE(contains(x.out, "exported " + trace)) << x.out;
  EXPECT_TRUE(slurp(text).starts_with("= Start\n"));
  const Result i = strata({"import", "--from", "mtrace", text, "-o", back});
  ASSERT_EQ(i.exitCode(), 0) << i.err;
  EXPECT_TRUE(contains(i.out, "imported " + text)) << i.out;
  std::map<std::string, std::string> a, b;
  ASSERT_TRUE(Json(strata({"stats", "--json", trace}).out).parseObject(a));
  ASSERT_TRUE(Json(strata({"stats", "--json", back}).out).parseObject(b));
  for (const char* k : {"events", "total_objects", "total_bytes", "peak_live_bytes",
                        "max_live_objects", "never_freed", "lifetime_bytes_histogram_log2"})
    EXPECT_EQ(a[k], b[k]) << k;
}

TEST(TraceToolsCli, ImportWarnsAndFails) {
  TempDir dir;
  const std::string text = dir / "in.mtrace", out = dir / "o.trace";
  std::ofstream(text) << "= Start\n+ 0x10 0x8\n- 0x20\n- 0x10\n= End\n";
  const Result w = strata({"import", "--from", "mtrace", text, "-o", out});
  EXPECT_EQ(w.exitCode(), 0) << w.err;
  EXPECT_TRUE(contains(w.err, "warning: " + text + ": skipped 1 free(s)")) << w.err;
  EXPECT_EQ(readEvents(out).size(), 2u);

  std::ofstream(text) << "= Start\n+ 0x10 0x8\n* 0x10\n";
  const Result m = strata({"import", "--from", "mtrace", text, "-o", out});
  EXPECT_EQ(m.exitCode(), 1);
  EXPECT_TRUE(contains(m.err, "strata import: " + text + ":3: malformed mtrace line")) << m.err;

  EXPECT_EQ(strata({"import", text, "-o", out}).exitCode(), 2);                       // no --from
  EXPECT_EQ(strata({"import", "--from", "valgrind", text, "-o", out}).exitCode(), 2);
  EXPECT_EQ(strata({"import", "--from", "mtrace", text}).exitCode(), 2);              // no -o
  EXPECT_EQ(strata({"export", "--to", "mtrace", dir / "missing", "-o", out}).exitCode(), 1);
  EXPECT_EQ(strata({"export", "--to", "json", text, "-o", out}).exitCode(), 2);
}

}  // namespace
