// SPDX-License-Identifier: Apache-2.0
// sum and mean over dims (keepdim) in float64.
#include <fmt/format.h>

#include <set>

#include "oracle/kernels.h"

namespace parity::oracle {
namespace {

Outputs Reduce(const OpCall& call, bool mean) {
  if (call.inputs.empty()) return Unfit(fmt::format("{} needs an input", call.op));
  const Array& x = call.inputs[0];
  const std::size_t rank = x.shape.size();
  std::set<std::size_t> dims;
  const auto it = call.attrs.find("dim");
  if (it == call.attrs.end() || it->is_null() || (it->is_array() && it->empty())) {
    for (std::size_t d = 0; d < rank; ++d) dims.insert(d);
  } else {
    const std::vector<Json> list =
        it->is_array() ? it->get<std::vector<Json>>() : std::vector<Json>{*it};
    for (const Json& d : list) {
      if (!d.is_number_integer()) return Unfit("dim holds a non-integer");
      PARITY_ASSIGN_OR_RETURN(std::size_t dim, NormalizeDim(d.get<int64_t>(), rank));
      dims.insert(dim);
    }
  }
  PARITY_ASSIGN_OR_RETURN(bool keepdim, AttrBool(call, "keepdim", false));
  std::vector<int64_t> kept_shape(rank);  // the output with every dim kept (reduced ones as 1)
  std::vector<int64_t> shape;
  int64_t count = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    const bool reduced = dims.count(d) > 0;
    kept_shape[d] = reduced ? 1 : x.shape[d];
    if (reduced) count *= x.shape[d];
    if (!reduced || keepdim) shape.push_back(kept_shape[d]);
  }
  Array y = Array::Filled(shape);
  const std::vector<int64_t> out_strides = Strides(kept_shape);
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t o = 0;
    for (std::size_t d = 0; d < rank; ++d) o += (dims.count(d) ? 0 : index[d]) * out_strides[d];
    y.data[static_cast<std::size_t>(o)] += x.data[static_cast<std::size_t>(i)];
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < x.shape[d]) break;
      index[d] = 0;
    }
  }
  if (mean) {
    for (double& v : y.data) v /= static_cast<double>(count);
  }
  return std::vector<Array>{std::move(y)};
}

}  // namespace

Outputs Sum(const OpCall& call) { return Reduce(call, false); }
Outputs Mean(const OpCall& call) { return Reduce(call, true); }

}  // namespace parity::oracle
