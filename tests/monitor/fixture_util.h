// SPDX-License-Identifier: Apache-2.0
// Reading the expected.json of a recorded sysfs/procfs tree (tests/fixtures/monitor) and
// comparing readings with it.
#ifndef PARITY_TESTS_MONITOR_FIXTURE_UTIL_H_
#define PARITY_TESTS_MONITOR_FIXTURE_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "monitor/telemetry.h"

namespace parity::monitor::testing {

inline std::string FixtureDir(const std::string& tree) {
  return std::string(PARITY_FIXTURES) + "/" + tree;
}

inline Roots FixtureRoots(const std::string& tree) {
  return {FixtureDir(tree) + "/sys", FixtureDir(tree) + "/proc"};
}

inline nlohmann::json Expected(const std::string& tree) {
  std::ifstream in(FixtureDir(tree) + "/expected.json");
  return nlohmann::json::parse(in);
}

using ReadingKey = std::pair<std::string, Labels>;

inline std::map<ReadingKey, double> ExpectedReadings(const nlohmann::json& list) {
  std::map<ReadingKey, double> out;
  for (const auto& r : list) {
    Labels labels;
    for (const auto& [k, v] : r.at("labels").items()) labels[k] = v.get<std::string>();
    out[{r.at("metric").get<std::string>(), labels}] = r.at("value").get<double>();
  }
  return out;
}

/// Every expected reading present with its value, and nothing else (no metric that should be
/// absent, no duplicate).
inline void ExpectSameReadings(const std::vector<Reading>& got, const nlohmann::json& want,
                               const std::string& where) {
  const auto expected = ExpectedReadings(want);
  std::map<ReadingKey, double> actual;
  for (const Reading& r : got) {
    EXPECT_TRUE(actual.emplace(ReadingKey{r.metric, r.labels}, r.value).second)
        << where << ": duplicate " << r.metric;
  }
  for (const auto& [key, value] : expected) {
    const auto it = actual.find(key);
    if (it == actual.end()) {
      ADD_FAILURE() << where << ": missing " << key.first << " "
                    << ::testing::PrintToString(key.second);
      continue;
    }
    EXPECT_NEAR(it->second, value, 1e-9 * std::max(1.0, std::abs(value)))
        << where << ": " << key.first << " " << ::testing::PrintToString(key.second);
  }
  for (const auto& [key, value] : actual) {
    EXPECT_TRUE(expected.contains(key)) << where << ": unexpected " << key.first << " "
                                        << ::testing::PrintToString(key.second) << " = " << value;
  }
}

}  // namespace parity::monitor::testing

#endif  // PARITY_TESTS_MONITOR_FIXTURE_UTIL_H_
