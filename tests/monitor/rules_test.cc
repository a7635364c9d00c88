// SPDX-License-Identifier: Apache-2.0
// The monitor's threshold rules: ParseRules/LoadRules on good and malformed files, and the
// RuleEngine on hand-built sequences of samples (durations, rates, increases, episodes).
#include "monitor/rules.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace parity::monitor {
namespace {

constexpr double kEpoch = 1.7e9;  // wall clock of monotonic time 0 in these samples

Reading R(std::string metric, Labels labels, double value) {
  return Reading{std::move(metric), std::move(labels), value};
}

DeviceReadings Device(int index, std::vector<Reading> readings) {
  DeviceReadings device;
  device.device = index;
  device.source = "rocm-smi";
  device.info.vendor = "AMD";
  device.info.model = "AMD Instinct MI250X";
  device.info.uuid = "0x" + std::to_string(1000 + index);
  device.readings = std::move(readings);
  return device;
}

// A sample at monotonic time `t` with the given devices and host readings.
Sample At(double t, std::vector<DeviceReadings> devices, std::vector<Reading> host = {}) {
  Sample sample;
  sample.time_unix = kEpoch + t;
  sample.monotonic = t;
  sample.devices = std::move(devices);
  sample.host = std::move(host);
  return sample;
}

// Device 0 with one reading.
Sample Gpu(double t, const std::string& metric, Labels labels, double value) {
  return At(t, {Device(0, {R(metric, std::move(labels), value)})});
}

Sample Junction(double t, double celsius) {
  return Gpu(t, "gpu_temperature_celsius", {{"sensor", "junction"}}, celsius);
}

std::vector<Rule> Parse(const std::string& yaml) {
  Result<std::vector<Rule>> rules = ParseRules(yaml, "rules.yaml");
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  return rules.ok() ? std::move(rules).value() : std::vector<Rule>{};
}

RuleEngine Engine(const std::string& yaml) { return RuleEngine(Parse(yaml)); }

// ParseRules must fail with kInvalidInput and a message "rules.yaml: ..." holding every part.
void ExpectInvalid(const std::string& yaml, const std::vector<std::string>& parts) {
  Result<std::vector<Rule>> result = ParseRules(yaml, "rules.yaml");
  ASSERT_FALSE(result.ok()) << yaml;
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidInput);
  const std::string& message = result.status().message();
  EXPECT_EQ(message.rfind("rules.yaml: ", 0), 0u) << message;
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  }
}

// A one-rule file named "hot" on the junction temperature, with `extra` lines appended.
std::string HotRule(const std::string& extra) {
  return "- name: hot\n"
         "  metric: gpu_temperature_celsius\n"
         "  labels: {sensor: junction}\n" +
         extra;
}

constexpr char kHot3[] = R"(
- name: hot
  metric: gpu_temperature_celsius
  labels: {sensor: junction}
  op: ">"
  value: 85
  for: 3
)";

constexpr char kEccRate[] = R"(
- name: ecc
  metric: gpu_ecc_errors_total
  labels: {severity: correctable}
  op: ">"
  rate_per_hour: 10
)";

constexpr char kXid[] = R"(
- name: xid
  metric: parity_gpu_xid_events_total
  op: increase
  severity: fatal
)";

Sample Ecc(double t, double count) {
  return Gpu(t, "gpu_ecc_errors_total", {{"severity", "correctable"}, {"block", "umc"}}, count);
}

Sample Xid(double t, double count, const std::string& xid = "79") {
  return Gpu(t, "gpu_xid_events_total", {{"xid", xid}}, count);
}

// --- parsing --------------------------------------------------------------------------------

TEST(RulesParse, ReadsEveryField) {
  std::vector<Rule> rules = Parse(R"(
- name: throttled
  metric: parity_gpu_throttle_active
  labels: {reason: [hw_slowdown, sw_thermal_slowdown], device: 1}
  op: ">="
  value: 1
  for: 4
  severity: fatal
- name: ecc
  metric: gpu_ecc_errors_total
  op: ">"
  rate_per_hour: 2.5
- name: xid
  metric: gpu_xid_events_total
  op: increase
  value: 3
)");
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].name, "throttled");
  EXPECT_EQ(rules[0].metric, "gpu_throttle_active");  // prefix dropped
  const LabelMatchers expected = {{"device", {"1"}},
                                  {"reason", {"hw_slowdown", "sw_thermal_slowdown"}}};
  EXPECT_EQ(rules[0].labels, expected);
  EXPECT_EQ(rules[0].op, Op::kGreaterEqual);
  EXPECT_EQ(rules[0].value, 1.0);
  EXPECT_EQ(rules[0].for_samples, 4);
  EXPECT_FALSE(rules[0].rate_per_hour);
  EXPECT_EQ(rules[0].severity, Severity::kFatal);

  EXPECT_EQ(rules[1].op, Op::kGreater);
  ASSERT_TRUE(rules[1].rate_per_hour);
  EXPECT_EQ(*rules[1].rate_per_hour, 2.5);
  EXPECT_EQ(rules[1].severity, Severity::kWarning);  // the default
  EXPECT_EQ(rules[1].for_samples, 1);

  EXPECT_EQ(rules[2].op, Op::kIncrease);
  EXPECT_EQ(rules[2].value, 3.0);
}

TEST(RulesParse, AcceptsRulesMapAndEmptyList) {
  std::vector<Rule> rules = Parse("rules:\n" + HotRule("  op: \"<=\"\n  value: 10\n"));
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0].op, Op::kLessEqual);
  EXPECT_TRUE(Parse("[]").empty());
  EXPECT_TRUE(Parse("rules: []").empty());
}

