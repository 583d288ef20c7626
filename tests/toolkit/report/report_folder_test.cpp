// A result folder read for report.html (toolkit/report/result_folder.hpp, report_page.hpp,
// report_writer.hpp): the main document found and checked, the files it names loaded (and the
// files they name), each wrong folder refused with a message naming the file at fault, the
// bundle's fields, the page's placeholders, and writing.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/process.hpp"
#include "support/error.hpp"
#include "support/json_value.hpp"
#include "report/report_page.hpp"
#include "report/report_writer.hpp"
#include "report/result_folder.hpp"
#include "report/web_assets.hpp"

namespace {

namespace fs = std::filesystem;
using strata::report::readResultFolder;
using strata::report::ResultFolder;
using strata::support::JsonValue;
using strata::test::TempDir;

const std::string kResults =
    R"({"format": "strata-compare-1", "traces": [{"name": "proxy", "stats_file": "stats/proxy.json",
        "results": [{"allocator": "glibc", "series_file": "series/proxy-glibc.csv"}]}],
        "command": {"command_line": "./app --fast", "results": [{"stdout_file": "out/run.txt"}]}})";
const std::string kStats = R"({"events": 4, "sites_file": "sites/proxy.json"})";
const std::string kSites = R"({"format": "strata-sites-1", "note": "</script><!-- x"})";
const std::string kSeries = "seconds,event,heap_bytes,live_bytes\n0,0,4096,16\n0.1,1024,8192,32\n";

// A good compare folder: results.json naming a stats file that names a sites file, a curve,
// and a program's output (not drawn).
void writeGoodFolder(const TempDir& d) {
  d.write("results.json", kResults);
  d.write("stats/proxy.json", kStats);
  d.write("sites/proxy.json", kSites);
  d.write("series/proxy-glibc.csv", kSeries);
  d.write("out/run.txt", std::string("hello\n"));
}

