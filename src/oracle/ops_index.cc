// SPDX-License-Identifier: Apache-2.0
// Ops that select and move values: embedding (and aten's embedding_renorm_, _embedding_bag),
// cat, index_select, gather, advanced indexing (index.Tensor, index_put) and cumsum, in
// float64.
#include <fmt/format.h>

#include <cmath>
#include <set>

#include "io/tensor.h"
#include "oracle/kernels.h"

namespace parity::oracle {
namespace {

// An index value checked against `size` (negative values wrap when `wrap`).
Result<int64_t> Index(double value, int64_t size, bool wrap = false) {
  if (value != std::floor(value)) return Unfit(fmt::format("index {} is not an integer", value));
  if (wrap && value < 0) value += static_cast<double>(size);
  if (!(value >= 0 && value < static_cast<double>(size))) {
    return Unfit(fmt::format("index {} out of range for size {}", value, size));
  }
  return static_cast<int64_t>(value);
}

// (outer, size of dim, inner) of `shape` around `dim`.
struct Split {
  int64_t outer = 1, size = 1, inner = 1;
};

Split SplitAt(const std::vector<int64_t>& shape, std::size_t dim) {
  Split s;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i < dim) s.outer *= shape[i];
    if (i == dim) s.size = shape[i];
    if (i > dim) s.inner *= shape[i];
  }
  return s;
}

// The rows of a 2-d `weight` picked by `indices`: shape indices.shape + [dim].
Result<Array> Rows(const Array& weight, const Array& indices) {
  if (weight.shape.size() != 2) return Unfit("embedding needs a 2-d weight");
  const int64_t rows = weight.shape[0], dim = weight.shape[1];
  std::vector<int64_t> shape = indices.shape;
  shape.push_back(dim);
  Array y = Array::Filled(shape);
  for (std::size_t i = 0; i < indices.data.size(); ++i) {
    PARITY_ASSIGN_OR_RETURN(int64_t row, Index(indices.data[i], rows));
    std::copy_n(weight.data.begin() + row * dim, dim,
                y.data.begin() + static_cast<int64_t>(i) * dim);
  }
  return y;
}

// Advanced indexing of `self` by integer tensors at consecutive dims (aten's `indices` list,
// its None entries left out of the record): the index tensors broadcast to one shape B, the
// result's shape self[:first] + B + self[last + 1:]. Each element's flat offset into self.
struct Advanced {
  std::vector<int64_t> shape;    // the indexed view's
  std::vector<int64_t> offsets;  // into self, per element of that view
};

Result<Advanced> AdvancedIndex(const OpCall& call, const Array& self) {
  std::vector<std::pair<int64_t, const Array*>> given;  // (dim, index tensor)
  for (std::size_t i = 0; i < call.inputs.size() && i < call.input_args.size(); ++i) {
    if (call.input_args[i] != "indices") continue;
    if (i < call.input_dtypes.size() && call.input_dtypes[i] == DType::kBool) {
      return Unfit("indexing by a boolean mask");
    }
    const int64_t dim = i < call.input_positions.size() ? call.input_positions[i] : -1;
    if (dim < 0) return Unfit("an index tensor without its position in indices");
    given.emplace_back(dim, &call.inputs[i]);
  }
  if (given.empty()) return Unfit(fmt::format("{} needs index tensors", call.op));
  const auto first = given.front().first;
  for (std::size_t j = 0; j < given.size(); ++j) {
    if (given[j].first != first + static_cast<int64_t>(j)) {
      return Unfit("index tensors at dims that are not consecutive");
    }
  }
  const auto last = given.back().first;
  if (last >= static_cast<int64_t>(self.shape.size())) return Unfit("more indices than dims");
  std::vector<int64_t> b_shape;
  for (const auto& [dim, t] : given) {
    PARITY_ASSIGN_OR_RETURN(b_shape, BroadcastShape(b_shape, t->shape));
  }
  Advanced a;
  a.shape.assign(self.shape.begin(), self.shape.begin() + first);
  a.shape.insert(a.shape.end(), b_shape.begin(), b_shape.end());
  a.shape.insert(a.shape.end(), self.shape.begin() + last + 1, self.shape.end());
  int64_t outer = 1, inner = 1, n = 1;
  for (int64_t d = 0; d < first; ++d) outer *= self.shape[d];
  for (std::size_t d = last + 1; d < self.shape.size(); ++d) inner *= self.shape[d];
  for (int64_t d : b_shape) n *= d;
  PARITY_RETURN_IF_ERROR(CheckOutputSize(call, 0, outer * n * inner));
  // Each B position's offset within the indexed dims' block of self.
  const Array zeros = Array::Filled(b_shape, 0.0);
  std::vector<int64_t> within(static_cast<std::size_t>(n), 0);
  int64_t stride = inner;
  for (auto it = given.rbegin(); it != given.rend(); ++it) {
    const int64_t size = self.shape[it->first];
    PARITY_ASSIGN_OR_RETURN(Array full,
                            Broadcast(*it->second, zeros, [](double v, double) { return v; }));
    for (int64_t k = 0; k < n; ++k) {
      PARITY_ASSIGN_OR_RETURN(int64_t at, Index(full.data[k], size, true));
      within[k] += at * stride;
    }
    stride *= size;
  }
  a.offsets.reserve(static_cast<std::size_t>(outer * n * inner));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t i = 0; i < inner; ++i) a.offsets.push_back(o * stride + within[k] + i);
    }
  }
  return a;
}

}  // namespace