TEST(RulesParse, DefaultsParseAsDocumented) {
  const std::vector<Rule> rules = DefaultRules();
  ASSERT_EQ(rules.size(), 8u);
  auto find = [&rules](const std::string& name) -> const Rule& {
    for (const Rule& rule : rules) {
      if (rule.name == name) return rule;
    }
    ADD_FAILURE() << "no default rule " << name;
    return rules[0];
  };
  const Rule& junction = find("junction_temperature");
  EXPECT_EQ(junction.metric, "gpu_temperature_celsius");
  EXPECT_EQ(junction.labels, (LabelMatchers{{"sensor", {"junction"}}}));
  EXPECT_EQ(junction.op, Op::kGreater);
  EXPECT_EQ(junction.value, 85.0);
  EXPECT_EQ(junction.for_samples, 3);
  EXPECT_EQ(junction.severity, Severity::kWarning);

  const Rule& power = find("board_power");
  EXPECT_EQ(power.metric, "gpu_power_watts");
  EXPECT_EQ(power.value, 450.0);
  EXPECT_EQ(power.for_samples, 3);

  const Rule& ecc = find("correctable_ecc_rate");
  EXPECT_EQ(ecc.labels, (LabelMatchers{{"severity", {"correctable"}}}));
  ASSERT_TRUE(ecc.rate_per_hour);
  EXPECT_EQ(*ecc.rate_per_hour, 10.0);

  const Rule& uncorrectable = find("uncorrectable_ecc");
  EXPECT_EQ(uncorrectable.op, Op::kIncrease);
  EXPECT_EQ(uncorrectable.severity, Severity::kFatal);
  EXPECT_EQ(find("xid_error").severity, Severity::kFatal);
  EXPECT_EQ(find("xid_error").metric, "gpu_xid_events_total");
  EXPECT_EQ(find("retired_pages").severity, Severity::kWarning);

  const Rule& throttle = find("clock_throttling");
  EXPECT_EQ(throttle.metric, "gpu_throttle_active");
  EXPECT_EQ(throttle.labels, (LabelMatchers{{"reason",
                                             {"hw_slowdown", "hw_thermal_slowdown",
                                              "sw_thermal_slowdown", "hw_power_brake_slowdown"}}}));
  EXPECT_EQ(throttle.for_samples, 3);

  const Rule& host = find("host_uncorrectable_ecc");
  EXPECT_EQ(host.metric, "host_ecc_errors_total");
  EXPECT_EQ(host.severity, Severity::kFatal);

  // The text --print-default-rules shows is what DefaultRules() parsed.
  Result<std::vector<Rule>> reparsed = ParseRules(DefaultRulesYaml(), "defaults");
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().message();
  EXPECT_EQ(reparsed->size(), rules.size());
}

TEST(RulesParse, MessagesNameTheRuleAndTheProblem) {
  ExpectInvalid(HotRule("  op: \">\"\n  value: 85\n  thershold: 90\n"),
                {"rule 'hot': unknown key 'thershold'", "rate_per_hour"});
  ExpectInvalid(HotRule("  op: \">\"\n  valeu: 85\n"), {"rule 'hot'", "did you mean 'value'?"});
  ExpectInvalid(
      "- name: hot\n  metric: gpu_temperature\n  op: \">\"\n  value: 1\n",
      {"rule 'hot': unknown metric 'gpu_temperature'", "did you mean 'gpu_temperature_celsius'?"});
  ExpectInvalid("- name: hot\n  metric: frobnicate\n  op: \">\"\n  value: 1\n",
                {"rule 'hot': unknown metric 'frobnicate'", "known metrics: ", "gpu_power_watts"});
  ExpectInvalid("- name: hot\n  op: \">\"\n  value: 1\n", {"rule 'hot': has no 'metric'"});
  ExpectInvalid(
      "- name: hot\n  metric: gpu_temperature_celsius\n  labels: {sensr: junction}\n"
      "  op: \">\"\n  value: 1\n",
      {"rule 'hot': metric gpu_temperature_celsius has no label 'sensr'",
       "did you mean 'sensor'?"});
  // Device labels exist on gpu_* metrics only.
  ExpectInvalid(
      "- name: watts\n  metric: host_power_watts\n  labels: {device: 0}\n"
      "  op: \">\"\n  value: 1\n",
      {"rule 'watts': metric host_power_watts has no label 'device'"});
  ExpectInvalid(HotRule("  op: \">\"\n  value: hot\n"),
                {"rule 'hot': 'value' is 'hot', not a number"});
  ExpectInvalid(HotRule("  op: \">\"\n  value: .inf\n"), {"rule 'hot': 'value'", "not finite"});
  ExpectInvalid(HotRule("  op: \">\"\n  value: [1]\n"), {"rule 'hot': 'value' is a list"});
  ExpectInvalid(HotRule("  op: \">\"\n"), {"rule 'hot': has no 'value'"});
  ExpectInvalid(HotRule("  op: \">\"\n  value: 85\n  for: 0\n"),
                {"rule 'hot': 'for' is '0', not a whole number of samples"});
  ExpectInvalid(HotRule("  op: \">\"\n  value: 85\n  for: 2.5\n"),
                {"rule 'hot': 'for' is '2.5', not a whole number"});
  ExpectInvalid(HotRule("  op: \">\"\n  value: 85\n  for: -3\n"), {"rule 'hot': 'for' is '-3'"});
  ExpectInvalid(HotRule("  value: 85\n"), {"rule 'hot': has no 'op'"});
  ExpectInvalid(HotRule("  op: \"=>\"\n  value: 85\n"),
                {"rule 'hot': op '=>' is not one of", "increase"});
  ExpectInvalid(HotRule("  op: >\n  value: 85\n"), {"rule 'hot': 'op' is empty: quote it"});
  ExpectInvalid(HotRule("  op: >=\n  value: 85\n"), {"line 4: not valid YAML", "quote"});
  ExpectInvalid(HotRule("  op: \">\"\n  value: 85\n  severity: critical\n"),
                {"rule 'hot': severity 'critical' is not warning or fatal"});
  ExpectInvalid(HotRule("  op: increase\n  for: 2\n"),
                {"rule 'hot': 'for' does not apply to op increase"});
  ExpectInvalid(HotRule("  op: increase\n  rate_per_hour: 2\n"),
                {"rule 'hot': 'rate_per_hour' does not apply to op increase"});
  ExpectInvalid(HotRule("  op: increase\n  value: -1\n"),
                {"rule 'hot': 'value' of op increase", "must not be negative"});
  ExpectInvalid(HotRule("  op: \">\"\n  rate_per_hour: 2\n"),
                {"rule 'hot': 'rate_per_hour' needs a counter, and gpu_temperature_celsius is a "
                 "gauge"});
  ExpectInvalid("- name: ecc\n  metric: gpu_ecc_errors_total\n  op: \">\"\n  rate_per_hour: -1\n",
                {"rule 'ecc': 'rate_per_hour' must not be negative"});
  ExpectInvalid("- name: ecc\n  metric: gpu_ecc_errors_total\n  op: \"<\"\n  rate_per_hour: 1\n",
                {"rule 'ecc': 'rate_per_hour' takes op \">\" or \">=\""});
  ExpectInvalid(
      "- name: ecc\n  metric: gpu_ecc_errors_total\n  op: \">\"\n  rate_per_hour: 1\n"
      "  value: 3\n",
      {"rule 'ecc': give 'value' or 'rate_per_hour', not both"});
  ExpectInvalid(
      "- name: ecc\n  metric: gpu_ecc_errors_total\n  op: \">\"\n  rate_per_hour: 1\n"
      "  for: 3\n",
      {"rule 'ecc': 'for' does not apply to 'rate_per_hour'"});
  ExpectInvalid("- name: ecc\n  metric: gpu_ecc_errors_total\n  op: \">\"\n  rate_per_hour: x\n",
                {"rule 'ecc': 'rate_per_hour' is 'x', not a number"});
  ExpectInvalid(HotRule("  op: \">\"\n  value: 1\n  name: again\n"), {"'name' is given twice"});
}

