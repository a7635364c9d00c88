// SPDX-License-Identifier: Apache-2.0
// The float64 replays of trivial elementwise aten ops (src/oracle/ops_trivial.cc) against
// values numpy computes (np.negative, 1 / x, np.minimum(np.maximum(x, lo), hi)), and their
// in-place and _foreach_ forms through the registry.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "oracle/oracle.h"

namespace parity {
namespace {

OpCall Call(const std::string& op, std::vector<Array> inputs, std::vector<std::string> args,
            Json attrs = Json::object()) {
  OpCall call;
  call.op = op;
  call.inputs = std::move(inputs);
  call.input_args = std::move(args);
  for (std::size_t i = 0; i < call.inputs.size(); ++i) call.input_dtypes.push_back(DType::kFloat32);
  call.attrs = std::move(attrs);
  return call;
}

std::vector<double> One(const OpCall& call) {
  auto out = Replay(call);
  EXPECT_TRUE(out.ok()) << out.status().message();
  if (!out.ok() || out->size() != 1) return {};
  return (*out)[0].data;
}

TEST(Trivial, NegFlipsTheSignExactly) {
  // np.negative([1.5, -0.0, 3e-39, -2.5e5]) = [-1.5, 0.0, -3e-39, 2.5e5]
  const std::vector<double> y =
      One(Call("neg", {Array{{4}, {1.5, -0.0, 3e-39, -2.5e5}}}, {"self"}));
  ASSERT_EQ(y.size(), 4u);
  EXPECT_EQ(y[0], -1.5);
  EXPECT_EQ(y[1], 0.0);
  EXPECT_FALSE(std::signbit(y[1]));
  EXPECT_EQ(y[2], -3e-39);
  EXPECT_EQ(y[3], 2.5e5);
  // NaN stays NaN, Inf changes sign; the in-place form replays as neg.
  const std::vector<double> z = One(Call("neg_", {Array{{2}, {NAN, INFINITY}}}, {"self"}));
  ASSERT_EQ(z.size(), 2u);
  EXPECT_TRUE(std::isnan(z[0]));
  EXPECT_EQ(z[1], -INFINITY);
}

TEST(Trivial, ReciprocalIsOneDivision) {
  // 1 / np.array([3.0, -0.25, 7.0, 1e-3]), as float.hex(): 0x1.5555555555555p-2, -0x1p+2,
  // 0x1.2492492492492p-3, 0x1.f4p+9.
  const std::vector<double> y =
      One(Call("reciprocal", {Array{{4}, {3.0, -0.25, 7.0, 1e-3}}}, {"self"}));
  ASSERT_EQ(y.size(), 4u);
  EXPECT_EQ(y[0], 0x1.5555555555555p-2);
  EXPECT_EQ(y[1], -0x1p+2);
  EXPECT_EQ(y[2], 0x1.2492492492492p-3);
  EXPECT_EQ(y[3], 0x1.f4p+9);
  const std::vector<double> z = One(Call("reciprocal", {Array{{2}, {0.0, -0.0}}}, {"self"}));
  ASSERT_EQ(z.size(), 2u);
  EXPECT_EQ(z[0], INFINITY);
  EXPECT_EQ(z[1], -INFINITY);
}

TEST(Trivial, ClampWithScalarBounds) {
  const Array x{{4}, {-2.0, -0.5, 0.5, 2.0}};
  EXPECT_EQ(One(Call("clamp", {x}, {"self"}, {{"min", -1.0}, {"max", 1.0}})),
            (std::vector<double>{-1.0, -0.5, 0.5, 1.0}));
  // Only max, as clip_grad_norm_ calls it (min recorded as null).
  EXPECT_EQ(One(Call("clamp", {x}, {"self"}, {{"min", nullptr}, {"max", 1.0}})),
            (std::vector<double>{-2.0, -0.5, 0.5, 1.0}));
  // min > max: every value is max, as np.clip([-2, 0.5, 3], 2, 1) = [1, 1, 1].
  EXPECT_EQ(
      One(Call("clamp", {Array{{3}, {-2.0, 0.5, 3.0}}}, {"self"}, {{"min", 2.0}, {"max", 1.0}})),
      (std::vector<double>{1.0, 1.0, 1.0}));
  EXPECT_EQ(One(Call("clamp_min", {x}, {"self"}, {{"min", 0.0}})),
            (std::vector<double>{0.0, 0.0, 0.5, 2.0}));
  EXPECT_EQ(One(Call("clamp_max_", {x}, {"self"}, {{"max", 0.0}})),
            (std::vector<double>{-2.0, -0.5, 0.0, 0.0}));
  // A non-finite bound arrives as null with a marker: max = inf clamps nothing above.
  EXPECT_EQ(One(Call("clamp", {x}, {"self"},
                     {{"min", -1.0}, {"max", nullptr}, {"max_nonfinite", "inf"}})),
            (std::vector<double>{-1.0, -0.5, 0.5, 2.0}));
  // NaN in the input stays NaN.
  const std::vector<double> n = One(Call("clamp", {Array{{1}, {NAN}}}, {"self"}, {{"min", 0.0}}));
  ASSERT_EQ(n.size(), 1u);
  EXPECT_TRUE(std::isnan(n[0]));
}

TEST(Trivial, ClampWithTensorBoundsBroadcasts) {
  // np.minimum(np.maximum(a, lo), hi) with a (2, 3), lo (3,), hi (2, 1):
  // [[-1, 0, 0.4], [1, 0.25, -0.6]].
  const Array a{{2, 3}, {-2.0, -0.5, 0.5, 2.0, 0.25, -0.75}};
  const Array lo{{3}, {-1.0, 0.0, -0.6}};
  const Array hi{{2, 1}, {0.4, 1.0}};
  auto out = Replay(Call("clamp", {a, lo, hi}, {"self", "min", "max"}));
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*out)[0].data, (std::vector<double>{-1.0, 0.0, 0.4, 1.0, 0.25, -0.6}));
  EXPECT_EQ(One(Call("clamp_min", {a, lo}, {"self", "min"})),
            (std::vector<double>{-1.0, 0.0, 0.5, 2.0, 0.25, -0.6}));
}

