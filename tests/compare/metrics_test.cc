// SPDX-License-Identifier: Apache-2.0
// Metrics against numpy's float64 computations (tests/gen/gen_compare.py), and the auto
// tolerance against real summation orders and tf32.
#include "compare/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>

#include "compare/compare.h"
#include "core/parallel.h"
#include "core/simd.h"
#include "io/tensor_file.h"
#include "testdata.h"

namespace parity {
namespace {

using nlohmann::json;

const json& CompareExpected() {
  static const json expected = [] {
    std::ifstream in(testing::TestDataPath("compare/expected.json"));
    return json::parse(in);
  }();
  return expected;
}

Tensor LoadFirst(const std::string& rel) {
  auto file = OpenTensorFile(testing::TestDataPath(rel));
  EXPECT_TRUE(file.ok()) << file.status().message();
  auto t = (*file)->Load(0);
  EXPECT_TRUE(t.ok());
  return *t;
}

void ExpectClose(double got, const json& want, const std::string& what) {
  if (want.is_string()) {
    const std::string s = want.get<std::string>();
    if (s == "nan") {
      EXPECT_TRUE(std::isnan(got)) << what << " = " << got;
    } else {
      EXPECT_TRUE(std::isinf(got) && (got > 0) == (s == "inf")) << what << " = " << got;
    }
    return;
  }
  const double w = want.get<double>();
  EXPECT_NEAR(got, w, 1e-12 * std::max(1.0, std::fabs(w))) << what;
}

// Runs `body` once per instruction-set level this CPU supports, restoring the default after.
template <typename Body>
void ForEachIsa(Body&& body) {
  const Isa widest = ActiveIsa();
  for (Isa isa : {Isa::kBaseline, Isa::kV3, Isa::kV4}) {
    if (!IsaSupported(isa)) continue;
    SetIsa(isa);
    SCOPED_TRACE(IsaName(isa));
    body();
  }
  SetIsa(widest);
}

TEST(Metrics, MatchNumpyForEveryFloatDTypeAtEveryIsaLevel) {
  ForEachIsa([] {
    const json& cases = CompareExpected()["metrics"];
    ASSERT_EQ(cases.size(), 6u);
    for (const json& c : cases) {
      const std::string dtype = c["dtype"].get<std::string>();
      SCOPED_TRACE(dtype);
      const Tensor a = LoadFirst("compare/metrics/" + c["a"].get<std::string>());
      const Tensor b = LoadFirst("compare/metrics/" + c["b"].get<std::string>());
      ASSERT_EQ(Name(a.dtype()), dtype);
      MetricsOptions options;
      options.tiny = SmallestNormal(a.dtype());
      auto m = ComputePairMetrics(a, b, options);
      ASSERT_TRUE(m.ok()) << m.status().message();
      const json& e = c["metrics"];
      EXPECT_EQ(m->count, e["count"].get<int64_t>());
      EXPECT_EQ(m->nan_mismatch, e["nan_mismatch"].get<int64_t>());
      EXPECT_EQ(m->inf_mismatch, e["inf_mismatch"].get<int64_t>());
      ExpectClose(static_cast<double>(m->identical) / m->count, e["identical"], "identical");
      ExpectClose(m->max_abs, e["max_abs"], "max_abs");
      ExpectClose(m->mean_abs(), e["mean_abs"], "mean_abs");
      ExpectClose(m->rmse(), e["rmse"], "rmse");
      ExpectClose(m->max_rel, e["max_rel"], "max_rel");
      ExpectClose(m->mean_rel(), e["mean_rel"], "mean_rel");
      ExpectClose(m->max_abs_small, e["max_abs_small"], "max_abs_small");
      ExpectClose(m->cosine(), e["cosine"], "cosine");
      ExpectClose(m->max_ulp, e["max_ulp"], "max_ulp");
      ExpectClose(m->mean_ulp(), e["mean_ulp"], "mean_ulp");
      for (std::size_t i = 0; i < m->ulp_histogram.size(); ++i) {
        EXPECT_EQ(m->ulp_histogram[i], e["ulp_histogram"][i].get<int64_t>()) << "ulp bin " << i;
      }
      const double rel = static_cast<double>(m->rel_count);
      ExpectClose(m->rel_le_1e3 / rel, e["frac_rel_le_1e-3"], "frac_rel_le_1e-3");
      ExpectClose(m->rel_le_5e3 / rel, e["frac_rel_le_5e-3"], "frac_rel_le_5e-3");
    }
  });
}

TEST(Metrics, UlpsAcrossZeroUseTheOrderedMapping) {
  // +0 and -0 are one point; the smallest subnormals of either sign are 2 apart.
  auto make = [](std::vector<float> v) {
    auto meta = MakeTensorMeta("", "t", DType::kFloat32, {static_cast<int64_t>(v.size())});
    std::vector<std::byte> bytes(v.size() * 4);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return Tensor::Owned(*meta, std::move(bytes));
  };
  const float s = std::numeric_limits<float>::denorm_min();
  auto m = ComputePairMetrics(make({0.0f, s, 1.0f, -1.0f}), make({-0.0f, -s, 1.0f, 1.0f}), {});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->ulp_histogram[0], 2);  // +0/-0 and 1/1
  EXPECT_EQ(m->ulp_histogram[2], 1);  // s/-s: 2 ulps
  // 1.0 and -1.0: 2 * 0x3f800000 steps
  EXPECT_EQ(m->max_ulp, 2.0 * 0x3f800000);
  EXPECT_EQ(m->identical, 1);
}

TEST(Metrics, IntegersAndBoolCompareExactly) {
  auto make = [](DType dtype, const auto& values) {
    auto meta = MakeTensorMeta("", "t", dtype, {static_cast<int64_t>(values.size())});
    std::vector<std::byte> bytes(meta->nbytes);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return Tensor::Owned(*meta, std::move(bytes));
  };
  const std::vector<int64_t> a = {INT64_MIN, -1, 0, INT64_MAX};
  const std::vector<int64_t> b = {INT64_MIN, -1, 1, INT64_MAX};
  auto m = ComputePairMetrics(make(DType::kInt64, a), make(DType::kInt64, b), {});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->identical, 3);
  EXPECT_EQ(m->max_ulp, 1.0);
  EXPECT_EQ(m->max_abs, 1.0);
  Tolerance exact;
  exact.criterion = Criterion::kUlps;
  MetricsOptions options;
  options.tolerance = &exact;
  auto judged = ComputePairMetrics(make(DType::kInt64, a), make(DType::kInt64, b), options);
  ASSERT_TRUE(judged.ok());
  EXPECT_EQ(judged->violations, 1);
  const std::vector<uint8_t> x = {0, 1, 1}, y = {0, 1, 0};
  auto bools = ComputePairMetrics(make(DType::kBool, x), make(DType::kBool, y), {});
  ASSERT_TRUE(bools.ok());
  EXPECT_EQ(bools->identical, 2);
  EXPECT_EQ(bools->max_abs, 1.0);
}