TEST(RulesParse, LabelValuesMustBeStringsOrLists) {
  const std::string head = "- name: t\n  metric: gpu_throttle_active\n  op: \">\"\n  value: 0\n";
  ExpectInvalid(head + "  labels: {reason: []}\n", {"rule 't': label 'reason'", "empty"});
  ExpectInvalid(head + "  labels: {reason: {a: b}}\n",
                {"rule 't': label 'reason' is a map, not a value or a list of values"});
  ExpectInvalid(head + "  labels: {reason: [[a]]}\n", {"rule 't': label 'reason'", "not a string"});
  ExpectInvalid(head + "  labels: [reason]\n", {"rule 't': 'labels' is a list, not a map"});
  ExpectInvalid(head + "  labels: {reason: a, reason: b}\n",
                {"rule 't': label 'reason' is given twice"});
}

TEST(RulesParse, RulesWithoutANameAreNumbered) {
  ExpectInvalid(kHot3 + std::string("- metric: gpu_power_watts\n  op: \">\"\n  value: 1\n"),
                {"rule #2: has no 'name'"});
  // Even a problem found before the name is read names the rule by its name.
  ExpectInvalid("- op: \">\"\n  bogus: 1\n  name: late\n", {"rule 'late': unknown key 'bogus'"});
  ExpectInvalid("- name: \"\"\n  metric: gpu_power_watts\n  op: \">\"\n  value: 1\n",
                {"rule #1: 'name' is empty"});
  ExpectInvalid("- name: [a]\n  metric: gpu_power_watts\n  op: \">\"\n  value: 1\n",
                {"rule #1: 'name' is a list"});
  ExpectInvalid("- name: \"a\\nb\"\n  metric: gpu_power_watts\n  op: \">\"\n  value: 1\n",
                {"rule #1: 'name' has a control character"});
  ExpectInvalid("- just a string\n", {"rule #1: is 'just a string', not a map"});
  ExpectInvalid(std::string(kHot3) + kHot3, {"rule 'hot': the name is already used by rule #1"});
}

TEST(RulesParse, RejectsFilesThatAreNotRuleLists) {
  ExpectInvalid("", {"empty"});
  ExpectInvalid("# nothing but a comment\n", {"empty"});
  ExpectInvalid("- [unclosed\n", {"not valid YAML"});
  ExpectInvalid("hello", {"'hello', not a list of rules"});
  ExpectInvalid("rulez: []\n", {"unknown top-level key 'rulez'"});
  ExpectInvalid("rules: 3\n", {"'rules' is '3', not a list"});
  ExpectInvalid(std::string("- a\0b\n", 6), {"NUL byte"});
  ExpectInvalid(std::string(100000, '['), {"rules.yaml"});  // deep nesting: an error, no crash
  std::string big = "# " + std::string(kMaxRulesFileBytes, 'x') + "\n[]\n";
  ExpectInvalid(big, {"larger than a rules file may be (1 MiB)"});
}