TEST(Trivial, ForeachFormsReplayEachListPosition) {
  const Array x{{2}, {-3.0, 0.5}}, y{{1}, {4.0}};
  auto neg = Replay(Call("_foreach_neg", {x, y}, {"self", "self"}));
  ASSERT_TRUE(neg.ok()) << neg.status().message();
  ASSERT_EQ(neg->size(), 2u);
  EXPECT_EQ((*neg)[0].data, (std::vector<double>{3.0, -0.5}));
  EXPECT_EQ((*neg)[1].data, (std::vector<double>{-4.0}));
  // _foreach_clamp_min_(self, scalar): the scalar reaches clamp_min as its bound.
  auto clamped = Replay(Call("_foreach_clamp_min_", {x, y}, {"self", "self"}, {{"scalar", 1.0}}));
  ASSERT_TRUE(clamped.ok()) << clamped.status().message();
  ASSERT_EQ(clamped->size(), 2u);
  EXPECT_EQ((*clamped)[0].data, (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ((*clamped)[1].data, (std::vector<double>{4.0}));
  auto recip = Replay(Call("_foreach_reciprocal_", {x}, {"self"}));
  ASSERT_TRUE(recip.ok()) << recip.status().message();
  EXPECT_EQ((*recip)[0].data, (std::vector<double>{-1.0 / 3.0, 2.0}));
}

TEST(Trivial, UnfitCallsAreNotReplayableNeverACrash) {
  for (const OpCall& call :
       {Call("clamp", {Array{{2}, {1.0, 2.0}}}, {"self"}),  // neither bound
        Call("clamp", {Array{{2}, {1.0, 2.0}}}, {"self"}, {{"min", nullptr}, {"max", nullptr}}),
        Call("clamp", {Array{{2}, {1.0, 2.0}}}, {"self"},
             {{"min", nullptr}, {"min_nonfinite", "nan"}}),  // a NaN bound
        Call("clamp", {Array{{2}, {1.0, 2.0}}, Array{{3}, {0.0, 0.0, 0.0}}}, {"self", "min"}),
        Call("clamp", {Array{{1}, {1.0}}}, {"self"}, {{"max", "one"}}), Call("neg", {}, {}),
        Call("reciprocal", {}, {})}) {
    auto out = Replay(call);
    ASSERT_FALSE(out.ok()) << call.op;
    EXPECT_NE(out.status().message().find("not replayable"), std::string::npos)
        << out.status().message();
  }
  EXPECT_TRUE(Replayable("neg"));
  EXPECT_TRUE(Replayable("neg_"));
  EXPECT_TRUE(Replayable("_foreach_neg"));
  EXPECT_TRUE(Replayable("reciprocal"));
  EXPECT_TRUE(Replayable("clamp"));
  EXPECT_TRUE(Replayable("clamp_min"));
  EXPECT_TRUE(Replayable("clamp_max"));
}

}  // namespace
}  // namespace parity
