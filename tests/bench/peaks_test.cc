// SPDX-License-Identifier: Apache-2.0
// The datasheet peaks table: ParsePeaks on good and malformed YAML, FindPeaks on the device names
// CUDA and HIP report, and the built-in table (data/peaks.yaml compiled in).
#include "bench/peaks.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testdata.h"

namespace parity::bench {
namespace {

using ::parity::testing::SourcePath;

constexpr char kGood[] = R"(
devices:
  - name: Test GPU
    vendor: Acme
    match: ["test gpu", "tgpu-\\d+"]
    peaks:
      memory_bandwidth_gbs: {value: 1555, source: "https://example.com/a.pdf", note: "HBM2"}
      fp32_gflops:
        value: 19.5e3
        source: "http://example.com/b"
  - name: Other GPU
    vendor: Acme
    match: ["other"]
    peaks:
      fp64_gflops: {value: 0.5, source: "https://example.com/c"}
)";

// A one-device table whose peaks block is `peaks` (indented under "peaks:").
std::string OneDevice(const std::string& peaks) {
  return "devices:\n"
         "  - name: H100 SXM\n"
         "    vendor: NVIDIA\n"
         "    match: [\"h100\"]\n"
         "    peaks:\n" +
         peaks;
}

// ParsePeaks must fail with kInvalidInput, a message that starts with the origin and contains
// every one of `parts`.
void ExpectInvalid(const std::string& yaml, const std::vector<std::string>& parts) {
  Result<std::vector<DevicePeaks>> result = ParsePeaks(yaml, "inline.yaml");
  ASSERT_FALSE(result.ok()) << yaml;
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidInput);
  const std::string& message = result.status().message();
  EXPECT_EQ(message.rfind("inline.yaml: ", 0), 0u) << message;
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  }
}

TEST(ParsePeaks, ReadsAGoodTable) {
  Result<std::vector<DevicePeaks>> result = ParsePeaks(kGood, "inline.yaml");
  ASSERT_TRUE(result.ok()) << result.status().message();
  const std::vector<DevicePeaks>& table = *result;
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table[0].name, "Test GPU");
  EXPECT_EQ(table[0].vendor, "Acme");
  EXPECT_EQ(table[0].match, (std::vector<std::string>{"test gpu", "tgpu-\\d+"}));
  ASSERT_EQ(table[0].peaks.size(), 2u);
  const PeakValue& bandwidth = table[0].peaks.at("memory_bandwidth_gbs");
  EXPECT_EQ(bandwidth.value, 1555);
  EXPECT_EQ(bandwidth.source, "https://example.com/a.pdf");
  EXPECT_EQ(bandwidth.note, "HBM2");
  EXPECT_EQ(table[0].peaks.at("fp32_gflops").value, 19500);
  EXPECT_EQ(table[0].peaks.at("fp32_gflops").note, "");
  EXPECT_EQ(table[1].peaks.at("fp64_gflops").value, 0.5);
}

TEST(ParsePeaks, MissingSource) {
  ExpectInvalid(OneDevice("      fp32_gflops: {value: 67000}\n"),
                {"line 6", "device 1 (H100 SXM): peak 'fp32_gflops': has no 'source'"});
  ExpectInvalid(OneDevice("      fp32_gflops: {value: 67000, source: \"\"}\n"),
                {"peak 'fp32_gflops': 'source' is empty"});
}

TEST(ParsePeaks, SourceMustBeAUrl) {
  ExpectInvalid(OneDevice("      fp32_gflops: {value: 1, source: \"the datasheet\"}\n"),
                {"peak 'fp32_gflops': 'source' is 'the datasheet', not a URL"});
}

TEST(ParsePeaks, NegativeZeroAndNonFiniteValues) {
  ExpectInvalid(OneDevice("      fp32_gflops: {value: -67000, source: \"https://x\"}\n"),
                {"peak 'fp32_gflops': 'value' is '-67000', not a positive finite number"});
  ExpectInvalid(OneDevice("      fp32_gflops: {value: 0, source: \"https://x\"}\n"),
                {"'value' is '0', not a positive finite number"});
  ExpectInvalid(OneDevice("      fp32_gflops: {value: inf, source: \"https://x\"}\n"),
                {"'value' is 'inf', not finite"});
  ExpectInvalid(OneDevice("      fp32_gflops: {value: .nan, source: \"https://x\"}\n"),
                {"'value' is '.nan', not finite"});
  ExpectInvalid(OneDevice("      fp32_gflops: {value: 67 TFLOPS, source: \"https://x\"}\n"),
                {"'value' is '67 TFLOPS', not a number"});
  ExpectInvalid(OneDevice("      fp32_gflops: {source: \"https://x\"}\n"),
                {"peak 'fp32_gflops': has no 'value'"});
}

