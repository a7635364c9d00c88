// SPDX-License-Identifier: Apache-2.0
// fp16 against tf32 in `parity explain`: the two keep the same 10 fraction bits and differ only
// in range, so a linear layer run on operands rounded to either is named by what tells them
// apart: operands outside fp16's normal range, autocast to float16 in the manifest, a device
// without TF32; else both ("fp16|tf32"). Dumps are written here from arrays computed in double.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "explain/dump_pair.h"
#include "explain/explain.h"
#include "explain/platform.h"
#include "explain/precision.h"
#include "testdata.h"

namespace parity {
namespace {

using ::parity::testing::Normal;
using ::parity::testing::TempDir;
using ::parity::testing::TestDump;

Array Rounded(Array a, std::optional<Precision> p) {
  if (p) {
    for (double& x : a.data) x = RoundTo(x, *p);
  }
  return a;
}

// y = x·wᵀ (+ b) in double from x and w rounded to `p` (the bias as it is, or rounded to `p`
// too when `round_bias`), stored as float32 by the dump.
Array Linear(const Array& x, const Array& w, const Array* b, std::optional<Precision> p,
             bool round_bias = false) {
  const Array xr = Rounded(x, p), wr = Rounded(w, p);
  const int64_t m = x.shape[0], k = x.shape[1], n = w.shape[0];
  Array y = Array::Filled({m, n});
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t q = 0; q < k; ++q) acc += xr.data[i * k + q] * wr.data[j * k + q];
      if (b != nullptr) acc += round_bias && p ? RoundTo(b->data[j], *p) : b->data[j];
      y.data[i * n + j] = acc;
    }
  }
  return y;
}

const Json kCpu = {{"device", "cpu"}, {"device_name", "x86_64"}};
const Json kA100 = {
    {"device", "cuda:0"}, {"device_name", "NVIDIA A100-SXM4-80GB"}, {"compute_capability", "8.0"}};
const Json kV100 = {
    {"device", "cuda:0"}, {"device_name", "Tesla V100-SXM2-16GB"}, {"compute_capability", "7.0"}};
Json Settings(bool allow_tf32, bool autocast_fp16 = false) {
  return {{"allow_tf32_matmul", allow_tf32},       {"allow_tf32_cudnn", true},
          {"float32_matmul_precision", "highest"}, {"autocast_gpu", autocast_fp16},
          {"autocast_gpu_dtype", "float16"},       {"autocast_cpu", false},
          {"autocast_cpu_dtype", "bfloat16"}};
}

// A: the linear in full precision on a CPU; B: `y_b` on `platform` with `settings`. The one
// op's explanation, and the report.
struct Explained {
  ExplainReport report;
  const OpExplanation& op() const { return report.ops.at(0); }
};

Explained ExplainLinear(const TempDir& tmp, const Array& x, const Array& w, const Array* b,
                        const Array& y_b, const Json& platform, const Json& settings) {
  std::vector<std::pair<std::string, Array>> params = {{"weight", w}};
  if (b != nullptr) params.emplace_back("bias", *b);
  TestDump a(tmp.File("a"), kCpu, Settings(false));
  a.Add("fc", "linear", {x}, params, {Linear(x, w, b, std::nullopt)});
  a.Write();
  TestDump bd(tmp.File("b"), platform, settings);
  bd.Add("fc", "linear", {x}, params, {y_b});
  bd.Write();
  ExplainOptions options;
  options.a = a.dir();
  options.b = bd.dir();
  auto report = RunExplain(options);
  EXPECT_TRUE(report.ok()) << report.status().message();
  Explained e{std::move(report).value()};
  EXPECT_EQ(e.report.ops.size(), 1u);
  return e;
}

struct Layer {
  Array x = Normal({16, 256}, 1, 1.0);
  Array w = Normal({32, 256}, 2, 1.0 / 16);
  Array b = Normal({32}, 3, 0.1);
};

bool Has(const std::string& text, const std::string& words) {
  return text.find(words) != std::string::npos;
}