// index.Tensor(self, indices): the values of self at the indexed positions.
Outputs IndexTensor(const OpCall& call) {
  const Array* self = Arg(call, "self", 0);
  if (self == nullptr) return Unfit("index needs self");
  PARITY_ASSIGN_OR_RETURN(Advanced a, AdvancedIndex(call, *self));
  Array out = Array::Filled(a.shape);
  for (std::size_t i = 0; i < a.offsets.size(); ++i) out.data[i] = self->data[a.offsets[i]];
  return std::vector<Array>{std::move(out)};
}

// index_put(self, indices, values, accumulate): self with `values` (broadcast to the indexed
// shape) written, or with accumulate added, at the indexed positions. A position indexed twice
// is refused: torch's order of writes (or of sums) there is its own.
Outputs IndexPut(const OpCall& call) {
  const Array* self = Arg(call, "self", 0);
  const Array* values = Arg(call, "values", 2);
  if (self == nullptr || values == nullptr) return Unfit("index_put needs self and values");
  PARITY_ASSIGN_OR_RETURN(bool accumulate, AttrBool(call, "accumulate", false));
  PARITY_ASSIGN_OR_RETURN(Advanced a, AdvancedIndex(call, *self));
  const Array zeros = Array::Filled(a.shape, 0.0);
  PARITY_ASSIGN_OR_RETURN(Array v, Broadcast(*values, zeros, [](double x, double) { return x; }));
  if (v.shape != a.shape) return Unfit("values do not broadcast to the indexed shape");
  std::set<int64_t> seen;
  Array out = *self;
  for (std::size_t i = 0; i < a.offsets.size(); ++i) {
    if (!seen.insert(a.offsets[i]).second) return Unfit("index_put at a position indexed twice");
    double& y = out.data[static_cast<std::size_t>(a.offsets[i])];
    y = accumulate ? y + v.data[i] : v.data[i];
  }
  return std::vector<Array>{std::move(out)};
}

// Version 1 records name indices first and the weight as a param; aten's embedding(weight,
// indices, padding_idx, ...) names both (padding_idx changes only the gradient).
Outputs Embedding(const OpCall& call) {
  const bool aten = !call.input_args.empty();
  const Array* indices = aten ? Arg(call, "indices", 1) : Arg(call, "input", 0);
  const Array* weight = aten ? Arg(call, "weight", 0) : call.Param("weight");
  if (weight == nullptr && !aten && call.inputs.size() > 1) weight = &call.inputs[1];
  if (indices == nullptr || weight == nullptr) return Unfit("embedding needs a weight and indices");
  PARITY_ASSIGN_OR_RETURN(Array y, Rows(*weight, *indices));
  return std::vector<Array>{std::move(y)};
}

// embedding_renorm_(self, indices, max_norm, norm_type): each row indices name whose p-norm
// exceeds max_norm is scaled by max_norm / (norm + 1e-7), in place.
Outputs EmbeddingRenorm(const OpCall& call) {
  const Array* weight = Arg(call, "self", 0);
  const Array* indices = Arg(call, "indices", 1);
  if (weight == nullptr || indices == nullptr || weight->shape.size() != 2) {
    return Unfit("embedding_renorm_ needs a 2-d self and indices");
  }
  PARITY_ASSIGN_OR_RETURN(double max_norm, AttrNumber(call, "max_norm", NAN));
  PARITY_ASSIGN_OR_RETURN(double p, AttrNumber(call, "norm_type", 2.0));
  if (!(max_norm >= 0)) return Unfit("embedding_renorm_ needs a max_norm");
  const int64_t dim = weight->shape[1];
  Array y = *weight;
  std::set<int64_t> seen;
  for (double v : indices->data) {
    PARITY_ASSIGN_OR_RETURN(int64_t row, Index(v, weight->shape[0]));
    if (!seen.insert(row).second) continue;
    double* r = y.data.data() + row * dim;
    double norm = 0.0;
    for (int64_t j = 0; j < dim; ++j) {
      norm = std::isinf(p) ? std::max(norm, std::fabs(r[j])) : norm + std::pow(std::fabs(r[j]), p);
    }
    if (!std::isinf(p)) norm = std::pow(norm, 1.0 / p);
    if (norm > max_norm) {
      const double scale = max_norm / (norm + 1e-7);
      for (int64_t j = 0; j < dim; ++j) r[j] *= scale;
    }
  }
  return std::vector<Array>{std::move(y)};
}

