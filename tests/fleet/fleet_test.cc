// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "fleet/fleet_collect.h"
#include "fleet/fleet_report.h"
#include "fleet/pack.h"
#include "testdata.h"

namespace parity::fleet {
namespace {

namespace fs = std::filesystem;
using parity::testing::TempDir;

void WriteFile(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// One pack entry built by hand, as the format in pack.h describes it.
std::string Entry(const std::string& path, const std::string& bytes, std::uint64_t size) {
  std::string out;
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((path.size() >> (8 * i)) & 0xff));
  out += path;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((size >> (8 * i)) & 0xff));
  out += bytes;
  return out;
}

TEST(Pack, RoundTripsNestedFilesWithBinaryBytes) {
  TempDir from, to;
  const std::string binary("\0\1\2\xff zero", 9);
  WriteFile(from.File("manifest.json"), "{\"a\":1}");
  WriteFile(from.File("stages/bench/result.json"), binary);
  WriteFile(from.File("empty"), "");
  fs::create_symlink("/etc/passwd", from.File("link"));
  auto packed = PackDirectory(from.path(), 1 << 20);
  ASSERT_TRUE(packed.ok()) << packed.status().message();
  ASSERT_TRUE(UnpackDirectory(*packed, to.File("out"), "rank 1's bundle").ok());
  EXPECT_EQ(ReadFile(to.File("out/manifest.json")), "{\"a\":1}");
  EXPECT_EQ(ReadFile(to.File("out/stages/bench/result.json")), binary);
  EXPECT_TRUE(fs::is_regular_file(to.File("out/empty")));
  EXPECT_EQ(fs::file_size(to.File("out/empty")), 0u);
  // Symbolic links are left out, not followed.
  EXPECT_FALSE(fs::exists(to.File("out/link")));
}

TEST(Pack, RefusesMoreThanTheLimit) {
  TempDir from;
  WriteFile(from.File("big"), std::string(1000, 'x'));
  auto packed = PackDirectory(from.path(), 500);
  ASSERT_FALSE(packed.ok());
  EXPECT_NE(packed.status().message().find("more than 500 bytes"), std::string::npos)
      << packed.status().message();
}

TEST(Pack, UnpackRefusesUnsafePathsAndWritesNothingOutside) {
  TempDir to;
  for (const std::string path : {"../escape", "a/../../escape", "/tmp/abs", "a//b", "./a", ""}) {
    SCOPED_TRACE(path);
    const Status s = UnpackDirectory(Entry(path, "x", 1), to.File("out"), "rank 2's bundle");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("rank 2's bundle: entry 1"), std::string::npos) << s.message();
  }
  EXPECT_FALSE(fs::exists(to.File("escape")));
  EXPECT_TRUE(fs::is_empty(to.File("out")));
}

TEST(Pack, UnpackRefusesTruncatedAndOversizedEntries) {
  TempDir to;
  // Declares 100 bytes, holds 3.
  Status s = UnpackDirectory(Entry("f", "abc", 100), to.File("a"), "rank 1's bundle");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rank 1's bundle: f: truncated"), std::string::npos) << s.message();
  // A size near 2^64 must not be trusted as an allocation.
  s = UnpackDirectory(Entry("f", "abc", ~std::uint64_t{0}), to.File("b"), "r");
  EXPECT_FALSE(s.ok());
  // A path length past the end, and a header cut short.
  std::string cut = Entry("file", "x", 1);
  s = UnpackDirectory(std::string_view(cut).substr(0, 6), to.File("c"), "r");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bad path length"), std::string::npos) << s.message();
  s = UnpackDirectory(std::string_view(cut).substr(0, 2), to.File("d"), "r");
  EXPECT_FALSE(s.ok());
  // The second entry is bad: the first one is written, the error names entry 2.
  s = UnpackDirectory(Entry("ok", "1", 1) + Entry("..", "", 0), to.File("e"), "r");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("entry 2"), std::string::npos) << s.message();
}

