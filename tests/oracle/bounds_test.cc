// SPDX-License-Identifier: Apache-2.0
// The float64 oracle's bounds fit each output (issue 47): reduction lengths per output of the
// multi-output ops, losses by reduction, TF32 only where a platform has it, per-element summand
// scales, dropout not judged; and a planted wrong float is caught at its index. Reference
// values are the ops' definitions, computed here in plain loops.
#include <gtest/gtest.h>

#include <cmath>

#include "compare/context.h"
#include "compare/tolerance.h"
#include "oracle/oracle.h"
#include "oracle/replay.h"

namespace parity {
namespace {

using json = Json;

TensorContext Output(const std::string& op, std::vector<std::vector<int64_t>> inputs,
                     Json attrs = Json::object(), std::size_t index = 0) {
  TensorContext c;
  c.op = op;
  c.role = "output";
  c.input_shapes = std::move(inputs);
  c.attrs = std::move(attrs);
  c.index = index;
  return c;
}

TEST(Bounds, ConvolutionBackwardHasOneReductionLengthPerOutput) {
  // A ResNet stem: grad_output (2, 64, 112, 112), input (2, 3, 224, 224), weight (64, 3, 7, 7).
  const std::vector<std::vector<int64_t>> stem = {
      {2, 64, 112, 112}, {2, 3, 224, 224}, {64, 3, 7, 7}};
  EXPECT_EQ(ReductionLength(Output("convolution_backward", stem, {{"groups", 1}}, 0)), 64 * 49);
  EXPECT_EQ(ReductionLength(Output("convolution_backward", stem, {{"groups", 1}}, 1)),
            2 * 112 * 112);
  EXPECT_EQ(ReductionLength(Output("convolution_backward", stem, {{"groups", 1}}, 2)),
            2 * 112 * 112);
  // Depthwise 3×3 (groups = channels): grad_input sums 9 products.
  const std::vector<std::vector<int64_t>> depthwise = {
      {8, 96, 28, 28}, {8, 96, 28, 28}, {96, 1, 3, 3}};
  EXPECT_EQ(ReductionLength(Output("convolution_backward", depthwise, {{"groups", 96}}, 0)), 9);
  // output_mask leaves grad_input out: output 0 is grad_weight.
  EXPECT_EQ(ReductionLength(
                Output("convolution_backward", stem,
                       {{"groups", 1}, {"output_mask", json::array({false, true, true})}}, 0)),
            2 * 112 * 112);
  // Judged as a convolution: TF32 where the manifest allows it on cuDNN.
  TensorContext c = Output("convolution_backward", stem, {{"groups", 1}});
  c.dtype = DType::kFloat32;
  c.tf32_conv = true;
  EXPECT_EQ(ResolveTolerance({}, {}, "g", c).compute, "tf32");
}

TEST(Bounds, NormsBackwardReduceDxOverARowAndTheParametersOverTheRows) {
  // 65,536 rows of 768: dx sums over a row (two statistics), dweight and dbias over the rows.
  const Json attrs = {{"normalized_shape", json::array({768})}};
  const std::vector<std::vector<int64_t>> in = {{65536, 768}, {65536, 768}, {65536, 1}};
  EXPECT_EQ(ReductionLength(Output("native_layer_norm_backward", in, attrs, 0)), 2 * 10 + 8);
  EXPECT_EQ(ReductionLength(Output("native_layer_norm_backward", in, attrs, 1)), 65536);
  EXPECT_EQ(ReductionLength(Output("native_layer_norm_backward", in, attrs, 2)), 65536);
  // Batch norm backward (grad_output, input, ...): per channel over N·H·W = 2,048.
  const std::vector<std::vector<int64_t>> bn = {{8, 16, 16, 16}, {8, 16, 16, 16}};
  EXPECT_EQ(ReductionLength(Output("native_batch_norm_backward", bn, Json::object(), 0)),
            2 * 11 + 8);
  EXPECT_EQ(ReductionLength(Output("native_batch_norm_backward", bn, Json::object(), 1)),
            2 * 11 + 8);  // a tree over the channel's 2,048, as the forward's statistics
  // The forward's saved mean is a tree over n; its y and invstd the chain around it.
  EXPECT_EQ(ReductionLength(Output("native_batch_norm", {{8, 16, 16, 16}}, Json::object(), 1)),
            2 * 11 + 8);
  EXPECT_EQ(ReductionLength(Output("native_batch_norm", {{8, 16, 16, 16}}, Json::object(), 2)),
            2 * 11 + 8);
}

TEST(Bounds, LossesWithReductionNoneAreElementwise) {
  for (const char* op : {"mse_loss", "binary_cross_entropy_with_logits"}) {
    TensorContext c = Output(op, {{1024, 1024}, {1024, 1024}}, {{"reduction", 0}});
    c.dtype = DType::kFloat32;
    const Tolerance none = ResolveTolerance({}, {}, "l", c);
    EXPECT_EQ(none.k, 1) << op;
    EXPECT_DOUBLE_EQ(none.lambda, 16.0) << op;
    c.attrs = {{"reduction", "mean"}};
    EXPECT_EQ(ResolveTolerance({}, {}, "l", c).k, 1024 * 1024) << op;
  }
  // nll_loss: output 0 gathers with 'none'; total_weight (output 1) sums the weights.
  TensorContext nll = Output("nll_loss_forward", {{64, 10}, {64}}, {{"reduction", 0}}, 0);
  nll.dtype = DType::kFloat32;
  EXPECT_EQ(ResolveTolerance({}, {}, "l", nll).k, 1);
  nll.index = 1;
  EXPECT_EQ(ResolveTolerance({}, {}, "l", nll).k, 64);
}

TEST(Bounds, Tf32CountsOnlyOnAPlatformThatHasIt) {
  auto manifest = [](Json platform) {
    return Json{
        {"platform", std::move(platform)},
        {"framework", {{"settings", {{"allow_tf32_cudnn", true}, {"allow_tf32_matmul", true}}}}}};
  };
  EXPECT_FALSE(Tf32Capable(manifest({{"device", "cpu"}})));
  EXPECT_FALSE(Tf32Capable(manifest({{"device", "cuda:0"}, {"compute_capability", "7.0"}})));
  EXPECT_TRUE(Tf32Capable(manifest({{"device", "cuda:0"}, {"compute_capability", "8.0"}})));
  EXPECT_FALSE(Tf32Capable(manifest({{"device", "cuda:0"}, {"gcn_arch", "gfx90a:sramecc+"}})));
  EXPECT_TRUE(Tf32Capable(manifest({{"device", "cuda:0"}, {"gcn_arch", "gfx942:sramecc+"}})));
  EXPECT_TRUE(Tf32Capable(manifest({{"device", "cuda:1"}})));  // a GPU of unknown model
  // A CPU capture with torch's default cudnn.allow_tf32 = true: convolutions at float32.
  DumpRecord record;
  record.op = "convolution";
  record.inputs.resize(2);
  record.inputs[0].shape = {1, 3, 8, 8};
  record.inputs[1].shape = {4, 3, 3, 3};
  const Json cpu = manifest({{"device", "cpu"}});
  const Json a100 = manifest({{"device", "cuda:0"}, {"compute_capability", "8.0"}});
  TensorContext c = RecordContext(record, "output", DType::kFloat32, {1, 4, 6, 6}, {&cpu});
  EXPECT_FALSE(c.tf32_conv);
  EXPECT_EQ(ResolveTolerance({}, {}, "y", c).compute, "float32");
  c = RecordContext(record, "output", DType::kFloat32, {1, 4, 6, 6}, {&a100});
  EXPECT_TRUE(c.tf32_conv);
}

// A float32 linear's recorded output: the float64 product rounded, one element changed.
struct Linear {
  OpCall call;
  std::vector<Array> oracle;
};

Linear OutlierLinear() {
  // Column 0 of x is 1000 times the others (an outlier feature): the rows' summands differ
  // by orders of magnitude from element to element.
  Linear l;
  l.call.op = "mm";
  const int64_t m = 16, k = 64, n = 8;
  Array x = Array::Filled({m, k}), w = Array::Filled({k, n});
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      x.data[static_cast<std::size_t>(i * k + j)] =
          std::sin(1.0 + static_cast<double>(i * k + j)) * (j == 0 && i < 2 ? 1000.0 : 1.0);
    }
  }
  for (std::size_t i = 0; i < w.data.size(); ++i)
    w.data[i] = std::cos(0.5 + static_cast<double>(i));
  l.call.inputs = {x, w};
  l.call.input_args = {"self", "mat2"};
  auto y = Replay(l.call);
  EXPECT_TRUE(y.ok());
  l.oracle = *y;
  return l;
}

