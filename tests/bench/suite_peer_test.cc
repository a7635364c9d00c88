// SPDX-License-Identifier: Apache-2.0
// The peer suite on a fake node of host-memory devices with a clock that reads a fixed time:
// every ordered pair measured with peer access on and off, bytes counted as
// p2pBandwidthLatencyTest counts them, copies made in the access state their result names,
// skipped where devices have no peer access, invalid where a copy is wrong.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "bench/backend_cpu.h"
#include "bench/runner.h"
#include "bench/suite.h"

namespace parity::bench {
namespace {

// What the devices of the fake node share.
struct Node {
  int devices = 3;
  double fixed_seconds = 0.5;
  std::map<std::pair<int, int>, bool> no_access;  // pairs (device, peer) without direct access
  std::map<std::pair<int, int>, bool> access_on;  // as PeerAccess left it
  int short_copies_from = -1;                     // this device's peer copies drop a byte
  int empty_copies_from = -1;                     // this device's peer copies write nothing
  // Copies made, by (src, dst, access on at the time).
  std::map<std::tuple<int, int, bool>, long> copies;
};

class NodeDevice final : public Backend {
 public:
  NodeDevice(Node* node, int index) : node_(node), index_(index) {}

  std::string_view name() const override { return "node"; }
  Result<std::vector<DeviceInfo>> Devices() override {
    std::vector<DeviceInfo> out;
    for (int i = 0; i < node_->devices; ++i) out.push_back({i, "Node GPU", "Fake", {}});
    return out;
  }
  Status Open(int index) override {
    index_ = index;
    return Status::Ok();
  }
  Result<void*> Allocate(std::size_t bytes, MemoryKind) override {
    return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  }
  void Free(void* ptr, MemoryKind) override { std::free(ptr); }
  Status Copy(void* dst, MemoryKind, const void* src, MemoryKind, std::size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return Status::Ok();
  }
  Status Fill(void*, DType, std::size_t, double) override { return Unavailable(); }
  Status Stream(StreamOp, DType, void*, void*, void*, std::size_t, double) override {
    return Unavailable();
  }
  Result<double> Dot(DType, const void*, const void*, std::size_t) override {
    return Unavailable();
  }
  Status Gemm(DType, GemmMath, int64_t, int64_t, int64_t, const void*, const void*,
              void*) override {
    return Unavailable();
  }
  std::string GemmImplementation(DType, GemmMath) override { return ""; }
  Status PhiloxUniform(float*, std::size_t, uint64_t, uint64_t) override { return Unavailable(); }
  Status EmptyKernel() override { return Unavailable(); }
  Status Synchronize() override { return Status::Ok(); }
  Result<double> Time(const std::function<Status()>& work, Queuing) override {
    PARITY_RETURN_IF_ERROR(work());
    return node_->fixed_seconds;
  }
  Result<bool> PeerAccess(int peer, bool enable) override {
    if (peer < 0 || peer >= node_->devices || peer == index_) {
      return Status::Unavailable("node: no peer " + std::to_string(peer));
    }
    if (node_->no_access.contains({index_, peer})) return false;
    node_->access_on[{index_, peer}] = enable;
    return true;
  }
  Status CopyToPeer(void* dst, int peer, const void* src, std::size_t bytes) override {
    EXPECT_NE(peer, index_);
    ++node_->copies[{index_, peer, node_->access_on[{index_, peer}]}];
    if (index_ == node_->empty_copies_from) return Status::Ok();
    if (index_ == node_->short_copies_from && bytes > 8) bytes -= 1;
    std::memcpy(dst, src, bytes);
    return Status::Ok();
  }