TEST(MemberNames, HostsRanksAndDevices) {
  EXPECT_EQ(MemberNames({"a", "b", "c"}, false), (std::vector<std::string>{"a", "b", "c"}));
  // Ranks sharing a host are told apart by rank.
  EXPECT_EQ(MemberNames({"a", "a", "b", "a"}, false),
            (std::vector<std::string>{"a.r0", "a.r1", "b", "a.r3"}));
  // --per-device: the device index counts within the host.
  EXPECT_EQ(MemberNames({"a", "a", "b", "a"}, true),
            (std::vector<std::string>{"a-dev0", "a-dev1", "b-dev0", "a-dev2"}));
}

// The visible-device variables of the test's own process, set for one test and then restored.
class DeviceOfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* var : kVars) {
      const char* v = std::getenv(var);
      saved_.emplace_back(v != nullptr ? std::optional<std::string>(v) : std::nullopt);
      ::unsetenv(var);
    }
  }
  void TearDown() override {
    for (std::size_t i = 0; i < std::size(kVars); ++i) {
      if (saved_[i]) {
        ::setenv(kVars[i], saved_[i]->c_str(), 1);
      } else {
        ::unsetenv(kVars[i]);
      }
    }
  }
  static constexpr const char* kVars[] = {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
                                          "ROCR_VISIBLE_DEVICES", "SLURM_GPUS_PER_TASK"};
  std::vector<std::optional<std::string>> saved_;
};

TEST_F(DeviceOfTest, LocalRankWithoutAList) {
  EXPECT_EQ(DeviceOf(0, 4, "a").value(), "0");
  EXPECT_EQ(DeviceOf(3, 4, "a").value(), "3");
}

TEST_F(DeviceOfTest, TheLocalRankthOfTheListedDevices) {
  ::setenv("CUDA_VISIBLE_DEVICES", "4,5,6,7", 1);
  EXPECT_EQ(DeviceOf(0, 2, "a").value(), "4");
  EXPECT_EQ(DeviceOf(1, 2, "a").value(), "5");
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  ::setenv("ROCR_VISIBLE_DEVICES", "GPU-aa,GPU-bb", 1);
  EXPECT_EQ(DeviceOf(1, 2, "a").value(), "GPU-bb");
}

TEST_F(DeviceOfTest, MoreRanksThanListedDevicesIsBadInput) {
  ::setenv("CUDA_VISIBLE_DEVICES", "0,1", 1);
  const auto d = DeviceOf(0, 4, "nodeA");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(d.status().message().find("nodeA runs 4 ranks but CUDA_VISIBLE_DEVICES=0,1 names 2 "
                                      "devices"),
            std::string::npos)
      << d.status().message();
}

TEST_F(DeviceOfTest, SrunBoundDevicesAreKept) {
  ::setenv("SLURM_GPUS_PER_TASK", "1", 1);
  ::setenv("CUDA_VISIBLE_DEVICES", "0", 1);
  EXPECT_EQ(DeviceOf(3, 4, "a").value(), "");
}

class FleetManifest : public ::testing::Test {
 protected:
  Status Load(const std::string& text) {
    WriteFile(dir_.File("fleet.json"), text);
    auto j = LoadFleetManifest(dir_.path());
    return j.ok() ? Status::Ok() : j.status();
  }
  TempDir dir_;
};

TEST_F(FleetManifest, AcceptsAWellFormedOne) {
  const Status s = Load(R"({"format":"parity-fleet","version":1,"members":[
      {"name":"a","status":"ok","bundle":"nodes/a"},
      {"name":"b","status":"failed","bundle":null,"reason":"killed by signal 9"}]})");
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(IsFleetDir(dir_.path()));
  TempDir empty;
  EXPECT_FALSE(IsFleetDir(empty.path()));
}