// _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
// per_sample_weights, include_last_offset, padding_idx) -> (output, offset2bag, bag_size,
// max_indices). The output is replayed (mode 0 sum, 1 mean, 2 max; entries equal to
// padding_idx skipped; an empty bag is zeros); the three bookkeeping outputs, whose contents
// differ between kernels, are taken as recorded.
Outputs EmbeddingBag(const OpCall& call) {
  const Array* weight = Arg(call, "weight", 0);
  const Array* indices = Arg(call, "indices", 1);
  const Array* offsets = Arg(call, "offsets", 2);
  const Array* per_sample = call.input_args.empty() ? nullptr : Arg(call, "per_sample_weights", 3);
  if (weight == nullptr || indices == nullptr || offsets == nullptr || weight->shape.size() != 2) {
    return Unfit("_embedding_bag needs a 2-d weight, indices and offsets");
  }
  if (indices->shape.size() != 1 || offsets->shape.size() != 1) {
    return Unfit("_embedding_bag needs 1-d indices and offsets");
  }
  if (per_sample && per_sample->numel() != indices->numel()) {
    return Unfit("per_sample_weights differ in size from indices");
  }
  if (call.recorded_outputs.size() != 4) return Unfit("_embedding_bag records four outputs");
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> mode_attr, AttrInts(call, "mode", 1, 0));
  PARITY_ASSIGN_OR_RETURN(bool last, AttrBool(call, "include_last_offset", false));
  PARITY_ASSIGN_OR_RETURN(double padding, AttrNumber(call, "padding_idx", -1));
  const int64_t mode = mode_attr[0];
  if (mode < 0 || mode > 2) return Unfit(fmt::format("_embedding_bag mode {}", mode));
  const int64_t n = indices->numel(), dim = weight->shape[1];
  const int64_t bags = last ? std::max<int64_t>(offsets->numel() - 1, 0) : offsets->numel();
  Array out = Array::Filled({bags, dim});
  for (int64_t b = 0; b < bags; ++b) {
    PARITY_ASSIGN_OR_RETURN(int64_t begin, Index(offsets->data[b], n + 1));
    int64_t end = n;
    if (b + 1 < offsets->numel()) {
      PARITY_ASSIGN_OR_RETURN(end, Index(offsets->data[b + 1], n + 1));
    }
    if (end < begin) return Unfit("offsets decrease");
    double* row = out.data.data() + b * dim;
    int64_t count = 0;
    for (int64_t i = begin; i < end; ++i) {
      if (padding >= 0 && indices->data[i] == padding) continue;
      PARITY_ASSIGN_OR_RETURN(int64_t r, Index(indices->data[i], weight->shape[0]));
      const double* w = weight->data.data() + r * dim;
      const double scale = per_sample ? per_sample->data[i] : 1.0;
      for (int64_t j = 0; j < dim; ++j) {
        const double v = w[j] * scale;
        row[j] = mode == 2 ? (count == 0 || v > row[j] || std::isnan(v) ? v : row[j]) : row[j] + v;
      }
      ++count;
    }
    if (mode == 1 && count > 0) {
      for (int64_t j = 0; j < dim; ++j) row[j] /= static_cast<double>(count);
    }
  }
  return std::vector<Array>{std::move(out), call.recorded_outputs[1], call.recorded_outputs[2],
                            call.recorded_outputs[3]};
}