TEST(RulesParse, LoadRulesReadsFilesAndCapsTheirSize) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "parity_rules_test";
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "good.yaml").string();
  std::ofstream(good) << kHot3;
  Result<std::vector<Rule>> rules = LoadRules(good);
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_EQ(rules->size(), 1u);

  const std::string bad = (dir / "bad.yaml").string();
  std::ofstream(bad) << HotRule("  op: \">\"\n  value: warm\n");
  rules = LoadRules(bad);
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.status().message(),
            bad + ": line 5: rule 'hot': 'value' is 'warm', not a number");

  const std::string big = (dir / "big.yaml").string();
  std::ofstream(big) << "# " << std::string(kMaxRulesFileBytes, 'x') << "\n";
  rules = LoadRules(big);
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(rules.status().message().find("larger than a rules file may be"), std::string::npos);

  rules = LoadRules((dir / "missing.yaml").string());
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(rules.status().message().find("missing.yaml: cannot read the file"), std::string::npos)
      << rules.status().message();

  rules = LoadRules(dir.string());
  ASSERT_FALSE(rules.ok());
  EXPECT_NE(rules.status().message().find("is a directory"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// --- comparisons ----------------------------------------------------------------------------

TEST(RulesEngine, DurationFiresOncePerEpisodeAndResolves) {
  RuleEngine engine = Engine(kHot3);
  const std::vector<double> temperatures = {80, 86, 87, 88, 89, 84, 86, 87, 88};
  std::vector<std::pair<std::size_t, Alert>> seen;
  for (std::size_t i = 0; i < temperatures.size(); ++i) {
    for (Alert& alert : engine.Evaluate(Junction(10.0 * i, temperatures[i]))) {
      seen.emplace_back(i, std::move(alert));
    }
  }
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].first, 3u);
  EXPECT_FALSE(seen[0].second.resolved);
  EXPECT_EQ(seen[0].second.value, 88.0);
  EXPECT_EQ(seen[0].second.threshold, 85.0);
  EXPECT_EQ(seen[0].second.time_unix, kEpoch + 30.0);
  EXPECT_EQ(seen[0].second.rule, "hot");
  EXPECT_EQ(seen[0].second.severity, Severity::kWarning);
  EXPECT_EQ(seen[0].second.metric, "gpu_temperature_celsius");
  const Labels labels = {{"device", "0"},
                         {"model", "AMD Instinct MI250X"},
                         {"sensor", "junction"},
                         {"uuid", "0x1000"},
                         {"vendor", "AMD"}};
  EXPECT_EQ(seen[0].second.labels, labels);
  EXPECT_EQ(seen[0].second.message,
            "rule hot: gpu_temperature_celsius{device=\"0\",model=\"AMD Instinct MI250X\","
            "sensor=\"junction\",uuid=\"0x1000\",vendor=\"AMD\"} = 88 > 85 for 3 samples");

  EXPECT_EQ(seen[1].first, 5u);
  EXPECT_TRUE(seen[1].second.resolved);
  EXPECT_EQ(seen[1].second.value, 84.0);
  EXPECT_NE(seen[1].second.message.find("= 84, no longer > 85 (resolved)"), std::string::npos)
      << seen[1].second.message;

  EXPECT_EQ(seen[2].first, 8u);
  EXPECT_FALSE(seen[2].second.resolved);
  EXPECT_EQ(seen[2].second.value, 88.0);
}

TEST(RulesEngine, ConditionMustHoldInConsecutiveSamples) {
  RuleEngine engine = Engine(kHot3);
  for (double t : {86.0, 87.0, 84.0, 86.0, 87.0, 85.0, 90.0, 91.0}) {
    EXPECT_TRUE(engine.Evaluate(Junction(0, t)).empty()) << t;  // 85 is not > 85
  }
  EXPECT_EQ(engine.Evaluate(Junction(0, 92)).size(), 1u);
}

TEST(RulesEngine, ForOneFiresAtOnceAndOtherOpsCompare) {
  RuleEngine engine = Engine(R"(
- {name: ge, metric: gpu_power_watts, op: ">=", value: 450}
- {name: lt, metric: gpu_pcie_link_width, op: "<", value: 16}
- {name: le, metric: gpu_utilization_ratio, op: "<=", value: 0.1}
)");
  auto sample = [](double watts, double width, double utilization) {
    return At(0, {Device(0, {R("gpu_power_watts", {}, watts), R("gpu_pcie_link_width", {}, width),
                             R("gpu_utilization_ratio", {}, utilization)})});
  };
  EXPECT_TRUE(engine.Evaluate(sample(449.9, 16, 0.2)).empty());
  const std::vector<Alert> alerts = engine.Evaluate(sample(450, 8, 0.1));
  ASSERT_EQ(alerts.size(), 3u);
  EXPECT_EQ(alerts[0].rule, "ge");  // rule order
  EXPECT_EQ(alerts[1].rule, "lt");
  EXPECT_EQ(alerts[2].rule, "le");
  EXPECT_EQ(alerts[0].message.find("for"), std::string::npos) << alerts[0].message;
  EXPECT_NE(alerts[0].message.find("gpu_power_watts{device=\"0\","), std::string::npos);
  EXPECT_NE(alerts[0].message.find("= 450 >= 450"), std::string::npos) << alerts[0].message;
  EXPECT_TRUE(engine.Evaluate(sample(460, 4, 0.0)).empty());  // still the same episodes
}