TEST(ExplainTenBits, Fp16OperandsCapturedOnACpuAreFp16) {
  // The case: an output layer run on operands rounded to fp16 (the bias as is),
  // captured on the CPU whose manifest says allow_tf32_matmul = false. fp16 and tf32 replay
  // alike; a CPU has no TF32, so fp16, and no setting is blamed.
  TempDir tmp;
  const Layer l;
  const Explained e = ExplainLinear(
      tmp, l.x, l.w, &l.b, Linear(l.x, l.w, &l.b, Precision::kFloat16), kCpu, Settings(false));
  EXPECT_EQ(e.op().cause, Cause::kReducedPrecision) << e.op().reason;
  EXPECT_EQ(e.op().effective_precision, "fp16") << e.op().reason;
  EXPECT_TRUE(Has(e.op().reason, "ran in fp16")) << e.op().reason;
  EXPECT_TRUE(Has(e.op().reason, "B's device (cpu) has no TF32")) << e.op().reason;
  EXPECT_FALSE(Has(e.op().reason, "did not reach")) << e.op().reason;
  EXPECT_FALSE(Has(e.op().reason, "tf32-rounded")) << e.op().reason;
}

TEST(ExplainTenBits, WithoutEvidenceOnAnAmpereGpuBothAreNamed) {
  // compute capability 8.0 has TF32; no operand lies outside fp16's range; no autocast: the
  // evidence cannot tell, so both are named, and the allow_tf32 setting is a fact, not blamed.
  TempDir tmp;
  const Layer l;
  const Explained e = ExplainLinear(tmp, l.x, l.w, &l.b, Linear(l.x, l.w, &l.b, Precision::kTf32),
                                    kA100, Settings(false));
  const OpExplanation& op = e.op();
  EXPECT_EQ(op.cause, Cause::kReducedPrecision) << op.reason;
  EXPECT_EQ(op.effective_precision, std::string(kFp16OrTf32)) << op.reason;
  EXPECT_TRUE(Has(op.reason, "ran in fp16 or tf32: 10 fraction bits")) << op.reason;
  EXPECT_TRUE(Has(op.reason, "compute capability 8.0) has TF32")) << op.reason;
  EXPECT_TRUE(Has(op.reason, "B's manifest has allow_tf32_matmul = false")) << op.reason;
  EXPECT_FALSE(Has(op.reason, "did not reach")) << op.reason;
  // The report shows the same name in text and JSON.
  const Json doc = ExplainReportJson(e.report);
  EXPECT_EQ(doc["origins"][0]["effective_precision"], "fp16|tf32");
  EXPECT_EQ(doc["ops"][0]["effective_precision"], "fp16|tf32");
  EXPECT_TRUE(Has(ExplainReportText(e.report), "seq 0 fc (linear): reduced-precision [fp16|tf32]"))
      << ExplainReportText(e.report);
}

TEST(ExplainTenBits, AutocastToFloat16InTheManifestIsFp16) {
  TempDir tmp;
  const Layer l;
  const Explained e =
      ExplainLinear(tmp, l.x, l.w, &l.b, Linear(l.x, l.w, &l.b, Precision::kFloat16), kA100,
                    Settings(true, /*autocast_fp16=*/true));
  EXPECT_EQ(e.op().effective_precision, "fp16") << e.op().reason;
  EXPECT_TRUE(Has(e.op().reason,
                  "autocast to float16 (autocast_gpu = true, autocast_gpu_dtype = "
                  "float16)"))
      << e.op().reason;
  EXPECT_FALSE(Has(e.op().reason, "manifest allows it")) << e.op().reason;
}

