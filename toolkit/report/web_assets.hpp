// The page's files, built into the `strata` executable (embed_assets.cmake generates their
// definitions from web/manifest.txt): report.html's template, and its style sheets and
// scripts in the manifest's order.
#pragma once
#include <span>
#include <string_view>

namespace strata::report {

struct WebAsset {
  std::string_view kind;  // "css" or "js"
  std::string_view path;  // as web/manifest.txt lists it
  std::string_view bytes;
};

// False when this strata was built without web/manifest.txt and web/report.html.
bool pageBuilt();
std::string_view pageTemplate();
std::span<const WebAsset> webAssets();

}  // namespace strata::report