TEST(RulesEngine, AbsentSeriesRestartsTheCountButKeepsTheEpisode) {
  RuleEngine engine = Engine(kHot3);
  const Sample gone = At(0, {Device(0, {})});
  EXPECT_TRUE(engine.Evaluate(Junction(0, 86)).empty());
  EXPECT_TRUE(engine.Evaluate(Junction(0, 87)).empty());
  EXPECT_TRUE(engine.Evaluate(gone).empty());
  EXPECT_TRUE(engine.Evaluate(Junction(0, 88)).empty());  // counts from 1 again
  EXPECT_TRUE(engine.Evaluate(Junction(0, 89)).empty());
  ASSERT_EQ(engine.Evaluate(Junction(0, 90)).size(), 1u);
  EXPECT_TRUE(engine.Evaluate(At(0, {})).empty());        // the whole device gone
  EXPECT_TRUE(engine.Evaluate(Junction(0, 91)).empty());  // still the same episode
  // A non-finite reading is as good as none: no resolution, no count.
  EXPECT_TRUE(engine.Evaluate(Junction(0, std::nan(""))).empty());
  const std::vector<Alert> resolved = engine.Evaluate(Junction(0, 70));
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_TRUE(resolved[0].resolved);
}

TEST(RulesEngine, NonFiniteReadingRestartsTheCount) {
  RuleEngine engine = Engine(kHot3);
  EXPECT_TRUE(engine.Evaluate(Junction(0, 86)).empty());
  EXPECT_TRUE(engine.Evaluate(Junction(0, 87)).empty());
  EXPECT_TRUE(engine.Evaluate(Junction(0, std::numeric_limits<double>::infinity())).empty());
  EXPECT_TRUE(engine.Evaluate(Junction(0, 88)).empty());
  EXPECT_TRUE(engine.Evaluate(Junction(0, 88)).empty());
  EXPECT_EQ(engine.Evaluate(Junction(0, 88)).size(), 1u);
}

TEST(RulesEngine, EachSensorAndDeviceIsItsOwnSeries) {
  RuleEngine engine = Engine(kHot3);
  auto sample = [](double gpu0_junction, double gpu0_edge, double gpu1_junction) {
    return At(0,
              {Device(0, {R("gpu_temperature_celsius", {{"sensor", "junction"}}, gpu0_junction),
                          R("gpu_temperature_celsius", {{"sensor", "edge"}}, gpu0_edge)}),
               Device(1, {R("gpu_temperature_celsius", {{"sensor", "junction"}}, gpu1_junction)})});
  };
  EXPECT_TRUE(engine.Evaluate(sample(70, 99, 86)).empty());
  EXPECT_TRUE(engine.Evaluate(sample(86, 99, 87)).empty());
  std::vector<Alert> alerts = engine.Evaluate(sample(87, 99, 88));
  ASSERT_EQ(alerts.size(), 1u);  // the edge sensor is not watched
  EXPECT_EQ(alerts[0].labels.at("device"), "1");
  EXPECT_EQ(alerts[0].labels.at("uuid"), "0x1001");
  alerts = engine.Evaluate(sample(88, 99, 60));
  ASSERT_EQ(alerts.size(), 2u);  // device 0 fires, device 1 resolves; device order
  EXPECT_EQ(alerts[0].labels.at("device"), "0");
  EXPECT_FALSE(alerts[0].resolved);
  EXPECT_EQ(alerts[1].labels.at("device"), "1");
  EXPECT_TRUE(alerts[1].resolved);
  EXPECT_EQ(engine.tracked_series(), 2u);
}

TEST(RulesEngine, SameSeriesTwiceInASampleCountsOnce) {
  RuleEngine engine = Engine(kHot3);
  auto twice = [](double celsius) {
    return At(0, {Device(0, {R("gpu_temperature_celsius", {{"sensor", "junction"}}, celsius),
                             R("gpu_temperature_celsius", {{"sensor", "junction"}}, celsius)})});
  };
  EXPECT_TRUE(engine.Evaluate(twice(90)).empty());
  EXPECT_TRUE(engine.Evaluate(twice(90)).empty());
  EXPECT_EQ(engine.Evaluate(twice(90)).size(), 1u);
}

TEST(RulesEngine, LabelListsMatchAnyValue) {
  RuleEngine engine = Engine(R"(
- name: throttled
  metric: gpu_throttle_active
  labels: {reason: [hw_slowdown, sw_thermal_slowdown]}
  op: ">"
  value: 0
)");
  auto sample = [](double hw, double sw, double idle) {
    return At(0, {Device(0, {R("gpu_throttle_active", {{"reason", "hw_slowdown"}}, hw),
                             R("gpu_throttle_active", {{"reason", "sw_thermal_slowdown"}}, sw),
                             R("gpu_throttle_active", {{"reason", "gpu_idle"}}, idle)})});
  };
  EXPECT_TRUE(engine.Evaluate(sample(0, 0, 1)).empty());
  std::vector<Alert> alerts = engine.Evaluate(sample(1, 0, 1));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].labels.at("reason"), "hw_slowdown");
  alerts = engine.Evaluate(sample(1, 1, 1));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].labels.at("reason"), "sw_thermal_slowdown");
}

TEST(RulesEngine, DeviceLabelsSelectDevicesAndMissingLabelsNeverMatch) {
  RuleEngine engine = Engine(R"(
- {name: one, metric: gpu_power_watts, labels: {device: 1, vendor: AMD}, op: ">", value: 100}
- {name: scoped, metric: gpu_ecc_errors_total, labels: {scope: volatile}, op: increase}
)");
  auto sample = [](double watts, double errors) {
    return At(0, {Device(0, {R("gpu_power_watts", {}, watts),
                             R("gpu_ecc_errors_total", {{"severity", "correctable"}}, errors)}),
                  Device(1, {R("gpu_power_watts", {}, watts)})});
  };
  EXPECT_TRUE(engine.Evaluate(sample(50, 0)).empty());
  const std::vector<Alert> alerts = engine.Evaluate(sample(200, 5));
  ASSERT_EQ(alerts.size(), 1u);  // device 1's power; the ECC series has no scope label
  EXPECT_EQ(alerts[0].rule, "one");
  EXPECT_EQ(alerts[0].labels.at("device"), "1");
}