TEST(ExplainTenBits, OperandsBeyondFp16sRangeAreTf32) {
  // One input column near 1e5: fp16 overflows there, tf32 keeps float32's range. B rounded to
  // tf32: the fp16 replay is infinite, so tf32, whatever the device; on a V100 (no TF32) the
  // reason says so and blames no setting.
  TempDir tmp;
  Layer l;
  for (int64_t i = 0; i < 16; ++i) l.x.data[i * 256] *= 1e5;
  const Explained e = ExplainLinear(
      tmp, l.x, l.w, nullptr, Linear(l.x, l.w, nullptr, Precision::kTf32), kV100, Settings(false));
  EXPECT_EQ(e.op().effective_precision, "tf32") << e.op().reason;
  EXPECT_TRUE(Has(e.op().reason, "outside fp16's normal range")) << e.op().reason;
  EXPECT_TRUE(Has(e.op().reason, "the fp16 replay does not reproduce the output")) << e.op().reason;
  EXPECT_TRUE(Has(e.op().reason, "B's device (cuda:0, compute capability 7.0) has no TF32"))
      << e.op().reason;
  EXPECT_FALSE(Has(e.op().reason, "did not reach")) << e.op().reason;
}

TEST(ExplainTenBits, OperandsBelowFp16sNormalRangeAreFp16) {
  // An input below 2^-14 throughout (|x| ~ 1e-6): fp16 keeps few of its bits, tf32 all of
  // float32's exponent range. B rounded to fp16 on an Ampere GPU that allows tf32: fp16, by the
  // range, not by the device.
  TempDir tmp;
  const Layer l;
  const Array tiny = Normal({16, 256}, 4, 1e-6);
  const Explained e =
      ExplainLinear(tmp, tiny, l.w, nullptr, Linear(tiny, l.w, nullptr, Precision::kFloat16), kA100,
                    Settings(true));
  EXPECT_EQ(e.op().effective_precision, "fp16") << e.op().reason;
  EXPECT_TRUE(Has(e.op().reason, "outside fp16's normal range")) << e.op().reason;
  EXPECT_TRUE(Has(e.op().reason,
                  "where fp16 and tf32 round differently: the tf32 replay does not "
                  "reproduce the output"))
      << e.op().reason;
  // The same layer rounded to tf32: tf32, by the range again.
  TempDir tmp2;
  const Explained t =
      ExplainLinear(tmp2, tiny, l.w, nullptr, Linear(tiny, l.w, nullptr, Precision::kTf32), kA100,
                    Settings(true));
  EXPECT_EQ(t.op().effective_precision, "tf32") << t.op().reason;
  EXPECT_TRUE(Has(t.op().reason, "outside fp16's normal range")) << t.op().reason;
  EXPECT_TRUE(Has(t.op().reason, "manifest allows it (allow_tf32_matmul = true)")) << t.op().reason;
}

TEST(ExplainTenBits, InferenceLeavesTheChoiceOpenWhereTheReplaysAgree) {
  // The finding itself: a tf32-rounded linear with a bias, all operands in fp16's range.
  const Layer l;
  OpCall call;
  call.op = "linear";
  call.inputs.push_back(l.x);
  call.input_dtypes.push_back(DType::kFloat32);
  call.params = {{"weight", l.w}, {"bias", l.b}};
  Tolerance t;
  t.criterion = Criterion::kAbsRel;
  t.k = 256;
  t.atol = 6.0 * 16.0 * std::ldexp(1, -24);
  t.rtol = t.atol + 2.0 * std::ldexp(1, -24);
  const Array y = Linear(l.x, l.w, &l.b, Precision::kTf32);
  const PrecisionFinding f = InferPrecision(call, {y}, t, 3e-4);
  ASSERT_TRUE(f.variant.has_value());
  EXPECT_TRUE(f.fp16_or_tf32) << f.variant->Describe() << ": " << f.ten_bits_evidence;
  for (const Variant& v : f.equally_close) EXPECT_NE(v.precision, Precision::kFloat16);
  // fp16 operands with a float32 bias are a candidate of their own, named as such.
  const Variant keep{Precision::kFloat16, Rounding::kNearestEven, true, false, true};
  EXPECT_EQ(keep.Describe(), "fp16-rounded inputs, the bias as is (ties to even)");
  auto replayed = ReplayVariant(call, keep);
  auto tf32 = ReplayVariant(call, {Precision::kTf32, Rounding::kNearestEven, true, false});
  ASSERT_TRUE(replayed.ok() && tf32.ok());
  Fp16RangeCheck range = CheckFp16Range(call);
  if (range.outside == 0) {
    EXPECT_EQ((*replayed)[0].data, (*tf32)[0].data);
  }
  EXPECT_TRUE(InFp16NormalRange(65504.0));
  EXPECT_FALSE(InFp16NormalRange(65505.0));
  EXPECT_TRUE(InFp16NormalRange(std::ldexp(1.0, -14)));
  EXPECT_FALSE(InFp16NormalRange(std::ldexp(1.0, -15)));
  EXPECT_TRUE(InFp16NormalRange(0.0));
}