std::string errorOf(const fs::path& dirOrDocument) {
  try {
    readResultFolder(dirOrDocument);
  } catch (const strata::support::Error& e) {
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != s.npos; }

TEST(ReportFolder, ReadsTheDocumentAndEveryNamedFile) {
  TempDir d;
  writeGoodFolder(d);
  const ResultFolder f = readResultFolder(d.path());
  EXPECT_EQ(f.kind, "compare");
  EXPECT_EQ(f.main["format"].string(), "strata-compare-1");
  ASSERT_EQ(f.files.size(), 3u);  // the .txt output is not embedded
  EXPECT_EQ(f.files[0].path, "stats/proxy.json");
  EXPECT_EQ(f.files[1].path, "series/proxy-glibc.csv");
  EXPECT_EQ(f.files[2].path, "sites/proxy.json");  // named by the stats file
  EXPECT_EQ(f.files[0].content["events"].unsignedNumber(), 4u);
  EXPECT_TRUE(f.files[1].content["csv"].boolean());
  EXPECT_EQ(f.files[1].content["data"].items()[2].items()[1].numberText(), "8192");
  // The document itself can be named instead of its folder.
  EXPECT_EQ(readResultFolder(d.path() / "results.json").files.size(), 3u);
}

TEST(ReportFolder, NoMainDocumentSaysWhatAResultFolderIs) {
  TempDir d;
  d.write("notes.json", std::string("{}"));
  const std::string e = errorOf(d.path());
  EXPECT_TRUE(contains(e, d.path().string() + ": not a result folder: no main document found"));
  EXPECT_TRUE(contains(e, "a result folder is where `strata compare`")) << e;
  EXPECT_TRUE(contains(errorOf(d.path() / "absent"), "absent: no such folder")) << e;
}

TEST(ReportFolder, TwoMainDocumentsAreNamed) {
  TempDir d;
  writeGoodFolder(d);
  d.write("tune.json", std::string(R"({"format": "strata-tune-1"})"));
  EXPECT_EQ(errorOf(d.path()), d.path().string() +
                                   ": holds more than one main document (results.json, "
                                   "tune.json); a result folder holds exactly one: name the "
                                   "document to draw");
  // Naming one of them draws it.
  EXPECT_EQ(readResultFolder(d.path() / "tune.json").kind, "tune");
}

TEST(ReportFolder, TruncatedDocument) {
  TempDir d;
  d.write("results.json", kResults.substr(0, 60));
  EXPECT_EQ(errorOf(d.path()), (d.path() / "results.json").string() +
                                   ": truncated: the JSON ends at byte 60 before the document "
                                   "is complete");
}

TEST(ReportFolder, AnotherFormatVersionIsRefused) {
  TempDir d;
  d.write("results.json", std::string(R"({"format": "strata-compare-99"})"));
  EXPECT_EQ(errorOf(d.path()), (d.path() / "results.json").string() +
                                   ": written in format strata-compare-99; this strata reads "
                                   "strata-compare-1 (draw it with the strata that wrote it)");
  d.write("results.json", std::string(R"({"traces": []})"));
  EXPECT_EQ(errorOf(d.path()), (d.path() / "results.json").string() +
                                   ": not a strata result document (no \"format\")");
}

TEST(ReportFolder, AMissingNamedFileNamesDocumentKeyAndFile) {
  TempDir d;
  writeGoodFolder(d);
  fs::remove(d.path() / "series/proxy-glibc.csv");
  const std::string e = errorOf(d.path());
  EXPECT_EQ(e, (d.path() / "results.json").string() +
                   " names series_file \"series/proxy-glibc.csv\", which cannot be used: " +
                   (d.path() / "series/proxy-glibc.csv").string() + ": no such file");
}

TEST(ReportFolder, ABadFileNamedByANamedFileNamesItsDocument) {
  TempDir d;
  writeGoodFolder(d);
  d.write("sites/proxy.json", std::string("{\"format\": "));
  const std::string e = errorOf(d.path());
  EXPECT_TRUE(contains(e, (d.path() / "stats/proxy.json").string() +
                              " names sites_file \"sites/proxy.json\"")) << e;
  EXPECT_TRUE(contains(e, "truncated")) << e;
  d.write("sites/proxy.json", kSites);
  d.write("series/proxy-glibc.csv", std::string("seconds,event\n1,2\n3\n"));
  EXPECT_TRUE(contains(errorOf(d.path()), "series/proxy-glibc.csv: line 3: expected 2 values"));
}

TEST(ReportFolder, PathsLeavingTheFolderAreRefused) {
  for (const std::string bad : {"../series.csv", "series/../../x.csv", "/etc/passwd"}) {
    TempDir d;
    d.write("results.json",
            R"({"format": "strata-compare-1", "traces": [{"series_file": ")" + bad + R"("}]})");
    const std::string e = errorOf(d.path());
    EXPECT_EQ(e, (d.path() / "results.json").string() + ": series_file \"" + bad +
                     "\" is not a path inside the result folder (paths under *_file keys are "
                     "relative to the folder, without \"..\")");
  }
}

TEST(ReportBundle, HoldsTheContractsFields) {
  TempDir d;
  writeGoodFolder(d);
  const JsonValue b = strata::report::reportBundle(readResultFolder(d.path()));
  std::vector<std::string> keys;
  for (const auto& m : b.members()) keys.push_back(m.first);
  EXPECT_EQ(keys, (std::vector<std::string>{"schema", "kind", "title", "folder", "strata_version",
                                            "main", "files"}));
  EXPECT_EQ(b["schema"].string(), "strata-report-1");
  EXPECT_EQ(b["kind"].string(), "compare");
  EXPECT_EQ(b["title"].string(), "strata compare: ./app --fast");
  EXPECT_EQ(b["folder"].string(), fs::canonical(d.path()).string());
  EXPECT_FALSE(b["strata_version"].string().empty());
  EXPECT_EQ(b["main"].dump(), readResultFolder(d.path()).main.dump());
  EXPECT_EQ(b["files"].members().size(), 3u);
  EXPECT_EQ(b["files"]["sites/proxy.json"]["note"].string(), "</script><!-- x");
}

TEST(ReportBundle, TitlesSayWhatWasMeasured) {
  const auto titleOf = [](const std::string& document, const std::string& text) {
    TempDir d;
    d.write(document, text);
    return strata::report::reportTitle(readResultFolder(d.path()));
  };
  EXPECT_EQ(titleOf("results.json", R"({"format": "strata-compare-1", "traces": [{"name": "a"},
            {"name": "b"}, {"name": "c"}, {"name": "d"}, {"name": "e"}]})"),
            "strata compare: a, b, c and 2 more");
  EXPECT_EQ(titleOf("stats.json", R"({"format": "strata-stats-1", "trace": "x.trace"})"),
            "strata stats: x.trace");
  EXPECT_EQ(titleOf("tune.json", R"({"format": "strata-tune-1", "app": "", "traces": ["t1"]})"),
            "strata tune: t1");
  EXPECT_EQ(titleOf("drag.json", R"({"format": "strata-drag-1", "command": "./app -x"})"),
            "strata drag: ./app -x");
  EXPECT_EQ(titleOf("diff.json", R"({"format": "strata-diff-1", "a": {"path": "old"},
            "b": {"path": "new"}, "traces": [{"name": "t"}]})"),
            "strata diff: old vs new");
}