TEST(Metrics, WorstElementsAndThreadIndependence) {
  std::vector<float> a(200'000), b(200'000);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = std::sin(static_cast<float>(i));
    b[i] = a[i] + 1e-6f * std::cos(static_cast<float>(i) * 3.0f);
  }
  b[123'456] += 0.5f;
  b[7] = std::numeric_limits<float>::quiet_NaN();
  b[150'000] -= 0.25f;
  auto make = [](const std::vector<float>& v) {
    auto meta = MakeTensorMeta("", "t", DType::kFloat32, {static_cast<int64_t>(v.size())});
    std::vector<std::byte> bytes(v.size() * 4);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return Tensor::Owned(*meta, std::move(bytes));
  };
  MetricsOptions options;
  options.worst = 3;
  SetThreadCount(1);
  auto one = ComputePairMetrics(make(a), make(b), options);
  SetThreadCount(3);
  auto three = ComputePairMetrics(make(a), make(b), options);
  SetThreadCount(0);
  ASSERT_TRUE(one.ok() && three.ok());
  ASSERT_EQ(one->worst.size(), 3u);
  EXPECT_EQ(one->worst[0].index, 7);  // the NaN mismatch ranks first
  EXPECT_TRUE(std::isinf(one->worst[0].error));
  EXPECT_EQ(one->worst[1].index, 123'456);
  EXPECT_EQ(one->worst[2].index, 150'000);
  EXPECT_EQ(std::bit_cast<uint64_t>(one->sum_sq), std::bit_cast<uint64_t>(three->sum_sq));
  EXPECT_EQ(std::bit_cast<uint64_t>(one->dot), std::bit_cast<uint64_t>(three->dot));
  EXPECT_EQ(three->worst[1].index, 123'456);
}

CompareReport Compare(const std::string& a, const std::string& b, std::optional<int64_t> k,
                      std::optional<std::string> compute = std::nullopt,
                      std::optional<std::string> golden = std::nullopt) {
  CompareOptions options;
  options.a = testing::TestDataPath(a);
  options.b = testing::TestDataPath(b);
  if (golden) options.golden = testing::TestDataPath(*golden);
  options.tolerance.k = k;
  options.tolerance.compute = compute;
  auto report = RunCompare(options);
  EXPECT_TRUE(report.ok()) << report.status().message();
  return report.ok() ? *report : CompareReport{};
}

TEST(AutoTolerance, DifferentSummationOrdersPassAndTf32FailsForEveryK) {
  for (const json& c : CompareExpected()["matmul"]) {
    const int64_t k = c["k"].get<int64_t>();
    SCOPED_TRACE("K = " + std::to_string(k));
    const std::string p = "compare/matmul/k" + std::to_string(k) + "_";
    EXPECT_EQ(Compare(p + "naive.npy", p + "pairwise.npy", k).failed, 0);
    EXPECT_EQ(Compare(p + "exact.npy", p + "naive.npy", k).failed, 0);
    EXPECT_EQ(Compare(p + "exact.npy", p + "pairwise.npy", k).failed, 0);
    // tf32 inputs: error ~ sqrt(K)·u_tf32·rms(terms), the float32 bound λ·K·u_fp32·rms(terms);
    // tf32 stays beyond it up to K ≈ (2^13/λ)² ≈ 1.9M.
    const CompareReport tf32 = Compare(p + "exact.npy", p + "tf32.npy", k);
    EXPECT_EQ(tf32.failed, 1);
    // Declared as tf32 compute, it is within the bound.
    EXPECT_EQ(Compare(p + "exact.npy", p + "tf32.npy", k, "tf32").failed, 0);
  }
}

TEST(AutoTolerance, PlainFilesWithoutKFallBackToTorchAndSaySo) {
  const CompareReport r =
      Compare("compare/matmul/k256_exact.npy", "compare/matmul/k256_naive.npy", std::nullopt);
  ASSERT_EQ(r.tensors.size(), 1u);
  EXPECT_EQ(r.tensors[0].tolerance->policy, "torch");
  EXPECT_NE(r.tensors[0].tolerance->reason.find("no reduction length known"), std::string::npos);
}

TEST(Golden, CandidateNoWorseThanTwiceTheBaseline) {
  // Against the correctly rounded product: pairwise summation is no worse than 2x the
  // sequential loop; tf32 is far worse.
  const std::string p = "compare/matmul/k4096_";
  const CompareReport good =
      Compare(p + "naive.npy", p + "pairwise.npy", 4096, std::nullopt, p + "exact.npy");
  ASSERT_EQ(good.tensors.size(), 1u);
  ASSERT_TRUE(good.tensors[0].golden.has_value());
  EXPECT_TRUE(good.tensors[0].pass) << good.tensors[0].reason;
  const CompareReport bad =
      Compare(p + "naive.npy", p + "tf32.npy", 4096, std::nullopt, p + "exact.npy");
  EXPECT_FALSE(bad.tensors[0].pass);
  EXPECT_GT(bad.tensors[0].golden->err_b.rmse, 2 * bad.tensors[0].golden->err_a.rmse);
}

}  // namespace
}  // namespace parity
