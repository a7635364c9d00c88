// SPDX-License-Identifier: Apache-2.0
// junit.xml: the criteria as JUnit test cases, one test suite per part, for CI systems
// (Jenkins, GitLab, GitHub's test reporters): FAIL a <failure>, ERROR an <error>, SKIP a
// <skipped> (a <failure> under --strict, where a skip fails the verdict).
#ifndef PARITY_ACCEPT_JUNIT_H_
#define PARITY_ACCEPT_JUNIT_H_

#include <string>
#include <string_view>
#include <vector>

#include "accept/criterion.h"

namespace parity::accept {

/// `text` escaped for XML character data and attribute values; characters XML 1.0 can't hold
/// become U+FFFD.
std::string XmlEscape(std::string_view text);

/// The JUnit XML document of the criteria; `timestamp` is ISO 8601, `seconds` the accept's time.
std::string JunitXml(const std::vector<CriterionResult>& criteria, bool strict,
                     std::string_view timestamp, double seconds);

}  // namespace parity::accept

#endif  // PARITY_ACCEPT_JUNIT_H_
