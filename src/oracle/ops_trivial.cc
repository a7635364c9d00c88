// SPDX-License-Identifier: Apache-2.0
// Trivial elementwise aten ops in float64: neg, reciprocal, clamp, clamp_min and clamp_max
// (their in-place and _foreach_ forms through the registry). neg and the clamps are exact: a
// sign flipped, a value selected; reciprocal rounds once.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "oracle/kernels.h"

namespace parity::oracle {
namespace {

// One bound of a clamp: a tensor (clamp.Tensor's `min`/`max`, or a _foreach_ list's `other`),
// a scalar attr, or none.
struct Bound {
  const Array* tensor = nullptr;
  std::optional<double> scalar;
  bool present() const { return tensor != nullptr || scalar.has_value(); }
};

// The input named `arg`, only where the call names its inputs (a bound is never positional).
const Array* NamedInput(const OpCall& call, std::string_view arg) {
  return call.input_args.empty() ? nullptr : Arg(call, arg, 0);
}

// The scalar attr `name` when the call gives it: a number, or null with a non-finite marker.
Result<std::optional<double>> ScalarAttr(const OpCall& call, const std::string& name) {
  const auto it = call.attrs.find(name);
  if (it == call.attrs.end()) return std::optional<double>();
  if (it->is_null() && !call.attrs.contains(name + "_nonfinite")) return std::optional<double>();
  PARITY_ASSIGN_OR_RETURN(double v, AttrNumber(call, name.c_str(), 0.0));
  return std::optional<double>(v);
}

// Bound `name` ("min" or "max"), also under `alias` (what _foreach_clamp_min/_max pass it as).
Result<Bound> ReadBound(const OpCall& call, const std::string& name, const char* alias) {
  Bound b;
  b.tensor = NamedInput(call, name);
  if (b.tensor == nullptr && alias != nullptr) b.tensor = NamedInput(call, alias);
  if (b.tensor != nullptr) return b;
  PARITY_ASSIGN_OR_RETURN(b.scalar, ScalarAttr(call, name));
  if (!b.scalar && alias != nullptr) {
    PARITY_ASSIGN_OR_RETURN(b.scalar, ScalarAttr(call, alias));
  }
  return b;
}

bool HasNan(const Bound& b) {
  if (b.scalar) return std::isnan(*b.scalar);
  if (b.tensor == nullptr) return false;
  return std::any_of(b.tensor->data.begin(), b.tensor->data.end(),
                     [](double v) { return std::isnan(v); });
}

// y = max(y, b) (lower) or min(y, b) (upper), NaN in y kept, a tensor bound broadcast.
Result<Array> ApplyBound(const Array& y, const Bound& b, bool lower) {
  auto one = [lower](double v, double bound) {
    if (std::isnan(v)) return v;
    return lower ? std::max(v, bound) : std::min(v, bound);
  };
  if (b.tensor != nullptr) return Broadcast(y, *b.tensor, one);
  Array out = y;
  if (b.scalar) {
    for (double& v : out.data) v = one(v, *b.scalar);
  }
  return out;
}

}  // namespace

Outputs Neg(const OpCall& call) {
  return MapSelf(call, [](double x) { return -x; });
}

Outputs Reciprocal(const OpCall& call) {
  return MapSelf(call, [](double x) { return 1.0 / x; });
}

// clamp(self, min=None, max=None) = min(max(self, min), max) (max wins where min > max);
// clamp_min(self, min) and clamp_max(self, max); their .Tensor forms broadcast the bound.
Outputs Clamp(const OpCall& call) {
  const Array* x = Arg(call, "self", 0);
  if (x == nullptr) return Unfit(fmt::format("{} needs self", call.op));
  const std::string base = call.op.ends_with('_') ? call.op.substr(0, call.op.size() - 1) : call.op;
  const bool only_min = base == "clamp_min", only_max = base == "clamp_max";
  Bound lo, hi;
  if (!only_max) {
    PARITY_ASSIGN_OR_RETURN(lo, ReadBound(call, "min", only_min ? "other" : nullptr));
  }
  if (!only_min) {
    PARITY_ASSIGN_OR_RETURN(hi, ReadBound(call, "max", only_max ? "other" : nullptr));
  }
  if (!lo.present() && !hi.present()) {
    return Unfit(fmt::format("{} has neither min nor max", call.op));
  }
  // A NaN bound: torch's vectorised and scalar kernels treat it differently.
  if (HasNan(lo) || HasNan(hi)) return Unfit(fmt::format("{} with a NaN bound", call.op));
  PARITY_ASSIGN_OR_RETURN(Array y, ApplyBound(*x, lo, true));
  PARITY_ASSIGN_OR_RETURN(y, ApplyBound(y, hi, false));
  return std::vector<Array>{std::move(y)};
}

}  // namespace parity::oracle