TEST(ParsePeaks, UnknownMetricAndKeys) {
  ExpectInvalid(OneDevice("      fp8_tensor_gflops: {value: 1, source: \"https://x\"}\n"),
                {"device 1 (H100 SXM): unknown metric 'fp8_tensor_gflops'", "fp16_tensor_gflops"});
  ExpectInvalid(OneDevice("      fp32_gflops: {value: 1, source: \"https://x\", url: \"y\"}\n"),
                {"unknown key 'url'"});
  ExpectInvalid("devices:\n  - name: A\n    vendor: B\n    match: [a]\n    peak: {}\n",
                {"device 1: unknown key 'peak'"});
  ExpectInvalid("version: 1\ndevices: []\n", {"the top level: unknown key 'version'"});
}

TEST(ParsePeaks, RepeatedMetric) {
  ExpectInvalid(OneDevice("      fp32_gflops: {value: 1, source: \"https://x\"}\n"
                          "      fp32_gflops: {value: 2, source: \"https://x\"}\n"),
                {"line 7", "device 1 (H100 SXM): 'fp32_gflops' is given twice"});
}

TEST(ParsePeaks, DuplicateName) {
  const std::string device =
      "  - name: Same\n"
      "    vendor: V\n"
      "    match: [\"PATTERN\"]\n"
      "    peaks: {fp32_gflops: {value: 1, source: \"https://x\"}}\n";
  std::string yaml = "devices:\n" + device + device;
  ExpectInvalid(yaml, {"line 6", "device 2 (Same): the name is already used by device 1"});
  // Names compare ignoring case.
  yaml.replace(yaml.rfind("Same"), 4, "SAME");
  ExpectInvalid(yaml, {"device 2 (SAME): the name is already used by device 1"});
  // So do patterns, across devices.
  yaml.replace(yaml.rfind("SAME"), 4, "Another");
  ExpectInvalid(yaml, {"device 2 (Another): match pattern 'PATTERN' is already a pattern of "
                       "device 1"});
}

TEST(ParsePeaks, NotAMap) {
  ExpectInvalid("- name: A\n- name: B\n", {"the top level is not a map"});
  ExpectInvalid("just a string\n", {"the top level is not a map"});
  ExpectInvalid("devices:\n  - [1, 2]\n", {"line 2", "device 1 is a list, not a map"});
  ExpectInvalid("devices: {a: 1}\n", {"'devices' is a map, not a list"});
  ExpectInvalid("devices: []\n", {"'devices' is an empty list"});
  ExpectInvalid(OneDevice("      fp32_gflops: 67000\n"),
                {"peak 'fp32_gflops': is '67000', not a map"});
  ExpectInvalid("devices:\n  - name: A\n    vendor: B\n    match: [a]\n    peaks: [1]\n",
                {"device 1 (A): 'peaks' is a list, not a map"});
}

TEST(ParsePeaks, MissingFields) {
  ExpectInvalid("devices:\n  - vendor: B\n    match: [a]\n    peaks: {}\n",
                {"device 1: has no 'name'"});
  ExpectInvalid("devices:\n  - name: A\n    match: [a]\n    peaks: {}\n",
                {"device 1 (A): has no 'vendor'"});
  ExpectInvalid("devices:\n  - name: A\n    vendor: B\n    peaks: {}\n",
                {"device 1 (A): has no 'match'"});
  ExpectInvalid("devices:\n  - name: A\n    vendor: B\n    match: []\n    peaks: {}\n",
                {"device 1 (A): 'match' is an empty list"});
  ExpectInvalid("devices:\n  - name: A\n    vendor: B\n    match: [a]\n",
                {"device 1 (A): has no 'peaks'"});
  ExpectInvalid("devices:\n  - name: A\n    vendor: B\n    match: [a]\n    peaks: {}\n",
                {"device 1 (A): 'peaks' is empty"});
  ExpectInvalid("", {"empty"});
}

TEST(ParsePeaks, BadPattern) {
  ExpectInvalid(
      "devices:\n  - name: A\n    vendor: B\n    match: [\"a100(\"]\n    peaks: {}\n",
      {"line 4", "device 1 (A): match pattern 'a100(' is not a valid regular expression"});
}

TEST(ParsePeaks, GarbageText) {
  EXPECT_NO_THROW({
    ExpectInvalid("devices: [\n  {name: \"unterminated\n", {"not valid YAML"});
    ExpectInvalid("{{{{ :: ]]]", {"not valid YAML"});
    ExpectInvalid(std::string("\0\x01\xff binary", 10), {"inline.yaml: "});
  });
}

TEST(FindPeaks, LongestMatchingPatternWins) {
  std::vector<DevicePeaks> table(3);
  table[0].name = "generic";
  table[0].match = {"a100"};
  table[1].name = "sxm";
  table[1].match = {"a100-sxm4"};
  table[2].name = "tie";
  table[2].match = {"a100-pcie"};
  EXPECT_EQ(FindPeaks(table, "NVIDIA A100-SXM4-80GB"), &table[1]);
  EXPECT_EQ(FindPeaks(table, "NVIDIA A100 80GB PCIe"), &table[0]);
  // Equal lengths: the earlier entry.
  table[2].match = {"a100-sxm4"};
  EXPECT_EQ(FindPeaks(table, "NVIDIA A100-SXM4-80GB"), &table[1]);
  EXPECT_EQ(FindPeaks(table, "NVIDIA H100 PCIe"), nullptr);
  EXPECT_EQ(FindPeaks({}, "NVIDIA A100-SXM4-80GB"), nullptr);
}