TEST_F(FleetManifest, NamesTheFileAndTheKeyOfEachProblem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "not a JSON object"},
      {"[]", "not a JSON object"},
      {R"({"format":"parity-bench","version":1,"members":[]})", "'format' is not parity-fleet"},
      {R"({"format":"parity-fleet","version":2,"members":[]})", "'version' is not 1"},
      {R"({"format":"parity-fleet","version":1})", "no 'members' list"},
      {R"({"format":"parity-fleet","version":1,"members":[3]})", "members[0]: not an object"},
      {R"({"format":"parity-fleet","version":1,"members":[{"status":"ok"}]})",
       "members[0]: 'name' is not a non-empty string"},
      {R"({"format":"parity-fleet","version":1,"members":[{"name":"a","status":"fine"}]})",
       "'status' is 'fine', not ok or failed"},
      {R"({"format":"parity-fleet","version":1,"members":[{"name":"../x","status":"ok"}]})",
       "'name' '../x' is not a directory name"},
      {R"({"format":"parity-fleet","version":1,"members":[{"name":"a","status":"ok","bundle":7}]})",
       "'bundle' is not a string"},
  };
  for (const auto& [text, problem] : cases) {
    SCOPED_TRACE(text);
    const Status s = Load(text);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
    EXPECT_NE(s.message().find("fleet.json"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(problem), std::string::npos) << s.message();
  }
}

TEST_F(FleetManifest, ReportRefusesABundlePathOutsideTheFleet) {
  WriteFile(dir_.File("fleet.json"), R"({"format":"parity-fleet","version":1,"members":[
      {"name":"a","status":"ok","bundle":"../elsewhere"}]})");
  auto report = MakeFleetReport(dir_.path(), {});
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("is not a path inside the fleet directory"),
            std::string::npos)
      << report.status().message();
}

TEST_F(FleetManifest, ReportListsFailedMembersAndNeedsThreeForOutliers) {
  WriteFile(dir_.File("fleet.json"), R"({"format":"parity-fleet","version":1,"members":[
      {"name":"a","rank":0,"status":"failed","reason":"killed by signal 9"}]})");
  auto report = MakeFleetReport(dir_.path(), {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->failed.size(), 1u);
  EXPECT_EQ(report->failed[0]["reason"], "killed by signal 9");
  EXPECT_TRUE(report->members.empty());
  ASSERT_EQ(report->notes.size(), 1u);
  EXPECT_NE(report->notes[0].find("at least 3"), std::string::npos);
}

// Median absolute deviation as R's mad(x, constant = 1) computes it.
TEST(FleetReport, MedianAbsoluteDeviation) {
  EXPECT_DOUBLE_EQ(MedianAbsoluteDeviation({1, 2, 3, 4, 100}), 1.0);
  EXPECT_DOUBLE_EQ(MedianAbsoluteDeviation({1, 1, 2, 2, 4, 6, 9}), 1.0);
  EXPECT_DOUBLE_EQ(MedianAbsoluteDeviation({10, 20}), 5.0);
  EXPECT_DOUBLE_EQ(MedianAbsoluteDeviation({5, 5, 5}), 0.0);
  EXPECT_DOUBLE_EQ(MedianAbsoluteDeviation({}), 0.0);
}

TEST(FleetReport, ExplainsSpeedKeepsSettingsAndDropsIdentity) {
  EXPECT_TRUE(ExplainsSpeed("gpus[0].driver_version"));
  EXPECT_TRUE(ExplainsSpeed("gpus[0].pcie.link_width"));
  EXPECT_TRUE(ExplainsSpeed("host.cpu.governor"));
  EXPECT_TRUE(ExplainsSpeed("environment.OMP_NUM_THREADS"));
  EXPECT_FALSE(ExplainsSpeed("host.hostname"));
  EXPECT_FALSE(ExplainsSpeed("gpus[0].uuid"));
  EXPECT_FALSE(ExplainsSpeed("collected_at"));
}

}  // namespace
}  // namespace parity::fleet