TEST(ExplainTenBits, DeviceTf32FromTheManifest) {
  auto support = [](Json platform, Json settings = Json::object(), Json hip = nullptr) {
    const Json manifest = {
        {"platform", std::move(platform)},
        {"framework", {{"hip", std::move(hip)}, {"settings", std::move(settings)}}}};
    return DeviceTf32Of(manifest, "linear").support;
  };
  EXPECT_EQ(support(kCpu), Tf32Support::kAbsent);
  EXPECT_EQ(support(kCpu, {{"fp32_precision.mkldnn.matmul", "tf32"}}), Tf32Support::kPresent);
  EXPECT_EQ(support(kCpu, {{"fp32_precision.mkldnn.matmul", "none"}, {"fp32_precision", "tf32"}}),
            Tf32Support::kPresent);
  EXPECT_EQ(support(kCpu, {{"fp32_precision.mkldnn.matmul", "ieee"}, {"fp32_precision", "tf32"}}),
            Tf32Support::kAbsent);
  EXPECT_EQ(support(kV100), Tf32Support::kAbsent);
  EXPECT_EQ(support(kA100), Tf32Support::kPresent);
  EXPECT_EQ(support({{"device", "cuda:0"}, {"compute_capability", "9.0"}}), Tf32Support::kPresent);
  // ROCm reports gfx90a (MI250) as "compute capability" 9.0: its gcn_arch decides.
  EXPECT_EQ(support({{"device", "cuda:0"},
                     {"compute_capability", "9.0"},
                     {"gcn_arch", "gfx90a:sramecc+:xnack-"}}),
            Tf32Support::kAbsent);
  EXPECT_EQ(support({{"device", "cuda:0"}, {"gcn_arch", "gfx942:sramecc+:xnack-"}}),
            Tf32Support::kPresent);
  EXPECT_EQ(support({{"device", "cuda:0"},
                     {"device_name", "AMD Instinct MI250X"},
                     {"compute_capability", "9.0"}},
                    Json::object(), "5.7.31921"),
            Tf32Support::kAbsent);
  EXPECT_EQ(support({{"device", "cuda:0"}}), Tf32Support::kUnknown);
  EXPECT_EQ(support({{"device", "xpu:0"}}), Tf32Support::kUnknown);
  EXPECT_EQ(DeviceTf32Of(Json::object(), "linear").support, Tf32Support::kUnknown);

  // Autocast to float16, for the device's own type only.
  EXPECT_EQ(
      AutocastFp16({{"platform", kA100}, {"framework", {{"settings", Settings(true, true)}}}}),
      "autocast_gpu = true, autocast_gpu_dtype = float16");
  EXPECT_EQ(AutocastFp16({{"platform", kCpu}, {"framework", {{"settings", Settings(true, true)}}}}),
            "");
  EXPECT_EQ(AutocastFp16(
                {{"platform", kCpu},
                 {"framework",
                  {{"settings", {{"autocast_cpu", true}, {"autocast_cpu_dtype", "bfloat16"}}}}}}),
            "");
  const TenBitsResolution unknown = ResolveTenBits("B", Json::object(), "linear");
  EXPECT_FALSE(unknown.precision.has_value());
  EXPECT_TRUE(Has(unknown.why, "B's manifest names no device")) << unknown.why;
}

}  // namespace
}  // namespace parity