TEST(Bounds, ElementScalesAreEachOutputsOwnSummands) {
  const Linear l = OutlierLinear();
  auto scales = ElementScales(l.call);
  ASSERT_TRUE(scales.has_value());
  ASSERT_EQ(scales->size(), 1u);
  // Element (0, 0): sqrt(Σ_k x_0k² w_k0²), computed directly.
  double sq = 0.0;
  for (int64_t j = 0; j < 64; ++j) {
    const double p = l.call.inputs[0].data[static_cast<std::size_t>(j)] *
                     l.call.inputs[1].data[static_cast<std::size_t>(j * 8)];
    sq += p * p;
  }
  EXPECT_NEAR((*scales)[0].data[0], std::sqrt(sq), 1e-12 * std::sqrt(sq));
  // Row 0 carries the outlier: its scale is far above row 5's.
  EXPECT_GT((*scales)[0].data[0], 100.0 * (*scales)[0].data[5 * 8]);
  // addmm squares alpha and beta with its operands: β²·self² + α²·(mat1² · mat2²).
  OpCall addmm;
  addmm.op = "addmm";
  addmm.input_args = {"self", "mat1", "mat2"};
  addmm.inputs = {Array{{1}, {3.0}}, Array{{1, 2}, {1.0, -2.0}}, Array{{2, 1}, {4.0, 5.0}}};
  addmm.attrs = {{"alpha", 2.0}, {"beta", -1.0}};
  auto s = ElementScales(addmm);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ((*s)[0].data[0], std::sqrt(9.0 + 4.0 * (16.0 + 100.0)));
  OpCall relu;
  relu.op = "relu";
  EXPECT_FALSE(ElementScales(relu).has_value());
}

