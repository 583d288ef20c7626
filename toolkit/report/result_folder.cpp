// A result folder read and checked (result_folder.hpp): which main document, its format
// version, and the files named under "_file" keys, each loaded once.
#include "report/result_folder.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "report/csv_table.hpp"
#include "support/error.hpp"
#include "support/files.hpp"

namespace strata::report {

namespace fs = std::filesystem;
using support::Error;
using support::JsonValue;

const std::vector<ResultKind> kResultKinds = {{"results.json", "compare"},
                                              {"stats.json", "stats"},
                                              {"tune.json", "tune"},
                                              {"drag.json", "drag"},
                                              {"diff.json", "diff"}};

std::string expectedFormat(const std::string& kind) { return "strata-" + kind + "-1"; }

namespace {

constexpr const char* kWhatAFolderIs =
    "a result folder is where `strata compare`, `strata stats --sites`, `strata tune`, "
    "`strata drag` or `strata diff` wrote its results: one of results.json, stats.json, "
    "tune.json, drag.json or diff.json and the files it names";

std::string kindOfDocument(const fs::path& document) {
  for (const ResultKind& k : kResultKinds)
    if (document.filename() == k.document) return k.kind;
  throw Error(document.string() + ": not a result document (" + kWhatAFolderIs + ")");
}

// The main document parsed, and its "format" checked against the version this strata reads.
JsonValue readMainDocument(const fs::path& document, const std::string& kind) {
  const std::string name = document.string();
  JsonValue main = support::readJsonFile(name);
  const JsonValue* format = main.find("format");
  if (!format || !format->isString())
    throw Error(name + ": not a strata result document (no \"format\")");
  const std::string expected = expectedFormat(kind);
  if (format->string() != expected)
    throw Error(name + ": written in format " + format->string() + "; this strata reads " +
                expected + " (draw it with the strata that wrote it)");
  return main;
}

// A file named by a document: where it was named, for errors.
struct Named {
  std::string path, key, by;
};

void collectNamed(const JsonValue& v, const std::string& by, std::vector<Named>& out) {
  if (v.isArray()) {
    for (const JsonValue& item : v.items()) collectNamed(item, by, out);
    return;
  }
  for (const auto& [key, value] : v.members()) {
    constexpr std::string_view suffix = "_file";
    const bool names = key.size() > suffix.size() && key.ends_with(suffix);
    if (names && value.isString() && !value.string().empty())
      out.push_back({value.string(), key, by});
    else
      collectNamed(value, by, out);
  }
}

// A path under a "_file" key must stay inside the folder.
void checkRelative(const Named& n) {
  const fs::path p(n.path);
  bool up = false;
  for (const fs::path& part : p) up = up || part == "..";
  if (p.is_absolute() || up)
    throw Error(n.by + ": " + n.key + " \"" + n.path +
                "\" is not a path inside the result folder (paths under *_file keys are "
                "relative to the folder, without \"..\")");
}

// One named file loaded: JSON parsed (its own named files queued), CSV as its bundle object.
JsonValue loadNamed(const fs::path& dir, const Named& n, std::vector<Named>& queue) {
  const std::string full = (dir / n.path).string();
  const std::string ext = fs::path(n.path).extension().string();
  try {
    std::error_code ec;
    if (!fs::exists(full, ec)) throw Error(full + ": no such file");
    if (ext == ".json") {
      JsonValue doc = support::readJsonFile(full);
      collectNamed(doc, full, queue);
      return doc;
    }
    return csvBundle(parseCsv(support::readWholeFile(full), full));
  } catch (const Error& e) {
    throw Error(n.by + " names " + n.key + " \"" + n.path + "\", which cannot be used: " +
                e.what());
  }
}

}  // namespace

fs::path findMainDocument(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(dir.string() + ": " + (fs::exists(dir, ec) ? "not a folder" : "no such folder") +
                " (" + kWhatAFolderIs + ")");
  std::vector<fs::path> found;
  std::string names;
  for (const ResultKind& k : kResultKinds) {
    if (!fs::exists(dir / k.document, ec)) continue;
    found.push_back(dir / k.document);
    names += (names.empty() ? "" : ", ") + std::string(k.document);
  }
  if (found.empty())
    throw Error(dir.string() + ": not a result folder: no main document found (" +
                kWhatAFolderIs + ")");
  if (found.size() > 1)
    throw Error(dir.string() + ": holds more than one main document (" + names +
                "); a result folder holds exactly one: name the document to draw");
  return found.front();
}

ResultFolder readResultFolder(const fs::path& dirOrDocument) {
  ResultFolder r;
  std::error_code ec;
  if (fs::is_regular_file(dirOrDocument, ec)) {
    r.document = dirOrDocument;
    r.dir = dirOrDocument.parent_path().empty() ? fs::path(".") : dirOrDocument.parent_path();
  } else {
    r.dir = dirOrDocument;
    r.document = findMainDocument(dirOrDocument);
  }
  r.kind = kindOfDocument(r.document);
  r.main = readMainDocument(r.document, r.kind);
  std::vector<Named> queue;
  collectNamed(r.main, r.document.string(), queue);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const Named n = queue[i];  // a copy: loading appends to the queue
    checkRelative(n);
    const std::string ext = fs::path(n.path).extension().string();
    if (ext != ".json" && ext != ".csv") continue;  // a program's output: not drawn
    if (!seen.insert(n.path).second) continue;
    r.files.push_back({n.path, loadNamed(r.dir, n, queue)});
  }
  return r;
}

}  // namespace strata::report