TEST(FindPeaks, InvalidPatternMatchesNothing) {
  std::vector<DevicePeaks> table(2);
  table[0].name = "broken";
  table[0].match = {"a100-sxm4-80gb(", "[z-a]"};
  table[1].name = "ok";
  table[1].match = {"a100"};
  const DevicePeaks* found = nullptr;
  EXPECT_NO_THROW(found = FindPeaks(table, "NVIDIA A100-SXM4-80GB"));
  EXPECT_EQ(found, &table[1]);
}

TEST(FindPeaks, RuntimeDeviceNames) {
  const std::vector<DevicePeaks>& table = BuiltinPeaks();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB"},
      {"NVIDIA A100-SXM4-40GB", "NVIDIA A100 SXM4 40GB"},
      {"NVIDIA A100 80GB PCIe", "NVIDIA A100 PCIe 80GB"},
      {"NVIDIA A100-PCIE-40GB", "NVIDIA A100 PCIe 40GB"},
      {"NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5"},
      {"NVIDIA H100 PCIe", "NVIDIA H100 PCIe"},
      {"NVIDIA H200", "NVIDIA H200 SXM"},
      {"NVIDIA H200 NVL", "NVIDIA H200 NVL"},
      {"AMD Instinct MI250X", "AMD Instinct MI250X (per GCD)"},
      {"AMD Instinct MI250", "AMD Instinct MI250 (per GCD)"},
      {"AMD Instinct MI210", "AMD Instinct MI210"},
      {"AMD Instinct MI300X", "AMD Instinct MI300X"},
      // Case does not matter.
      {"nvidia a100-sxm4-80gb", "NVIDIA A100 SXM4 80GB"},
      {"AMD INSTINCT MI250X", "AMD Instinct MI250X (per GCD)"},
  };
  for (const auto& [runtime_name, entry] : cases) {
    const DevicePeaks* found = FindPeaks(table, runtime_name);
    ASSERT_NE(found, nullptr) << runtime_name;
    EXPECT_EQ(found->name, entry) << runtime_name;
  }
  for (const char* other :
       {"AMD EPYC 9654", "NVIDIA GeForce RTX 4090", "NVIDIA GH200 480GB", "NVIDIA H100 NVL",
        "AMD Instinct MI300A", "AMD Instinct MI325X", "NVIDIA A100", ""}) {
    const DevicePeaks* found = FindPeaks(table, other);
    EXPECT_EQ(found, nullptr) << other << " matched " << found->name;
  }
}

TEST(BuiltinPeaks, ParsesAndHasBandwidthEverywhere) {
  const std::vector<DevicePeaks>& table = BuiltinPeaks();
  ASSERT_FALSE(table.empty());
  EXPECT_EQ(&table, &BuiltinPeaks());  // parsed once
  for (const DevicePeaks& device : table) {
    EXPECT_EQ(device.peaks.count("memory_bandwidth_gbs"), 1u) << device.name;
    for (const auto& [metric, peak] : device.peaks) {
      EXPECT_EQ(peak.source.rfind("https://", 0), 0u) << device.name << " " << metric;
    }
  }
  // MI250X is listed per GCD: half the package's 47.9 TFLOPS FP64 vector.
  const DevicePeaks* mi250x = FindPeaks(table, "AMD Instinct MI250X");
  ASSERT_NE(mi250x, nullptr);
  EXPECT_EQ(mi250x->peaks.at("fp64_gflops").value, 47900 / 2);
}

// The compiled-in text is data/peaks.yaml as it is in the source tree (a stale build would not
// be): both parse to the same table.
TEST(BuiltinPeaks, MatchesTheSourceFile) {
  const std::string path = SourcePath("data/peaks.yaml");
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot open " << path << " (set PARITY_SOURCE_DIR)";
  std::stringstream text;
  text << in.rdbuf();
  Result<std::vector<DevicePeaks>> from_file = ParsePeaks(text.str(), path);
  ASSERT_TRUE(from_file.ok()) << from_file.status().message();
  const std::vector<DevicePeaks>& builtin = BuiltinPeaks();
  ASSERT_EQ(from_file->size(), builtin.size());
  for (size_t i = 0; i < builtin.size(); ++i) {
    const DevicePeaks& a = (*from_file)[i];
    const DevicePeaks& b = builtin[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.vendor, b.vendor);
    EXPECT_EQ(a.match, b.match);
    ASSERT_EQ(a.peaks.size(), b.peaks.size()) << a.name;
    for (const auto& [metric, peak] : a.peaks) {
      ASSERT_EQ(b.peaks.count(metric), 1u) << a.name << " " << metric;
      EXPECT_EQ(peak.value, b.peaks.at(metric).value) << a.name << " " << metric;
      EXPECT_EQ(peak.source, b.peaks.at(metric).source) << a.name << " " << metric;
      EXPECT_EQ(peak.note, b.peaks.at(metric).note) << a.name << " " << metric;
    }
  }
}

}  // namespace
}  // namespace parity::bench
