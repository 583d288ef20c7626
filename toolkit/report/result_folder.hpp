// A result folder read for report.html: its one main document (results.json, stats.json,
// tune.json, drag.json or diff.json), checked for the format version this strata reads, and
// every file named under a key ending in "_file" (docs/toolkit/json.md), loaded.
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "support/json_value.hpp"

namespace strata::report {

// One kind of result: the main document's name and its kind ("results.json", "compare").
struct ResultKind {
  const char* document;
  const char* kind;
};
extern const std::vector<ResultKind> kResultKinds;

// The format version of the main documents this strata reads ("strata-compare-1").
std::string expectedFormat(const std::string& kind);

// A file the documents name, as the bundle holds it: a JSON document as it is, or a CSV file
// as its bundle object (csv_table.hpp).
struct NamedFile {
  std::string path;  // relative to the folder, as the document wrote it
  support::JsonValue content;
};

struct ResultFolder {
  std::filesystem::path dir;
  std::filesystem::path document;  // the main document's path
  std::string kind;                // "compare", "stats", ...
  support::JsonValue main;
  std::vector<NamedFile> files;    // in the order first named
};

// The main document of `dir`: exactly one of kResultKinds must be there. Throws
// support::Error saying which were found, or that none was and what a result folder is.
std::filesystem::path findMainDocument(const std::filesystem::path& dir);

// Reads the folder of DIR or of DIR/<main document>: the main document parsed and its format
// checked, then every named file loaded. Throws support::Error naming the file at fault.
ResultFolder readResultFolder(const std::filesystem::path& dirOrDocument);

}  // namespace strata::report