 private:
  static Status Unavailable() { return Status::Unavailable("node: not for this test"); }
  Node* node_;
  int index_;
};

SuiteOptions Options(Node& node, std::size_t n = 1000) {
  SuiteOptions o;
  o.n = n;  // 4000-byte copies: batches of 128 (256 MiB / 4000 bytes, at most kMaxHeldCalls)
  o.reps = 3;
  o.open_device = [&node](int index) -> Result<std::unique_ptr<Backend>> {
    return std::unique_ptr<Backend>(new NodeDevice(&node, index));
  };
  return o;
}

const BenchResult* Find(const std::vector<BenchResult>& results, const std::string& benchmark,
                        int src, int dst, std::string_view direction, bool access) {
  for (const BenchResult& r : results) {
    if (r.benchmark == benchmark && r.params.value("src", -1) == src &&
        r.params.value("dst", -1) == dst && r.params.value("direction", "") == direction &&
        r.params.value("peer_access", !access) == access) {
      return &r;
    }
  }
  return nullptr;
}

TEST(PeerSuite, EveryPairBothAccessModesCountedAsP2pBandwidthLatencyTest) {
  Node node;
  NodeDevice first(&node, 0);
  auto results = RunPeerSuite(first, Options(node));
  ASSERT_TRUE(results.ok()) << results.status().message();
  // 6 ordered pairs x 2 access modes x (one-way, latency) + 3 unordered pairs x 2 (both ways).
  ASSERT_EQ(results->size(), 30u);
  for (int s = 0; s < 3; ++s) {
    for (int d = 0; d < 3; ++d) {
      if (s == d) continue;
      for (bool access : {true, false}) {
        SCOPED_TRACE(testing::Message() << s << "->" << d << " access " << access);
        const BenchResult* uni = Find(*results, "peer.bandwidth", s, d, "uni", access);
        ASSERT_NE(uni, nullptr);
        EXPECT_EQ(uni->outcome, Outcome::kOk) << uni->reason;
        EXPECT_EQ(uni->unit, "GB/s");
        ASSERT_EQ(uni->samples.size(), 3u);  // 3 repetitions after the warm-up
        // 128 copies of 4000 bytes in 0.5 s.
        EXPECT_DOUBLE_EQ(uni->samples[0], 4000.0 * 128 / 0.5 / 1e9);
        EXPECT_DOUBLE_EQ(uni->extra["time_us"].get<double>(), 0.5e6 / 128);
        EXPECT_EQ(uni->params["bytes"], 4000);
        EXPECT_EQ(uni->params["batch"], kMaxHeldCalls);
        EXPECT_EQ(uni->validation["bytes_checked"], 4000);
        EXPECT_EQ(uni->validation["mismatches"], 0);

        const BenchResult* lat = Find(*results, "peer.latency", s, d, "uni", access);
        ASSERT_NE(lat, nullptr);
        EXPECT_EQ(lat->unit, "us");
        EXPECT_FALSE(lat->higher_is_better);
        EXPECT_DOUBLE_EQ(lat->samples[0], 0.5 / 100 * 1e6);  // 100 copies per sample

        const BenchResult* bi = Find(*results, "peer.bandwidth", s, d, "bi", access);
        if (s > d) {
          EXPECT_EQ(bi, nullptr);  // once per unordered pair
          continue;
        }
        ASSERT_NE(bi, nullptr);
        EXPECT_EQ(bi->outcome, Outcome::kOk) << bi->reason;
        EXPECT_DOUBLE_EQ(bi->samples[0], 2 * 4000.0 * 128 / 0.5 / 1e9);  // both directions
        EXPECT_EQ(bi->validation["bytes_checked"], 8000);
      }
    }
  }
  // Copies were made in the state their results name: per ordered pair and mode, 4 samples of
  // 128 one-way copies, 4 of 100 latency copies, and 4 of 128 both-ways copies each way.
  for (int s = 0; s < 3; ++s) {
    for (int d = 0; d < 3; ++d) {
      if (s == d) continue;
      for (bool access : {true, false}) {
        EXPECT_EQ((node.copies[{s, d, access}]), 4 * 128 + 4 * 100 + 4 * 128)
            << s << "->" << d << " access " << access;
      }
      EXPECT_FALSE((node.access_on[{s, d}])) << "left on";
    }
  }
  // Keys tell every result apart (bench compare matches on them).
  std::map<std::string, int> keys;
  for (const BenchResult& r : *results) ++keys[r.Key()];
  EXPECT_EQ(keys.size(), results->size());
}

TEST(PeerSuite, PairWithoutPeerAccessIsSkippedDirectAndMeasuredStaged) {
  Node node;
  node.devices = 2;
  node.no_access[{1, 0}] = true;  // one direction is enough to lose it both ways
  NodeDevice first(&node, 0);
  auto results = RunPeerSuite(first, Options(node));
  ASSERT_TRUE(results.ok()) << results.status().message();
  int skipped = 0, ok = 0;
  for (const BenchResult& r : *results) {
    SCOPED_TRACE(r.Key());
    if (r.params["peer_access"].get<bool>()) {
      EXPECT_EQ(r.outcome, Outcome::kSkipped);
      EXPECT_NE(r.reason.find("cannot reach each other's memory directly"), std::string::npos)
          << r.reason;
      EXPECT_TRUE(r.samples.empty());
      ++skipped;
    } else {
      EXPECT_EQ(r.outcome, Outcome::kOk) << r.reason;
      ++ok;
    }
  }
  EXPECT_EQ(skipped, 5);  // 0->1 uni, latency, bi; 1->0 uni, latency
  EXPECT_EQ(ok, 5);
  EXPECT_EQ((node.copies[{0, 1, true}]), 0);
}

TEST(PeerSuite, ShortCopyFromOneDeviceInvalidatesItsResultsOnly) {
  Node node;
  node.devices = 2;
  node.short_copies_from = 1;
  NodeDevice first(&node, 0);
  auto results = RunPeerSuite(first, Options(node));
  ASSERT_TRUE(results.ok()) << results.status().message();
  for (bool access : {true, false}) {
    const BenchResult* from0 = Find(*results, "peer.bandwidth", 0, 1, "uni", access);
    const BenchResult* from1 = Find(*results, "peer.bandwidth", 1, 0, "uni", access);
    const BenchResult* both = Find(*results, "peer.bandwidth", 0, 1, "bi", access);
    ASSERT_TRUE(from0 && from1 && both);
    EXPECT_EQ(from0->outcome, Outcome::kOk) << from0->reason;
    EXPECT_EQ(from1->outcome, Outcome::kInvalid);
    EXPECT_EQ(from1->validation["mismatches"], 1);
    EXPECT_NE(from1->reason.find("1 of 4000 bytes differ from the source"), std::string::npos)
        << from1->reason;
    EXPECT_NE(from1->reason.find("first at byte 3999"), std::string::npos) << from1->reason;
    EXPECT_EQ(both->outcome, Outcome::kInvalid);  // its 1 -> 0 half is wrong
    EXPECT_EQ(both->validation["mismatches"], 1);
  }
}

TEST(PeerSuite, CopyThatWritesNothingHasEveryByteWrong) {
  Node node;
  node.devices = 2;
  node.empty_copies_from = 0;
  NodeDevice first(&node, 0);
  auto results = RunPeerSuite(first, Options(node, 1001));  // not a multiple of 8 bytes
  ASSERT_TRUE(results.ok()) << results.status().message();
  const BenchResult* uni = Find(*results, "peer.bandwidth", 0, 1, "uni", false);
  ASSERT_NE(uni, nullptr);
  EXPECT_EQ(uni->outcome, Outcome::kInvalid);
  EXPECT_EQ(uni->validation["mismatches"], 4004);  // the destination held the complement
}

TEST(PeerSuite, OneDeviceOrNoOpenerIsSkippedWithReason) {
  std::unique_ptr<Backend> cpu = NewCpuBackend();
  ASSERT_TRUE(cpu->Open(0).ok());
  Node node;
  SuiteOptions o = Options(node);
  auto results = RunPeerSuite(*cpu, o);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ(results->front().outcome, Outcome::kSkipped);
  EXPECT_NE(results->front().reason.find("the cpu backend has 1 device here"), std::string::npos)
      << results->front().reason;

  NodeDevice first(&node, 0);
  o.open_device = nullptr;
  results = RunPeerSuite(first, o);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ(results->front().outcome, Outcome::kSkipped);
  EXPECT_FALSE(results->front().reason.empty());

  // A device that can't be opened skips the suite with its reason.
  o = Options(node);
  o.open_device = [](int index) -> Result<std::unique_ptr<Backend>> {
    if (index == 2) return Status::Unavailable("device 2 is busy");
    return NewCpuBackend();
  };
  results = RunPeerSuite(first, o);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ(results->front().reason, "device 2: device 2 is busy");
}

TEST(PeerSuite, NotRunByDefaultAndDrawnAsMatrices) {
  Node node;
  node.devices = 2;
  NodeDevice first(&node, 0);
  DeviceInfo info{0, "Node GPU", "Fake", {}};
  BenchOptions options;
  options.suite = Options(node);
  // Run only when named: `parity bench` without --suite stays on its one device.
  const Suite* peer = FindSuite("peer");
  ASSERT_NE(peer, nullptr);
  EXPECT_FALSE(peer->by_default);
  for (const Suite& suite : Suites()) {
    if (suite.name != "peer") {
      EXPECT_TRUE(suite.by_default) << suite.name;
    }
  }

  options.suites = {"peer"};
  auto run = RunBenchOn(first, info, options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->ok, 10);
  const std::string text = BenchText(*run);
  EXPECT_NE(text.find("one-way bandwidth, peer access on (GB/s, 4000 B copies)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("bidirectional bandwidth, peer access off (staged)"), std::string::npos);
  EXPECT_NE(text.find("latency, peer access on (us per 8 B copy)"), std::string::npos);
  EXPECT_NE(text.find("device(row) -> device(column)"), std::string::npos);
  // 4000 bytes x 128 / 0.5 s = 0.001024 GB/s in the off-diagonal cells of the one-way matrix.
  EXPECT_NE(text.find("0.001"), std::string::npos) << text;
}

}  // namespace
}  // namespace parity::bench
