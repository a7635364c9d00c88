// SPDX-License-Identifier: Apache-2.0
// report.html: one self-contained page that opens offline, the report's data inlined as JSON
// and drawn by the page's script with Chart.js (web/; both inlined at build time).
#ifndef PARITY_ACCEPT_REPORT_HTML_H_
#define PARITY_ACCEPT_REPORT_HTML_H_

#include <string>
#include <string_view>

#include "core/json_util.h"

namespace parity::accept {

/// The page for `report` (a parity-report document).
std::string ReportHtml(const Json& report);

/// The version of the inlined Chart.js.
std::string_view ChartJsVersion();

}  // namespace parity::accept

#endif  // PARITY_ACCEPT_REPORT_HTML_H_