TEST(ReportPage, DataCannotEndItsScriptElement) {
  const std::string safe = strata::report::scriptSafeJson(R"({"a":"</script><!--"})");
  EXPECT_EQ(safe, R"({"a":"<\/script>\u003c!--"})");
  const auto back = strata::support::parseJson(safe);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ((*back)["a"].string(), "</script><!--");
}

TEST(ReportPage, PlaceholdersAreFilledInManifestOrder) {
  const strata::report::WebAsset assets[] = {
      {"css", "a.css", "A{}"}, {"js", "lib.js", "LIB;"}, {"css", "b.css", "B{}"},
      {"js", "page.js", "PAGE;"}};
  const std::string page = strata::report::renderPage(
      "<style>/*@STRATA_CSS@*/</style><script>@STRATA_DATA@</script><script>/*@STRATA_JS@*/</script>",
      assets, "{\"x\":1}");
  EXPECT_EQ(page, "<style>\n/* a.css */\nA{}\n\n/* b.css */\nB{}\n</style>"
                  "<script>{\"x\":1}</script>"
                  "<script>\n/* lib.js */\nLIB;\n;\n/* page.js */\nPAGE;\n;</script>");
  // Data holding a placeholder's text is not searched again.
  const std::string tricky = strata::report::renderPage(
      "/*@STRATA_CSS@*/|@STRATA_DATA@|/*@STRATA_JS@*/", {}, "\"/*@STRATA_JS@*/\"");
  EXPECT_EQ(tricky, "|\"/*@STRATA_JS@*/\"|");
  EXPECT_THROW(strata::report::renderPage("<html>@STRATA_DATA@</html>", assets, "{}"),
               strata::support::Error);
}

TEST(ReportWriter, WritesThePageOrSaysWhyNot) {
  if (!strata::report::pageBuilt()) GTEST_SKIP() << "built without toolkit/report/web/manifest.txt";
  TempDir d;
  writeGoodFolder(d);
  const fs::path page = strata::report::writeReport(d.path());
  EXPECT_EQ(page, d.path() / "report.html");
  const std::string html = strata::test::slurp(page);
  EXPECT_TRUE(contains(html, "\"schema\":\"strata-report-1\"")) << html.substr(0, 200);
  EXPECT_FALSE(contains(html, "@STRATA_DATA@"));
  EXPECT_TRUE(contains(html, R"("note":"<\/script>\u003c!-- x")"));
  EXPECT_FALSE(contains(html, "</script><!-- x"));
  for (const auto& entry : fs::directory_iterator(d.path()))  // no temporary left
    EXPECT_FALSE(entry.path().filename().string().starts_with(".report.html")) << entry.path();
  if (::geteuid() != 0) {  // root writes anywhere
    ::chmod(d.path().c_str(), 0555);
    try {
      strata::report::writeReport(d.path());
      ADD_FAILURE() << "wrote into a read-only folder";
    } catch (const strata::support::Error& e) {
      EXPECT_TRUE(contains(e.what(), "report.html: cannot write: Permission denied")) << e.what();
    }
    ::chmod(d.path().c_str(), 0755);
  }
  EXPECT_THROW(strata::report::writeReportTo(d.path(), d.path() / "no/such/dir/r.html"),
               strata::support::Error);
}

}  // namespace