TEST(RulesEngine, HostMetricsCarryOnlyTheirOwnLabels) {
  RuleEngine engine = Engine(R"(
- name: host_ue
  metric: host_ecc_errors_total
  labels: {severity: uncorrectable}
  op: increase
  severity: fatal
)");
  auto sample = [](double mc0, double mc1) {
    return At(
        0, {Device(0, {})},
        {R("host_ecc_errors_total", {{"severity", "uncorrectable"}, {"controller", "mc0"}}, mc0),
         R("host_ecc_errors_total", {{"severity", "uncorrectable"}, {"controller", "mc1"}}, mc1),
         R("host_ecc_errors_total", {{"severity", "correctable"}, {"controller", "mc0"}},
           mc0 * 10)});
  };
  EXPECT_TRUE(engine.Evaluate(sample(0, 2)).empty());
  const std::vector<Alert> alerts = engine.Evaluate(sample(1, 2));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].severity, Severity::kFatal);
  EXPECT_EQ(alerts[0].labels, (Labels{{"controller", "mc0"}, {"severity", "uncorrectable"}}));
  EXPECT_EQ(alerts[0].message,
            "rule host_ue: host_ecc_errors_total{controller=\"mc0\",severity=\"uncorrectable\"} "
            "= 1, up from 0");
}

// --- rates ----------------------------------------------------------------------------------

TEST(RulesEngine, RateBeforeAnHourUsesTheIncreaseSoFar) {
  RuleEngine engine = Engine(kEccRate);
  EXPECT_TRUE(engine.Evaluate(Ecc(0, 100)).empty());  // a baseline, however high
  EXPECT_TRUE(engine.Evaluate(Ecc(120, 105)).empty());
  EXPECT_TRUE(engine.Evaluate(Ecc(240, 110)).empty());  // 10 is not > 10
  const std::vector<Alert> alerts = engine.Evaluate(Ecc(300, 111));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].value, 11.0);
  EXPECT_EQ(alerts[0].threshold, 10.0);
  EXPECT_EQ(alerts[0].labels.at("block"), "umc");
  EXPECT_NE(alerts[0].message.find("rose by 11 in 5 min, > 10 per hour"), std::string::npos)
      << alerts[0].message;
  EXPECT_TRUE(engine.Evaluate(Ecc(360, 130)).empty());  // the same episode
}

TEST(RulesEngine, RateForgetsIncreasesOlderThanAnHour) {
  RuleEngine engine = Engine(kEccRate);
  EXPECT_TRUE(engine.Evaluate(Ecc(0, 0)).empty());
  ASSERT_EQ(engine.Evaluate(Ecc(60, 11)).size(), 1u);
  for (double t = 660; t <= 3060; t += 600) {
    EXPECT_TRUE(engine.Evaluate(Ecc(t, 11)).empty()) << t;  // the burst is inside the hour
  }
  // At 3660 s the points of 0 s are over an hour old: the window starts at 60 s.
  const std::vector<Alert> alerts = engine.Evaluate(Ecc(3660, 11));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_TRUE(alerts[0].resolved);
  EXPECT_EQ(alerts[0].value, 0.0);
  EXPECT_NE(alerts[0].message.find("no longer > 10 per hour (resolved)"), std::string::npos)
      << alerts[0].message;
  // A new burst is a new episode.
  EXPECT_TRUE(engine.Evaluate(Ecc(3720, 15)).empty());
  EXPECT_EQ(engine.Evaluate(Ecc(3780, 23)).size(), 1u);
}

TEST(RulesEngine, SteadySlowRateNeverFiresAndFastOneFiresOnce) {
  RuleEngine slow = Engine(kEccRate);
  RuleEngine fast = Engine(kEccRate);
  int fast_alerts = 0;
  double fired_at = -1;
  for (int i = 0; i <= 60; ++i) {  // 10 hours, a sample every 10 minutes
    const double t = 600.0 * i;
    EXPECT_TRUE(slow.Evaluate(Ecc(t, i)).empty()) << t;        // 6 per hour
    for (const Alert& alert : fast.Evaluate(Ecc(t, 2 * i))) {  // 12 per hour
      EXPECT_FALSE(alert.resolved);
      ++fast_alerts;
      fired_at = t;
    }
  }
  EXPECT_EQ(fast_alerts, 1);
  EXPECT_EQ(fired_at, 3600.0);  // 10 at 3000 s is not > 10; 12 at 3600 s is
}

TEST(RulesEngine, CounterResetCountsTheNewValueFromZero) {
  RuleEngine engine = Engine(kEccRate);
  EXPECT_TRUE(engine.Evaluate(Ecc(0, 100)).empty());
  EXPECT_TRUE(engine.Evaluate(Ecc(60, 105)).empty());  // +5
  EXPECT_TRUE(engine.Evaluate(Ecc(120, 3)).empty());   // reset: +3, 8 in all
  const std::vector<Alert> alerts = engine.Evaluate(Ecc(180, 6));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].value, 11.0);
}

TEST(RulesEngine, SamplesFurtherApartThanAnHourStillSeeTheLastInterval) {
  RuleEngine engine = Engine(kEccRate);
  EXPECT_TRUE(engine.Evaluate(Ecc(0, 0)).empty());
  const std::vector<Alert> alerts = engine.Evaluate(Ecc(7200, 50));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].value, 50.0);
}

