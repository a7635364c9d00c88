// SPDX-License-Identifier: Apache-2.0
#include "monitor/exposition.h"

#include <gtest/gtest.h>

#include "core/text.h"
#include "monitor/alert_exec.h"
#include "monitor/exporter.h"
#include "monitor/metrics.h"

namespace parity::monitor {
namespace {

Sample TwoDevices() {
  Sample s;
  s.time_unix = 1700000000.5;
  s.sources = {{"amdgpu", true, ""}, {"nvml", false, "libnvidia-ml.so.1: not found"}};
  DeviceReadings d0{0, "amdgpu", {}, {}};
  d0.info.vendor = "AMD";
  d0.info.model = "AMD Instinct \"MI250X\"\\x";
  d0.readings = {{"gpu_temperature_celsius", {{"sensor", "junction"}}, 91.5},
                 {"gpu_temperature_celsius", {{"sensor", "junction"}}, 12.0},  // duplicate
                 {"gpu_ecc_errors_total", {{"severity", "correctable"}, {"block", "umc"}}, 3}};
  DeviceReadings d1{1, "amdgpu", {}, {{"gpu_power_watts", {}, 301.25}}};
  d1.info.uuid = "0xabc";
  s.devices = {d0, d1};
  s.host = {{"host_memory_total_bytes", {}, 68719476736.0}};
  return s;
}

TEST(Exposition, HelpTypeAndSeries) {
  ExporterState state;
  state.alerts_total = {{"junction-temperature", 2}, {"power", 0}};
  state.samples_total = 7;
  const std::string text = RenderExposition(TwoDevices(), state);
  EXPECT_NE(text.find("# TYPE parity_gpu_temperature_celsius gauge\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE parity_gpu_ecc_errors_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("# HELP parity_gpu_power_watts "), std::string::npos);
  // Labels sorted by name, values escaped (quote, backslash).
  EXPECT_NE(text.find("parity_gpu_temperature_celsius{device=\"0\",model=\"AMD Instinct "
                      "\\\"MI250X\\\"\\\\x\",sensor=\"junction\",vendor=\"AMD\"} 91.5\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("} 12\n"), std::string::npos) << "a duplicate series was written";
  EXPECT_NE(text.find("parity_gpu_ecc_errors_total{block=\"umc\",device=\"0\",model="),
            std::string::npos);
  EXPECT_NE(text.find("parity_gpu_power_watts{device=\"1\",uuid=\"0xabc\"} 301.25\n"),
            std::string::npos);
  EXPECT_NE(text.find("parity_host_memory_total_bytes 68719476736\n"), std::string::npos);
  EXPECT_NE(text.find("parity_alerts_total{rule=\"junction-temperature\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("parity_alerts_total{rule=\"power\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("parity_source_up{source=\"amdgpu\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("parity_source_up{source=\"nvml\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("parity_monitor_samples_total 7\n"), std::string::npos);
  // A metric no device reported has no HELP/TYPE block at all.
  EXPECT_EQ(text.find("parity_gpu_xid_events_total"), std::string::npos);
}

TEST(Exposition, EscapesNewlines) { EXPECT_EQ(EscapeLabelValue("a\nb\"c\\"), "a\\nb\\\"c\\\\"); }

TEST(Exposition, CatalogueCountersEndInTotal) {
  for (const MetricSpec& spec : Catalogue()) {
    EXPECT_EQ(spec.type == MetricType::kCounter, spec.name.ends_with("_total")) << spec.name;
    EXPECT_FALSE(spec.help.empty()) << spec.name;
  }
  EXPECT_NE(FindMetric("gpu_power_watts"), nullptr);
  EXPECT_EQ(FindMetric("gpu_power"), nullptr);
}

TEST(Exporter, ListenAddresses) {
  auto v4 = ParseListenAddress("127.0.0.1:9400");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 9400);
  auto v6 = ParseListenAddress("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  for (const char* bad :
       {"9400", ":9400", "host:", "host:65536", "host:-1", "a:b:c", "[::1]9400", "h:12x"}) {
    EXPECT_EQ(ParseListenAddress(bad).status().code(), StatusCode::kInvalidInput) << bad;
  }
  // Decided on the addresses a name resolves to, never on how the name reads
  // (.invalid never resolves: RFC 6761).
  for (const char* host :
       {"127.0.0.1", "::1", "localhost", "[::1]", "127.8.9.10", "::ffff:127.0.0.1"}) {
    EXPECT_TRUE(IsLoopback(host)) << host;
  }
  for (const char* host :
       {"0.0.0.0", "::", "::ffff:10.0.0.1", "127.evil.invalid", "128.0.0.1", ""}) {
    EXPECT_FALSE(IsLoopback(host)) << host;
  }
}

TEST(AlertExec, SplitsWithoutAShell) {
  auto words = SplitCommand("notify --to 'ops team' \"a \\\"b\\\"\" x\\ y $HOME");
  ASSERT_TRUE(words.ok());
  EXPECT_EQ(*words,
            (std::vector<std::string>{"notify", "--to", "ops team", "a \"b\"", "x y", "$HOME"}));
  EXPECT_EQ(SplitCommand("a 'b").status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(SplitCommand("   ").status().code(), StatusCode::kInvalidInput);
}

TEST(AlertExec, ChildGetsTheJsonAndFailuresAreReported) {
  const std::string out = ::testing::TempDir() + "/parity_alert_exec_out.json";
  std::remove(out.c_str());
  AlertRunner ok({"/bin/sh", "-c", "cat > '" + out + "'"});
  ASSERT_TRUE(ok.Run("{\"rule\":\"r\"}", 0.0).ok());
  EXPECT_TRUE(ok.Finish(10.0).empty());
  std::FILE* f = std::fopen(out.c_str(), "r");
  ASSERT_NE(f, nullptr);
  char buffer[64] = {};
  const std::size_t n = std::fread(buffer, 1, sizeof(buffer) - 1, f);
  std::fclose(f);
  EXPECT_EQ(std::string(buffer, n), "{\"rule\":\"r\"}\n");

  AlertRunner failing({"/bin/sh", "-c", "exit 4"});
  ASSERT_TRUE(failing.Run("{}", 0.0).ok());
  const auto problems = failing.Finish(10.0);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("status 4"), std::string::npos);

  AlertRunner slow({"/bin/sleep", "30"}, 0.5);
  ASSERT_TRUE(slow.Run("{}", 0.0).ok());
  const auto killed = slow.Poll(1.0);
  ASSERT_EQ(killed.size(), 1u);
  EXPECT_NE(killed[0].find("killed"), std::string::npos);

  AlertRunner missing({"/nonexistent/notify"});
  EXPECT_EQ(missing.Run("{}", 0.0).code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace parity::monitor