// cat(tensors, dim): 1-d empty tensors are skipped, as torch's legacy rule says.
Outputs Cat(const OpCall& call) {
  std::vector<const Array*> parts;
  for (const Array* a : ArgList(call, "tensors")) {
    if (!(a->shape.size() == 1 && a->shape[0] == 0)) parts.push_back(a);
  }
  if (parts.empty()) {
    const auto all = ArgList(call, "tensors");
    if (all.empty()) return Unfit("cat needs tensors");
    return std::vector<Array>{*all[0]};
  }
  const std::vector<int64_t>& first = parts[0]->shape;
  if (first.empty()) return Unfit("cat of a 0-d tensor");
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> dim_attr, AttrInts(call, "dim", 1, 0));
  PARITY_ASSIGN_OR_RETURN(std::size_t dim, NormalizeDim(dim_attr[0], first.size()));
  std::vector<int64_t> shape = first;
  shape[dim] = 0;
  for (const Array* a : parts) {
    if (a->shape.size() != first.size()) return Unfit("cat of tensors of different ranks");
    for (std::size_t d = 0; d < first.size(); ++d) {
      if (d != dim && a->shape[d] != first[d]) return Unfit("cat of tensors whose shapes differ");
    }
    shape[dim] += a->shape[dim];
  }
  Array out = Array::Filled(shape);
  const Split whole = SplitAt(shape, dim);
  int64_t at = 0;  // the part's first index along dim
  for (const Array* a : parts) {
    const Split s = SplitAt(a->shape, dim);
    for (int64_t o = 0; o < s.outer; ++o) {
      std::copy_n(a->data.begin() + o * s.size * s.inner, s.size * s.inner,
                  out.data.begin() + (o * whole.size + at) * whole.inner);
    }
    at += s.size;
  }
  return std::vector<Array>{std::move(out)};
}

Outputs IndexSelect(const OpCall& call) {
  const Array* x = Arg(call, "self", 0);
  const Array* index = Arg(call, "index", 1);
  if (x == nullptr || index == nullptr || index->shape.size() > 1) {
    return Unfit("index_select needs self and a 1-d index");
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> dim_attr, AttrInts(call, "dim", 1, 0));
  PARITY_ASSIGN_OR_RETURN(std::size_t dim, NormalizeDim(dim_attr[0], x->shape.size()));
  std::vector<int64_t> shape = x->shape;
  if (!shape.empty()) shape[dim] = index->numel();
  Array out = Array::Filled(shape);
  const Split s = SplitAt(x->shape, dim);
  const int64_t picked = index->numel();
  for (int64_t i = 0; i < picked; ++i) {
    PARITY_ASSIGN_OR_RETURN(int64_t from, Index(index->data[i], s.size));
    for (int64_t o = 0; o < s.outer; ++o) {
      std::copy_n(x->data.begin() + (o * s.size + from) * s.inner, s.inner,
                  out.data.begin() + (o * picked + i) * s.inner);
    }
  }
  return std::vector<Array>{std::move(out)};
}

// gather(self, dim, index): out[..., i, ...] = self[..., index[..., i, ...], ...] along dim.
Outputs Gather(const OpCall& call) {
  const Array* x = Arg(call, "self", 0);
  const Array* index = Arg(call, "index", 1);
  if (x == nullptr || index == nullptr) return Unfit("gather needs self and index");
  const std::size_t rank = std::max<std::size_t>(x->shape.size(), 1);
  if (std::max<std::size_t>(index->shape.size(), 1) != rank) {
    return Unfit("gather's index differs in rank from self");
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> dim_attr, AttrInts(call, "dim", 1, 0));
  PARITY_ASSIGN_OR_RETURN(std::size_t dim, NormalizeDim(dim_attr[0], x->shape.size()));
  std::vector<int64_t> xs = x->shape, is = index->shape;
  if (xs.empty()) xs = {1};
  if (is.empty()) is = {1};
  for (std::size_t d = 0; d < rank; ++d) {
    if (d != dim && is[d] > xs[d]) return Unfit("gather's index is larger than self");
  }
  Array out{index->shape, std::vector<double>(index->data.size())};
  const std::vector<int64_t> xstride = Strides(xs);
  std::vector<int64_t> at(rank, 0);
  for (std::size_t i = 0; i < index->data.size(); ++i) {
    PARITY_ASSIGN_OR_RETURN(int64_t k, Index(index->data[i], xs[dim], /*wrap=*/false));
    int64_t offset = 0;
    for (std::size_t d = 0; d < rank; ++d) offset += (d == dim ? k : at[d]) * xstride[d];
    out.data[i] = x->data[static_cast<std::size_t>(offset)];
    for (std::size_t d = rank; d-- > 0;) {
      if (++at[d] < is[d]) break;
      at[d] = 0;
    }
  }
  return std::vector<Array>{std::move(out)};
}

Outputs Cumsum(const OpCall& call) {
  const Array* x = Arg(call, "self", 0);
  if (x == nullptr) return Unfit("cumsum needs self");
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> dim_attr, AttrInts(call, "dim", 1, 0));
  PARITY_ASSIGN_OR_RETURN(std::size_t dim, NormalizeDim(dim_attr[0], x->shape.size()));
  Array y = *x;
  const Split s = SplitAt(x->shape, dim);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      double sum = 0.0;
      for (int64_t j = 0; j < s.size; ++j) {
        double& v = y.data[(o * s.size + j) * s.inner + i];
        sum += v;
        v = sum;
      }
    }
  }
  return std::vector<Array>{std::move(y)};
}

}  // namespace parity::oracle