TEST(RulesEngine, RateHistoryIsCappedYetSpansTheHour) {
  // A sample every 0.1 s and one error in each: 36000 an hour, far more points than the cap.
  RuleEngine engine = Engine(R"(
- {name: over30k, metric: gpu_ecc_errors_total, op: ">", rate_per_hour: 30000}
- {name: over36k, metric: gpu_ecc_errors_total, op: ">", rate_per_hour: 36001}
)");
  int over30k = 0;
  int over36k = 0;
  int fired_at = -1;
  for (int i = 0; i <= 45000; ++i) {
    for (const Alert& alert : engine.Evaluate(Gpu(0.1 * i, "gpu_ecc_errors_total", {}, i))) {
      EXPECT_FALSE(alert.resolved) << alert.message;
      if (alert.rule == "over30k") {
        ++over30k;
        fired_at = i;
      } else {
        ++over36k;
      }
    }
  }
  EXPECT_EQ(over30k, 1);
  EXPECT_EQ(fired_at, 30001);  // the window still starts at the first sample
  EXPECT_EQ(over36k, 0);       // and never spans more than the hour
}

// --- increases ------------------------------------------------------------------------------

TEST(RulesEngine, IncreaseFiresOncePerRisingRun) {
  RuleEngine engine = Engine(kXid);
  const std::vector<double> counts = {0, 0, 1, 2, 2, 2, 3, 3};
  std::vector<std::pair<std::size_t, bool>> seen;  // sample, resolved
  for (std::size_t i = 0; i < counts.size(); ++i) {
    for (const Alert& alert : engine.Evaluate(Xid(i, counts[i]))) {
      seen.emplace_back(i, alert.resolved);
      if (i == 2) {
        EXPECT_EQ(alert.severity, Severity::kFatal);
        EXPECT_EQ(alert.value, 1.0);
        EXPECT_EQ(alert.threshold, 0.0);
        EXPECT_NE(alert.message.find("gpu_xid_events_total{device=\"0\""), std::string::npos);
        EXPECT_NE(alert.message.find("xid=\"79\"} = 1, up from 0"), std::string::npos)
            << alert.message;
      }
    }
  }
  const std::vector<std::pair<std::size_t, bool>> expected = {
      {2, false}, {4, true}, {6, false}, {7, true}};
  EXPECT_EQ(seen, expected);
}

TEST(RulesEngine, FirstSightOfASeriesIsABaseline) {
  RuleEngine engine = Engine(kXid);
  EXPECT_TRUE(engine.Evaluate(Xid(0, 5)).empty());  // non-zero at first sight: no alert
  EXPECT_TRUE(engine.Evaluate(Xid(1, 5)).empty());
  // A new XID appearing with a count of 1 is a new series: also a baseline.
  EXPECT_TRUE(engine
                  .Evaluate(At(2, {Device(0, {R("gpu_xid_events_total", {{"xid", "79"}}, 5),
                                              R("gpu_xid_events_total", {{"xid", "48"}}, 1)})}))
                  .empty());
  EXPECT_EQ(engine.Evaluate(Xid(3, 6)).size(), 1u);
}

TEST(RulesEngine, IncreaseSurvivesAGapAndCountsResets) {
  RuleEngine engine = Engine(kXid);
  EXPECT_TRUE(engine.Evaluate(Xid(0, 4)).empty());
  EXPECT_TRUE(engine.Evaluate(At(1, {})).empty());
  EXPECT_EQ(engine.Evaluate(Xid(2, 5)).size(), 1u);  // compared with the last sample seen
  EXPECT_EQ(engine.Evaluate(Xid(3, 5)).size(), 1u);  // resolved
  EXPECT_TRUE(engine.Evaluate(Xid(4, 0)).empty());   // reset to 0: no new event
  EXPECT_TRUE(engine.Evaluate(Xid(5, 0)).empty());
  EXPECT_EQ(engine.Evaluate(Xid(6, 9)).size(), 1u);
  EXPECT_EQ(engine.Evaluate(Xid(7, 9)).size(), 1u);              // resolved
  const std::vector<Alert> alerts = engine.Evaluate(Xid(8, 2));  // reset to 2: two new events
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_FALSE(alerts[0].resolved);
  EXPECT_EQ(alerts[0].threshold, 0.0);
  EXPECT_NE(alerts[0].message.find("= 2 after a counter reset"), std::string::npos)
      << alerts[0].message;
}

TEST(RulesEngine, IncreaseStepAndGauges) {
  RuleEngine engine = Engine(R"(
- {name: jump, metric: gpu_retired_pages_total, op: increase, value: 5}
- {name: grow, metric: gpu_memory_used_bytes, op: increase}
)");
  auto sample = [](double pages, double bytes) {
    return At(0, {Device(0, {R("gpu_retired_pages_total", {{"cause", "dbe"}}, pages),
                             R("gpu_memory_used_bytes", {}, bytes)})});
  };
  EXPECT_TRUE(engine.Evaluate(sample(10, 100)).empty());
  EXPECT_TRUE(engine.Evaluate(sample(15, 50)).empty());  // +5 is not more than 5; a gauge fell
  std::vector<Alert> alerts = engine.Evaluate(sample(21, 60));
  ASSERT_EQ(alerts.size(), 2u);
  EXPECT_EQ(alerts[0].rule, "jump");
  EXPECT_EQ(alerts[0].threshold, 20.0);
  EXPECT_NE(alerts[0].message.find("= 21, up from 15 (by more than 5)"), std::string::npos)
      << alerts[0].message;
  EXPECT_EQ(alerts[1].rule, "grow");
  EXPECT_EQ(alerts[1].threshold, 50.0);  // a gauge's fall is not a reset
}

