// SPDX-License-Identifier: Apache-2.0
#include "accept/report_html.h"

#include <fmt/format.h>

namespace parity::accept {
namespace assets {
// Defined in the generated report_assets.cc (cmake/embed_assets.cmake).
extern const std::string_view kTemplate;
extern const std::string_view kStyle;
extern const std::string_view kScript;
extern const std::string_view kChartJs;
extern const std::string_view kChartJsVersion;
}  // namespace assets

namespace {

/// Replaces the first `marker` in `page` by `with`.
void Fill(std::string& page, std::string_view marker, std::string_view with) {
  const std::size_t at = page.find(marker);
  if (at == std::string::npos) return;
  page.replace(at, marker.size(), with);
}

/// JSON text safe inside a <script> element: every '<' (which JSON has only inside strings)
/// written as \u003c, so no "</script>" or "<!--" can appear.
std::string ScriptSafeJson(const Json& doc) {
  const std::string text = doc.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + 64);
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string_view ChartJsVersion() { return assets::kChartJsVersion; }

std::string ReportHtml(const Json& report) {
  std::string page(assets::kTemplate);
  Fill(page, "<!--PARITY:STYLE-->", fmt::format("<style>\n{}</style>", assets::kStyle));
  // The data goes in before the scripts, whose text could hold a marker.
  Fill(page, "<!--PARITY:DATA-->",
       fmt::format("<script id=\"parity-report-data\" type=\"application/json\">{}</script>",
                   ScriptSafeJson(report)));
  Fill(page, "<!--PARITY:SCRIPTS-->",
       fmt::format("<script>\n{}\n</script>\n<script>\n{}\n</script>", assets::kChartJs,
                   assets::kScript));
  return page;
}

}  // namespace parity::accept
