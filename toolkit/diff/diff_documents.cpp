// Reading results.json and the sites files of a compare folder (diff_documents.hpp).
#include "diff/diff_documents.hpp"

#include <filesystem>

#include "support/error.hpp"

namespace strata::diff {
namespace {

namespace fs = std::filesystem;
using support::JsonValue;

// The document at `path`, an object whose "format" is `format`.
JsonValue readDocument(const std::string& path, const std::string& format,
                       const std::string& what) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw support::Error(path + ": missing (" + what + ")");
  JsonValue doc = support::readJsonFile(path);
  if (!doc.isObject()) throw support::Error(path + ": not a JSON object (" + what + ")");
  const JsonValue& f = doc["format"];
  if (!f.isString())
    throw support::Error(path + ": no \"format\" key (" + what + ", format " + format + ")");
  if (f.string() != format)
    throw support::Error(path + ": format " + f.string() + ", but this strata diff reads " +
                         format);
  return doc;
}

ReplayEntry replayEntry(const JsonValue& r) {
  ReplayEntry e;
  e.allocator = r["allocator"].string();
  e.seriesFile = r["series_file"].string();
  e.side.peakHeapBytes = r["peak_heap_bytes"].number();
  e.side.fragmentationPercent = r["fragmentation_percent"].number();
  e.side.timeMs = r["time_ms"].number();
  e.side.status = r["status"].isString() ? r["status"].string() : "unknown";
  return e;
}

ResultsTrace resultsTrace(const JsonValue& t, const std::string& path) {
  if (!t.isObject() || !t["name"].isString() || !t["stats"].isObject())
    throw support::Error(path + ": a trace without a name or stats");
  ResultsTrace out;
  out.name = t["name"].string();
  out.path = t["path"].string();
  out.program = t["program"].string();
  out.sitesFile = t["sites_file"].string();
  const JsonValue& s = t["stats"];
  out.peakLiveBytes = s["peak_live_bytes"].unsignedNumber();
  out.totalBytes = s["total_bytes"].unsignedNumber();
  out.allocations = s["total_objects"].unsignedNumber();
  for (const JsonValue& r : t["results"].items())
    if (r.isObject() && r["allocator"].isString()) out.replays.push_back(replayEntry(r));
  return out;
}

Frame frame(const JsonValue& f) {
  return Frame{.function = f["function"].string(),
               .file = f["file"].string(),
               .module = f["module"].string(),
               .line = static_cast<unsigned>(f["line"].unsignedNumber()),
               .offset = f["offset"].unsignedNumber()};
}

}  // namespace

std::vector<ResultsTrace> readResults(const std::string& dir) {
  const std::string path = (fs::path(dir) / "results.json").string();
  const JsonValue doc =
      readDocument(path, "strata-compare-1", "a folder written by strata compare");
  if (!doc["traces"].isArray()) throw support::Error(path + ": no \"traces\" array");
  std::vector<ResultsTrace> traces;
  for (const JsonValue& t : doc["traces"].items()) traces.push_back(resultsTrace(t, path));
  return traces;
}

std::vector<RunSite> readSitesDocument(const std::string& path) {
  const JsonValue doc = readDocument(path, "strata-sites-1", "a sites file named by results.json");
  std::vector<Frame> frames;
  for (const JsonValue& f : doc["frames"].items()) frames.push_back(frame(f));
  std::vector<RunSite> sites;
  for (const JsonValue& s : doc["sites"].items()) {
    RunSite site;
    for (const JsonValue& i : s["stack"].items()) {
      const std::uint64_t k = i.unsignedNumber(~std::uint64_t{0});
      if (k >= frames.size())
        throw support::Error(path + ": a site's stack names frame " + i.dump() + " of " +
                             std::to_string(frames.size()));
      site.stack.push_back(frames[k]);
    }
    site.figures = {s["bytes"].unsignedNumber(), s["allocations"].unsignedNumber(),
                    s["peak_live_bytes"].unsignedNumber()};
    sites.push_back(std::move(site));
  }
  return sites;
}

}  // namespace strata::diff
