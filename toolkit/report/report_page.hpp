// report.html's contents: the bundle the page embeds (docs/toolkit/json.md, "What
// report.html embeds") and the page itself, the template with its style, data and scripts
// put in place.
#pragma once
#include <string>
#include <string_view>

#include "support/json_value.hpp"
#include "report/result_folder.hpp"
#include "report/web_assets.hpp"

namespace strata::report {

// The page's title: "strata compare: <command line or traces>", and likewise for the other
// kinds from what their main document says was measured.
std::string reportTitle(const ResultFolder& folder);

// The bundle: schema, kind, title, folder, strata_version, main, files.
support::JsonValue reportBundle(const ResultFolder& folder);

// JSON text made safe inside an HTML <script> element: every "</" written "<\/" and every
// "<!--" as "\u003c!--" (both can only be inside strings, where they mean the same).
std::string scriptSafeJson(std::string_view json);

// The page: `page` with "/*@STRATA_CSS@*/" replaced by the style sheets, "@STRATA_DATA@" by
// the data and "/*@STRATA_JS@*/" by the scripts (each followed by a newline and ";"), each in
// the order given, at the placeholders' places in `page` (never searched for in what was put
// in). Throws support::Error when the template lacks one of them.
std::string renderPage(std::string_view page, std::span<const WebAsset> assets,
                       std::string_view data);

}  // namespace strata::report