TEST(Oracle, WrongFloatsAreCaughtAtTheirIndex) {
  const Linear l = OutlierLinear();
  Tolerance t;
  t.policy = "auto";
  t.k = 64;
  t.lambda = 6.0;
  t.rtol = 6.0 * 8.0 * 0x1p-24 + 2 * 0x1p-24;
  t.atol_per_scale = 6.0 * 8.0 * 0x1p-24;
  auto scales = ElementScales(l.call);
  ASSERT_TRUE(scales.has_value());
  t.element_scale = std::make_shared<const std::vector<double>>((*scales)[0].data);
  const Tensor exact = FromArray(l.oracle[0], DType::kFloat32, "y");
  auto ok = JudgeOutput(exact, l.oracle[0], t);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->within);
  // One element of a small-scale row off by a bfloat16-sized error (2^-8): caught there,
  // though the outlier rows' bound is a thousand times looser.
  for (const std::size_t at : {std::size_t{5 * 8 + 3}, std::size_t{127}}) {
    Array wrong = l.oracle[0];
    wrong.data[at] *= 1.0 + 0x1p-8;
    auto judged = JudgeOutput(FromArray(wrong, DType::kFloat32, "y"), l.oracle[0], t);
    ASSERT_TRUE(judged.ok());
    EXPECT_FALSE(judged->within) << at;
    EXPECT_EQ(judged->metrics.violations, 1) << at;
    ASSERT_FALSE(judged->metrics.worst.empty());
    EXPECT_EQ(judged->metrics.worst[0].index, static_cast<int64_t>(at));
  }
  // One float32 ulp off stays within.
  Array ulp = l.oracle[0];
  ulp.data[43] = std::nextafter(static_cast<float>(ulp.data[43]), 1e30f);
  auto near = JudgeOutput(FromArray(ulp, DType::kFloat32, "y"), l.oracle[0], t);
  ASSERT_TRUE(near.ok());
  EXPECT_TRUE(near->within);
}