// --- defaults, JSON, bounds -----------------------------------------------------------------

TEST(RulesEngine, DefaultRulesFire) {
  RuleEngine engine(DefaultRules());
  auto sample = [](double t, double celsius, double watts, double xid, double throttled,
                   double host_ue) {
    return At(
        t,
        {Device(0,
                {R("gpu_temperature_celsius", {{"sensor", "junction"}}, celsius),
                 R("gpu_temperature_celsius", {{"sensor", "edge"}}, 99),
                 R("gpu_power_watts", {}, watts), R("gpu_xid_events_total", {{"xid", "79"}}, xid),
                 R("gpu_throttle_active", {{"reason", "hw_thermal_slowdown"}}, throttled),
                 R("gpu_throttle_active", {{"reason", "gpu_idle"}}, 1),
                 R("gpu_ecc_errors_total", {{"severity", "correctable"}, {"block", "umc"}}, t)})},
        {R("host_ecc_errors_total", {{"severity", "uncorrectable"}, {"controller", "mc0"}},
           host_ue)});
  };
  std::vector<std::string> fired;
  const std::vector<Sample> samples = {sample(0, 80, 300, 0, 0, 0), sample(1, 90, 500, 0, 1, 0),
                                       sample(2, 90, 500, 0, 1, 0), sample(3, 90, 500, 1, 1, 1),
                                       sample(20, 90, 500, 1, 1, 1)};
  for (const Sample& s : samples) {
    for (const Alert& alert : engine.Evaluate(s)) {
      if (!alert.resolved) fired.push_back(alert.rule);
    }
  }
  const std::vector<std::string> expected = {
      "junction_temperature",   "board_power",         "xid_error", "clock_throttling",
      "host_uncorrectable_ecc", "correctable_ecc_rate"};  // 20 corrected in 20 s
  EXPECT_EQ(fired, expected);
}

TEST(RulesEngine, AlertToJsonHasTheDocumentedFields) {
  Alert alert;
  alert.rule = "hot";
  alert.severity = Severity::kFatal;
  alert.metric = "gpu_temperature_celsius";
  alert.labels = {{"device", "0"}, {"sensor", "junction"}};
  alert.value = 91.5;
  alert.threshold = 85;
  alert.time_unix = 1700000000.25;
  alert.resolved = true;
  alert.message = "m";
  const Json json = AlertToJson(alert);
  EXPECT_EQ(json.dump(),
            R"({"kind":"alert","rule":"hot","severity":"fatal","metric":"gpu_temperature_celsius",)"
            R"("labels":{"device":"0","sensor":"junction"},"value":91.5,"threshold":85.0,)"
            R"("time":1700000000.25,"resolved":true,"message":"m"})");
  alert.severity = Severity::kWarning;
  alert.value = std::numeric_limits<double>::infinity();
  const Json warning = AlertToJson(alert);
  EXPECT_EQ(warning["severity"], "warning");
  EXPECT_TRUE(warning["value"].is_null());
  EXPECT_EQ(warning["value_nonfinite"], "inf");
  EXPECT_EQ(SeverityName(Severity::kWarning), "warning");
  EXPECT_EQ(OpName(Op::kGreaterEqual), ">=");
}

TEST(RulesEngine, LabelValuesAreEscapedInMessages) {
  RuleEngine engine = Engine("- {name: t, metric: host_temperature_celsius, op: \">\", value: 1}");
  const std::vector<Alert> alerts = engine.Evaluate(
      At(0, {}, {R("host_temperature_celsius", {{"chip", "a\"b\\c\nd"}, {"sensor", "x"}}, 2)}));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].message,
            "rule t: host_temperature_celsius{chip=\"a\\\"b\\\\c\\nd\",sensor=\"x\"} = 2 > 1");
}

TEST(RulesEngine, TrackedSeriesAreCapped) {
  RuleEngine engine = Engine("- {name: t, metric: host_temperature_celsius, op: \">\", value: 0}");
  std::vector<Reading> host;
  const std::size_t count = RuleEngine::kMaxSeries + 100;
  host.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    host.push_back(R("host_temperature_celsius", {{"sensor", std::to_string(i)}}, 1));
  }
  const Sample sample = At(0, {}, std::move(host));
  EXPECT_EQ(engine.Evaluate(sample).size(), RuleEngine::kMaxSeries);
  EXPECT_EQ(engine.tracked_series(), RuleEngine::kMaxSeries);
  EXPECT_TRUE(engine.Evaluate(sample).empty());  // the tracked ones keep their episodes
  EXPECT_EQ(engine.tracked_series(), RuleEngine::kMaxSeries);
}

TEST(RulesEngine, HandBuiltRulesAreEvaluatedSafely) {
  Rule zero_for;
  zero_for.name = "z";
  zero_for.metric = "gpu_power_watts";
  zero_for.value = 1;
  zero_for.for_samples = 0;  // counts as 1
  Rule unknown;
  unknown.name = "u";
  unknown.metric = "no_such_metric";
  RuleEngine engine({zero_for, unknown});
  EXPECT_EQ(engine.rules().size(), 2u);
  const std::vector<Alert> alerts =
      engine.Evaluate(At(0, {Device(0, {R("gpu_power_watts", {}, 5), R("no_such_metric", {}, 5)})},
                         {R("no_such_metric", {}, 5)}));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].rule, "z");
}

}  // namespace
}  // namespace parity::monitor
