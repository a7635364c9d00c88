// SPDX-License-Identifier: Apache-2.0
// linear, matmul, bmm and aten's mm, addmm, baddbmm: float64 products through OpenBLAS.
#include <fmt/format.h>

#include "io/tensor.h"
#include "oracle/kernels.h"

namespace parity::oracle {

Result<Array> BatchedProduct(const Array& a, const Array& b) {
  if (a.shape.size() < 2 || b.shape.size() < 2) return Unfit("operands need 2 dimensions");
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back();
  const int64_t k2 = b.shape[b.shape.size() - 2], n = b.shape.back();
  if (k != k2) {
    return Unfit(fmt::format("inner dimensions differ: {} and {}", ShapeString(a.shape),
                             ShapeString(b.shape)));
  }
  const std::vector<int64_t> batch_a(a.shape.begin(), a.shape.end() - 2);
  const std::vector<int64_t> batch_b(b.shape.begin(), b.shape.end() - 2);
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> batch, BroadcastShape(batch_a, batch_b));
  std::vector<int64_t> shape = batch;
  shape.push_back(m);
  shape.push_back(n);
  Array out = Array::Filled(shape);
  // Offsets of each operand's matrix per output batch, through broadcasting.
  Array ia = Array::Filled(batch_a), ib = Array::Filled(batch_b);
  for (std::size_t i = 0; i < ia.data.size(); ++i) ia.data[i] = static_cast<double>(i);
  for (std::size_t i = 0; i < ib.data.size(); ++i) ib.data[i] = static_cast<double>(i);
  PARITY_ASSIGN_OR_RETURN(Array pairs_a, Broadcast(ia, ib, [](double x, double) { return x; }));
  PARITY_ASSIGN_OR_RETURN(Array pairs_b, Broadcast(ia, ib, [](double, double y) { return y; }));
  for (std::size_t p = 0; p < pairs_a.data.size(); ++p) {
    const auto sa = static_cast<int64_t>(pairs_a.data[p]);
    const auto sb = static_cast<int64_t>(pairs_b.data[p]);
    Gemm(a.data.data() + sa * m * k, b.data.data() + sb * k * n,
         out.data.data() + static_cast<int64_t>(p) * m * n, m, n, k, false);
  }
  return out;
}

Outputs Linear(const OpCall& call) {
  if (call.inputs.empty()) return Unfit("linear needs an input");
  const Array& x = call.inputs[0];
  const Array* w = call.Param("weight");
  if (w == nullptr && call.inputs.size() > 1) w = &call.inputs[1];
  if (w == nullptr || w->shape.size() != 2) return Unfit("linear needs a 2-d weight");
  const int64_t n = w->shape[0], k = w->shape[1];
  if (x.shape.empty() || x.shape.back() != k) {
    return Unfit(
        fmt::format("input {} does not end in the weight's {} columns", ShapeString(x.shape), k));
  }
  std::vector<int64_t> shape(x.shape.begin(), x.shape.end() - 1);
  shape.push_back(n);
  Array out = Array::Filled(shape);
  const int64_t m = k > 0 ? x.numel() / k : 0;
  Gemm(x.data.data(), w->data.data(), out.data.data(), m, n, k, /*transpose_b=*/true);
  const Array* bias = call.Param("bias");
  if (bias == nullptr && call.inputs.size() > 2) bias = &call.inputs[2];
  if (bias != nullptr) {
    if (bias->numel() != n) return Unfit("bias size differs from the output features");
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t j = 0; j < n; ++j) out.data[r * n + j] += bias->data[j];
    }
  }
  return std::vector<Array>{std::move(out)};
}

Outputs Matmul(const OpCall& call) {
  if (call.inputs.size() < 2) return Unfit("matmul needs two operands");
  Array a = call.inputs[0], b = call.inputs[1];
  if (a.shape.empty() || b.shape.empty()) return Unfit("matmul of a 0-d tensor");
  const bool vector_a = a.shape.size() == 1, vector_b = b.shape.size() == 1;
  if (vector_a) a.shape.insert(a.shape.begin(), 1);
  if (vector_b) b.shape.push_back(1);
  PARITY_ASSIGN_OR_RETURN(Array out, BatchedProduct(a, b));
  if (vector_b) out.shape.pop_back();
  if (vector_a) out.shape.erase(out.shape.end() - (vector_b ? 1 : 2));
  return std::vector<Array>{std::move(out)};
}

Outputs Bmm(const OpCall& call) {
  if (call.inputs.size() < 2) return Unfit("bmm needs two operands");
  const Array& a = call.inputs[0];
  const Array& b = call.inputs[1];
  if (a.shape.size() != 3 || b.shape.size() != 3 || a.shape[0] != b.shape[0]) {
    return Unfit("bmm needs two 3-d operands with the same batch");
  }
  PARITY_ASSIGN_OR_RETURN(Array out, BatchedProduct(a, b));
  return std::vector<Array>{std::move(out)};
}

Outputs Mm(const OpCall& call) {
  const Array* a = Arg(call, "self", 0);
  const Array* b = Arg(call, "mat2", 1);
  if (a == nullptr || b == nullptr) return Unfit("mm needs self and mat2");
  if (a->shape.size() != 2 || b->shape.size() != 2) return Unfit("mm needs two 2-d operands");
  PARITY_ASSIGN_OR_RETURN(Array out, BatchedProduct(*a, *b));
  return std::vector<Array>{std::move(out)};
}

// beta·self + alpha·(mat1 · mat2), self broadcast to the product; self is ignored (NaN
// included) when beta is 0, as torch does. baddbmm is the same over a batch.
Outputs Addmm(const OpCall& call) {
  const bool batched = call.op.starts_with("baddbmm");
  const Array* self = Arg(call, "self", 0);
  const Array* a = Arg(call, batched ? "batch1" : "mat1", 1);
  const Array* b = Arg(call, batched ? "batch2" : "mat2", 2);
  if (self == nullptr || a == nullptr || b == nullptr) {
    return Unfit(fmt::format("{} needs self and two operands", call.op));
  }
  const std::size_t rank = batched ? 3 : 2;
  if (a->shape.size() != rank || b->shape.size() != rank ||
      (batched && a->shape[0] != b->shape[0])) {
    return Unfit(fmt::format("{} needs two {}-d operands", call.op, rank));
  }
  PARITY_ASSIGN_OR_RETURN(double beta, AttrNumber(call, "beta", 1.0));
  PARITY_ASSIGN_OR_RETURN(double alpha, AttrNumber(call, "alpha", 1.0));
  PARITY_ASSIGN_OR_RETURN(Array product, BatchedProduct(*a, *b));
  if (beta == 0.0) {
    PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShape(self->shape, product.shape));
    if (shape != product.shape) return Unfit("self does not broadcast to the product");
    for (double& v : product.data) v *= alpha;
    return std::vector<Array>{std::move(product)};
  }
  PARITY_ASSIGN_OR_RETURN(Array out, Broadcast(*self, product, [beta, alpha](double s, double p) {
                            return beta * s + alpha * p;
                          }));
  if (out.shape != product.shape) return Unfit("self does not broadcast to the product");
  return std::vector<Array>{std::move(out)};
}

}  // namespace parity::oracle
