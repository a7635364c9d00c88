// SPDX-License-Identifier: Apache-2.0
#include "accept/junit.h"

#include <fmt/format.h>

#include <cstdint>

namespace parity::accept {

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '&':
        out += "&amp;";
        continue;
      case '<':
        out += "&lt;";
        continue;
      case '>':
        out += "&gt;";
        continue;
      case '"':
        out += "&quot;";
        continue;
      case '\'':
        out += "&apos;";
        continue;
      default:
        break;
    }
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      out += "\xEF\xBF\xBD";
      continue;
    }
    out += static_cast<char>(c);
  }
  return out;
}

std::string JunitXml(const std::vector<CriterionResult>& criteria, bool strict,
                     std::string_view timestamp, double seconds) {
  std::vector<std::string> parts;
  for (const CriterionResult& c : criteria) {
    bool seen = false;
    for (const std::string& p : parts) seen = seen || p == c.part;
    if (!seen) parts.push_back(c.part);
  }
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  std::string suites;
  for (const std::string& part : parts) {
    int t = 0, f = 0, e = 0, s = 0;
    std::string cases;
    for (const CriterionResult& c : criteria) {
      if (c.part != part) continue;
      ++t;
      std::string body;
      const std::string message = XmlEscape(c.reason);
      switch (c.status) {
        case Verdict::kPass:
          break;
        case Verdict::kFail:
          ++f;
          body = fmt::format("      <failure message=\"{}\" type=\"fail\">{}</failure>\n", message,
                             XmlEscape(c.title + ": " + c.reason));
          break;
        case Verdict::kError:
          ++e;
          body = fmt::format("      <error message=\"{}\" type=\"error\">{}</error>\n", message,
                             XmlEscape(c.reason));
          break;
        case Verdict::kSkip:
          if (strict) {
            ++f;
            body = fmt::format(
                "      <failure message=\"skipped, and --strict fails on a skip: {}\" "
                "type=\"skip\"/>\n",
                message);
          } else {
            ++s;
            body = fmt::format("      <skipped message=\"{}\"/>\n", message);
          }
          break;
      }
      const std::string name = XmlEscape(c.id);
      const std::string classname = XmlEscape("parity.accept." + part);
      if (body.empty()) {
        cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"/>\n", classname,
                             name);
      } else {
        cases += fmt::format(
            "    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n{}    "
            "</testcase>\n",
            classname, name, body);
      }
    }
    suites += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
        "time=\"0\" timestamp=\"{}\">\n{}  </testsuite>\n",
        XmlEscape(part), t, f, e, s, XmlEscape(timestamp), cases);
    tests += t;
    failures += f;
    errors += e;
    skipped += s;
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"parity accept\" tests=\"{}\" failures=\"{}\" errors=\"{}\" "
      "skipped=\"{}\" time=\"{:.3f}\">\n{}</testsuites>\n",
      tests, failures, errors, skipped, seconds, suites);
}

}  // namespace parity::accept