TEST(Bounds, EmbeddingBagSumsItsLargestBagNotEveryIndex) {
  // 40 indices in three bags of 20, 1 and 19 (offsets 0, 20, 21).
  LoadedRecord l;
  l.call.op = "_embedding_bag";
  l.call.input_args = {"weight", "indices", "offsets"};
  Array weight = Array::Filled({10, 4}), indices = Array::Filled({40}), offsets{{3}, {0, 20, 21}};
  for (std::size_t i = 0; i < weight.data.size(); ++i)
    weight.data[i] = 0.1 * static_cast<double>(i);
  for (std::size_t i = 0; i < 40; ++i) indices.data[i] = static_cast<double>(i % 10);
  l.call.inputs = {weight, indices, offsets};
  l.call.attrs = {{"mode", 0}};
  // Its bookkeeping outputs (offset2bag, bag_size, max_indices) are taken as recorded.
  l.call.recorded_outputs = {Array::Filled({3, 4}), Array::Filled({40}), Array::Filled({3}),
                             Array::Filled({3})};
  auto y = Replay(l.call);
  ASSERT_TRUE(y.ok());
  l.inputs = {FromArray(weight, DType::kFloat32, "w"), FromArray(indices, DType::kInt64, "i"),
              FromArray(offsets, DType::kInt64, "o")};
  for (const Array& out : *y) l.outputs.push_back(FromArray(out, DType::kFloat32, "y"));
  DumpRecord record;
  record.op = "_embedding_bag";
  record.name = "bag";
  record.attrs = l.call.attrs;
  for (const Tensor& t : l.inputs) {
    DumpTensorRef ref;
    ref.shape = t.meta().shape;
    record.inputs.push_back(ref);
  }
  auto t = OutputTolerance(record, l, 0, {});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->k, 20);                          // the shapes alone say 40
  l.call.attrs = record.attrs = {{"mode", 2}};  // max: a selection, no sum
  t = OutputTolerance(record, l, 0, {});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->k, 1);
}

TEST(Bounds, AReducedLossIsScaledByItsTermsNotItsValue) {
  // mean((x - t)²) whose terms cancel no more than squares can: the scale is ‖terms‖₂ / N;
  // with negative weights (bce) the terms cancel and the output is far below them.
  LoadedRecord l;
  l.call.op = "mse_loss";
  l.call.input_args = {"self", "target"};
  Array x{{4}, {1.0, 2.0, 3.0, 4.0}}, target{{4}, {0.0, 0.0, 0.0, 0.0}};
  l.call.inputs = {x, target};
  l.call.attrs = {{"reduction", 1}};
  auto y = Replay(l.call);
  ASSERT_TRUE(y.ok());
  l.inputs = {FromArray(x, DType::kFloat32, "x"), FromArray(target, DType::kFloat32, "t")};
  l.outputs = {FromArray((*y)[0], DType::kFloat32, "y")};
  DumpRecord record;
  record.op = "mse_loss";
  record.attrs = l.call.attrs;
  record.inputs.resize(2);
  record.inputs[0].shape = record.inputs[1].shape = {4};
  auto t = OutputTolerance(record, l, 0, {});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->scale_source, "summands");
  EXPECT_DOUBLE_EQ(*t->scale, std::sqrt(1.0 + 16.0 + 81.0 + 256.0) / 4.0);
}

TEST(Bounds, DropoutIsNotJudgedButItsDropRateIs) {
  OpCall call;
  call.op = "native_dropout";
  call.input_args = {"input"};
  call.attrs = {{"p", 0.25}, {"train", true}};
  const int64_t n = 4000;
  Array x = Array::Filled({n}, 1.0), y = Array::Filled({n}), mask = Array::Filled({n});
  for (int64_t i = 0; i < n; ++i) {
    const bool keep = i % 4 != 0;  // a drop rate of exactly p
    mask.data[static_cast<std::size_t>(i)] = keep;
    y.data[static_cast<std::size_t>(i)] = keep ? 1.0 / 0.75 : 0.0;
  }
  call.inputs = {x};
  call.recorded_outputs = {y, mask};
  auto check = CheckRandomOp(call);
  ASSERT_TRUE(check.has_value());
  EXPECT_TRUE(check->holds);
  EXPECT_NE(check->text.find("not judged (random op"), std::string::npos);
  // Half the elements dropped where p = 0.25: the distribution check fails.
  for (int64_t i = 0; i < n; i += 2) call.recorded_outputs[1].data[static_cast<std::size_t>(i)] = 0;
  check = CheckRandomOp(call);
  ASSERT_TRUE(check.has_value());
  EXPECT_FALSE(check->holds);
  call.op = "mm";
  EXPECT_FALSE(CheckRandomOp(call).has_value());
}

}  // namespace
}  // namespace parity
