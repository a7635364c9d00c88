// SPDX-License-Identifier: Apache-2.0
#include "oracle/oracle.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "core/convert.h"
#include "core/float_format.h"
#include "oracle/kernels.h"

namespace parity {
namespace {

struct OpEntry {
  std::string_view name;
  oracle::Outputs (*replay)(const OpCall&);
};

// The registry: every op docs/DESIGN.md names for replay (version 1), then the aten ops of
// version 2 dumps (docs/EXPLAIN.md, "aten ops"). aten's add, mul, sum, mean, gelu, silu, relu,
// bmm and embedding share version 1's names and replays.
constexpr OpEntry kOps[] = {
    {"linear", oracle::Linear},
    {"matmul", oracle::Matmul},
    {"bmm", oracle::Bmm},
    {"conv1d", oracle::Conv},
    {"conv2d", oracle::Conv},
    {"softmax", oracle::Softmax},
    {"log_softmax", oracle::LogSoftmax},
    {"layer_norm", oracle::LayerNorm},
    {"rms_norm", oracle::RmsNorm},
    {"batch_norm", oracle::BatchNorm},
    {"gelu", oracle::Gelu},
    {"silu", oracle::Silu},
    {"relu", oracle::Relu},
    {"add", oracle::Add},
    {"mul", oracle::Mul},
    {"sum", oracle::Sum},
    {"mean", oracle::Mean},
    {"embedding", oracle::Embedding},
    {"dropout", oracle::Dropout},
    {"scaled_dot_product_attention", oracle::Attention},
    {"module", nullptr},  // a container: its inner calls are recorded and replayed separately
    // aten
    {"mm", oracle::Mm},
    {"addmm", oracle::Addmm},
    {"baddbmm", oracle::Addmm},
    {"convolution", oracle::Convolution},
    {"_softmax", oracle::Softmax},
    {"_log_softmax", oracle::LogSoftmax},
    {"native_layer_norm", oracle::NativeLayerNorm},
    {"_fused_rms_norm", oracle::FusedRmsNorm},
    {"native_batch_norm", oracle::NativeBatchNorm},
    {"sigmoid", oracle::Sigmoid},
    {"tanh", oracle::Tanh},
    {"sub", oracle::Sub},
    {"div", oracle::Div},
    {"native_dropout", oracle::NativeDropout},
    {"embedding_renorm_", oracle::EmbeddingRenorm},
    {"_embedding_bag", oracle::EmbeddingBag},
    {"_embedding_bag_forward_only", oracle::EmbeddingBag},
    {"max_pool2d_with_indices", oracle::MaxPool2dWithIndices},
    {"avg_pool2d", oracle::AvgPool2d},
    {"_adaptive_avg_pool2d", oracle::AvgPool2d},
    {"cat", oracle::Cat},
    {"index_select", oracle::IndexSelect},
    {"gather", oracle::Gather},
    {"index", oracle::IndexTensor},
    {"index_put", oracle::IndexPut},
    {"cumsum", oracle::Cumsum},
    {"mse_loss", oracle::MseLoss},
    {"binary_cross_entropy_with_logits", oracle::BceWithLogits},
    {"nll_loss_forward", oracle::NllLoss},
    {"nll_loss2d_forward", oracle::NllLoss},
    {"binary_cross_entropy", oracle::BinaryCrossEntropy},
    {"_scaled_dot_product_attention", oracle::Attention},
    {"_scaled_dot_product_attention_forward", oracle::Attention},
    {"_scaled_dot_product_attention_math", oracle::Attention},
    {"_scaled_dot_product_flash_attention_for_cpu", oracle::Attention},
    {"_scaled_dot_product_flash_attention_for_cpu_backward", oracle::AttentionBackward},
    // torch 2.x's GPU attention kernels, by their schemas (ops_attention.cc)
    {"_scaled_dot_product_flash_attention", oracle::Attention},
    {"_scaled_dot_product_flash_attention_backward", oracle::AttentionBackward},
    {"_scaled_dot_product_efficient_attention", oracle::Attention},
    {"_scaled_dot_product_efficient_attention_backward", oracle::AttentionBackward},
    {"_scaled_dot_product_cudnn_attention", oracle::Attention},
    {"_scaled_dot_product_cudnn_attention_backward", oracle::AttentionBackward},
    {"_scaled_dot_product_fused_attention_overrideable", oracle::Attention},
    {"_scaled_dot_product_fused_attention_overrideable_backward", oracle::AttentionBackward},
    // aten backward
    {"threshold_backward", oracle::ThresholdBackward},
    {"sigmoid_backward", oracle::SigmoidBackward},
    {"tanh_backward", oracle::TanhBackward},
    {"gelu_backward", oracle::GeluBackward},
    {"_softmax_backward_data", oracle::SoftmaxBackward},
    {"_log_softmax_backward_data", oracle::SoftmaxBackward},
    {"nll_loss_backward", oracle::NllLossBackward},
    {"nll_loss2d_backward", oracle::NllLossBackward},
    {"mse_loss_backward", oracle::MseLossBackward},
    {"binary_cross_entropy_backward", oracle::BinaryCrossEntropy},
    {"native_layer_norm_backward", oracle::NativeLayerNormBackward},
    {"_fused_rms_norm_backward", oracle::FusedRmsNormBackward},
    {"native_batch_norm_backward", oracle::NativeBatchNormBackward},
    {"embedding_dense_backward", oracle::EmbeddingDenseBackward},
    {"_embedding_bag_dense_backward", oracle::EmbeddingBagDenseBackward},
    {"_embedding_bag_backward", oracle::EmbeddingBagBackward},
    // torch 2.x's fused optimizers (ops_optim.cc)
    {"_fused_adam_", oracle::FusedAdam},
    {"_fused_adamw_", oracle::FusedAdam},
    {"max_pool2d_with_indices_backward", oracle::MaxPool2dBackward},
    {"avg_pool2d_backward", oracle::AvgPool2dBackward},
    {"_adaptive_avg_pool2d_backward", oracle::AvgPool2dBackward},
    {"convolution_backward", oracle::ConvolutionBackward},
    // aten optimizer arithmetic, and ops that make or copy tensors
    {"sqrt", oracle::Sqrt},
    {"addcmul", oracle::Addcmul},
    {"addcdiv", oracle::Addcmul},
    {"lerp", oracle::Lerp},
    {"zeros", oracle::Fill},
    {"ones", oracle::Fill},
    {"full", oracle::Fill},
    {"zeros_like", oracle::Fill},
    {"ones_like", oracle::Fill},
    {"full_like", oracle::Fill},
    {"new_zeros", oracle::Fill},
    {"new_ones", oracle::Fill},
    {"new_full", oracle::Fill},
    {"fill_", oracle::Fill},
    {"zero_", oracle::Fill},
    {"clone", oracle::Copy},
    {"copy_", oracle::Copy},
    {"_to_copy", oracle::Copy},
    {"stack", oracle::Stack},
    // trivial elementwise ops (ops_trivial.cc)
    {"neg", oracle::Neg},
    {"reciprocal", oracle::Reciprocal},
    {"clamp", oracle::Clamp},
    {"clamp_min", oracle::Clamp},
    {"clamp_max", oracle::Clamp},
    // torch 2.x's model code: rotary embeddings, RMSNorm, attention masks (ops_math.cc)
    {"sin", oracle::Sin},
    {"cos", oracle::Cos},
    {"rsqrt", oracle::Rsqrt},
    {"pow", oracle::Pow},
    {"silu_backward", oracle::SiluBackward},
    {"_safe_softmax", oracle::SafeSoftmax},
    {"eq", oracle::Compare},
    {"ne", oracle::Compare},
    {"ge", oracle::Compare},
    {"gt", oracle::Compare},
    {"le", oracle::Compare},
    {"lt", oracle::Compare},
    {"bitwise_and", oracle::Bitwise},
    {"bitwise_or", oracle::Bitwise},
    {"bitwise_not", oracle::Bitwise},
    {"logical_not", oracle::Bitwise},
    {"where", oracle::Where},
    {"all", oracle::AllAny},
    {"any", oracle::AllAny},
    {"slice_backward", oracle::SliceBackward},
    {"select_backward", oracle::SelectBackward},
    {"arange", oracle::Arange},
    {"scalar_tensor", oracle::ScalarTensor},
};

const OpEntry* FindOp(std::string_view op) {
  for (const OpEntry& e : kOps) {
    if (e.name == op) return &e;
  }
  // _foreach_<op>[_]: <op> at each list position, when <op> has a replay.
  if (op.starts_with("_foreach_")) {
    std::string_view base = op.substr(std::string_view("_foreach_").size());
    if (base.ends_with('_')) base.remove_suffix(1);
    const OpEntry* each = base.empty() || base.starts_with('_') ? nullptr : FindOp(base);
    static constexpr OpEntry kForeach = {"_foreach_", oracle::Foreach};
    return each != nullptr && each->replay != nullptr ? &kForeach : nullptr;
  }
  // aten's in-place forms (add_, addmm_, cumsum_ ...) compute what the functional op does.
  if (op.size() > 1 && op.back() == '_' && op.front() != '_') {
    const OpEntry* functional = FindOp(op.substr(0, op.size() - 1));
    if (functional != nullptr && functional->replay != nullptr) return functional;
  }
  return nullptr;
}

uint32_t Encode(double v, DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return EncodeFloat(v, kFloat16Format);
    case DType::kBFloat16:
      return EncodeFloat(v, kBFloat16Format);
    case DType::kFloat8E4M3FN:
      return EncodeFloat(v, kFloat8E4M3FNFormat);
    case DType::kFloat8E5M2:
      return EncodeFloat(v, kFloat8E5M2Format);
    default:
      return 0;
  }
}

}  // namespace

int64_t Array::numel() const { return static_cast<int64_t>(data.size()); }

Array Array::Filled(std::vector<int64_t> shape, double value) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return Array{std::move(shape), std::vector<double>(static_cast<std::size_t>(n), value)};
}

const Array* OpCall::Param(std::string_view name) const {
  for (const auto& [key, array] : params) {
    if (key == name) return &array;
  }
  return nullptr;
}

Result<Array> ToArray(const Tensor& tensor) {
  Array out = Array::Filled(tensor.meta().shape);
  const std::size_t itemsize = ItemSize(tensor.dtype());
  constexpr std::size_t kChunk = 1 << 16;
  std::vector<std::byte> scratch(kChunk * itemsize);
  for (std::size_t begin = 0; begin < out.data.size(); begin += kChunk) {
    const std::size_t n = std::min(kChunk, out.data.size() - begin);
    PARITY_ASSIGN_OR_RETURN(const std::byte* p,
                            tensor.ReadChunk(begin * itemsize, n * itemsize, scratch.data()));
    ConvertToFloat64(tensor.dtype(), p, std::span(out.data.data() + begin, n));
  }
  return out;
}

Tensor FromArray(const Array& array, DType dtype, const std::string& name) {
  auto meta = MakeTensorMeta("", name, dtype, array.shape);
  std::vector<std::byte> bytes(meta->nbytes);
  const std::size_t itemsize = ItemSize(dtype);
  for (std::size_t i = 0; i < array.data.size(); ++i) {
    std::byte* p = bytes.data() + i * itemsize;
    const double v = array.data[i];
    switch (dtype) {
      case DType::kFloat64:
        std::memcpy(p, &v, 8);
        break;
      case DType::kFloat32: {
        const auto f = static_cast<float>(v);  // round to nearest even
        std::memcpy(p, &f, 4);
        break;
      }
      case DType::kFloat16:
      case DType::kBFloat16: {
        const auto bits = static_cast<uint16_t>(Encode(v, dtype));
        std::memcpy(p, &bits, 2);
        break;
      }
      case DType::kFloat8E4M3FN:
      case DType::kFloat8E5M2:
        *p = static_cast<std::byte>(Encode(v, dtype));
        break;
      default: {  // integers and bool: the nearest value the type holds
        const double r =
            std::isfinite(v) ? std::clamp(std::nearbyint(v), -0x1p63, 0x1p63 - 1024) : 0.0;
        const auto i64 = static_cast<int64_t>(r);
        std::memcpy(p, &i64, itemsize);  // little-endian: the low bytes
        break;
      }
    }
  }
  return Tensor::Owned(*meta, std::move(bytes));
}

bool Replayable(std::string_view op) {
  const OpEntry* e = FindOp(op);
  return e != nullptr && e->replay != nullptr;
}

std::vector<std::string_view> ReplayableOps() {
  std::vector<std::string_view> names;
  for (const OpEntry& e : kOps) {
    if (e.replay != nullptr) names.push_back(e.name);
  }
  return names;
}

Result<std::vector<Array>> Replay(const OpCall& call) {
  const OpEntry* e = FindOp(call.op);
  if (e == nullptr && call.op == "compiled_region") {
    return oracle::Unfit(
        "a compiled region: its ops are not recorded one by one; parity replay judges it "
        "against PyTorch's float64 run of its graph (python -m parity_dump.regions DUMP)");
  }
  if (e == nullptr && call.op.starts_with("fbgemm::")) {
    return oracle::Unfit(fmt::format(
        "compared only: {} is one of fbgemm's kernels (TorchRec's table-batched embeddings, "
        "their fused optimizers and caches), whose semantics are not documented as a formula "
        "to replay",
        call.op));
  }
  if (e == nullptr) return oracle::Unfit(fmt::format("op '{}' has no float64 replay", call.op));
  if (e->replay == nullptr) {
    return oracle::Unfit("a container module: its inner calls are replayed one by one");
  }
  return e->replay(call);
}

std::size_t ValueOutputs(const OpCall& call, std::size_t outputs) {
  const OpEntry* e = FindOp(call.op);
  return e != nullptr && e->replay == oracle::Attention
             ? oracle::AttentionValueOutputs(call, outputs)
             : outputs;
}

namespace oracle {

Status Unfit(std::string_view why) {
  return Status::Invalid("", fmt::format("not replayable: {}", why));
}

Result<double> AttrNumber(const OpCall& call, const char* name, double fallback) {
  const auto it = call.attrs.find(name);
  if (it != call.attrs.end() && it->is_null()) {  // a non-finite float (parity_dump's marker)
    const auto marker = call.attrs.find(std::string(name) + "_nonfinite");
    if (marker != call.attrs.end() && marker->is_string()) {
      const std::string m = marker->get<std::string>();
      if (m == "nan") return std::nan("");
      if (m == "inf" || m == "-inf") return m == "inf" ? HUGE_VAL : -HUGE_VAL;
    }
  }
  if (it == call.attrs.end() || it->is_null()) return fallback;
  if (it->is_boolean()) return it->get<bool>() ? 1.0 : 0.0;
  if (!it->is_number()) return Unfit(fmt::format("attr '{}' is not a number", name));
  return it->get<double>();
}

Result<bool> AttrBool(const OpCall& call, const char* name, bool fallback) {
  const auto it = call.attrs.find(name);
  if (it == call.attrs.end() || it->is_null()) return fallback;
  if (it->is_boolean()) return it->get<bool>();
  if (it->is_number_integer()) return it->get<int64_t>() != 0;
  return Unfit(fmt::format("attr '{}' is not a boolean", name));
}

Result<std::vector<int64_t>> AttrInts(const OpCall& call, const char* name, std::size_t count,
                                      int64_t fallback) {
  const auto it = call.attrs.find(name);
  if (it == call.attrs.end() || it->is_null()) return std::vector<int64_t>(count, fallback);
  if (it->is_number_integer()) return std::vector<int64_t>(count, it->get<int64_t>());
  if (it->is_array() && it->size() == count) {
    std::vector<int64_t> out;
    for (const Json& v : *it) {
      if (!v.is_number_integer()) break;
      out.push_back(v.get<int64_t>());
    }
    if (out.size() == count) return out;
  }
  if (it->is_array() && it->size() == 1 && (*it)[0].is_number_integer()) {
    return std::vector<int64_t>(count, (*it)[0].get<int64_t>());
  }
  return Unfit(count == 1 ? fmt::format("attr '{}' is not an int", name)
                          : fmt::format("attr '{}' is not an int or {} ints", name, count));
}

Result<std::size_t> NormalizeDim(int64_t dim, std::size_t rank) {
  const int64_t r = std::max<int64_t>(static_cast<int64_t>(rank), 1);  // torch wraps 0-d as 1-d
  if (dim < -r || dim >= r) {
    return Unfit(fmt::format("dim {} out of range for {} dimensions", dim, rank));
  }
  return static_cast<std::size_t>(dim < 0 ? dim + r : dim);
}

const Array* Arg(const OpCall& call, std::string_view arg, std::size_t position) {
  if (call.input_args.empty())
    return position < call.inputs.size() ? &call.inputs[position] : nullptr;
  for (std::size_t i = 0; i < call.input_args.size() && i < call.inputs.size(); ++i) {
    if (call.input_args[i] == arg) return &call.inputs[i];
  }
  return nullptr;
}

std::vector<const Array*> ArgList(const OpCall& call, std::string_view arg) {
  std::vector<const Array*> out;
  for (std::size_t i = 0; i < call.inputs.size(); ++i) {
    if (call.input_args.empty() || (i < call.input_args.size() && call.input_args[i] == arg)) {
      out.push_back(&call.inputs[i]);
    }
  }
  return out;
}

Status CheckOutputSize(const OpCall& call, std::size_t index, int64_t numel) {
  constexpr int64_t kUnrecorded = int64_t{1} << 24;
  const int64_t budget =
      index < call.recorded_outputs.size() ? call.recorded_outputs[index].numel() : kUnrecorded;
  if (numel < 0 || numel > budget) {
    return Unfit(fmt::format("{} would make an output of {} elements, more than the {} it records",
                             call.op, numel, budget));
  }
  return Status::Ok();
}

Result<std::array<bool, 3>> OutputMask(const OpCall& call) {
  std::array<bool, 3> mask = {true, true, true};
  const auto it = call.attrs.find("output_mask");
  if (it == call.attrs.end() || it->is_null()) return mask;
  if (!it->is_array() || it->size() != 3) return Unfit("output_mask is not three booleans");
  for (std::size_t i = 0; i < 3; ++i) {
    if (!(*it)[i].is_boolean()) return Unfit("output_mask is not three booleans");
    mask[i] = (*it)[i].get<bool>();
  }
  return mask;
}

std::vector<Array> Masked(const std::array<bool, 3>& mask, Array input, Array weight, Array bias) {
  std::vector<Array> out;
  if (mask[0]) out.push_back(std::move(input));
  if (mask[1]) out.push_back(std::move(weight));
  if (mask[2]) out.push_back(std::move(bias));
  return out;
}

Result<int> Reduction(const OpCall& call) {
  const auto it = call.attrs.find("reduction");
  if (it == call.attrs.end() || it->is_null()) return 1;
  if (it->is_number_integer() && it->get<int64_t>() >= 0 && it->get<int64_t>() <= 2) {
    return static_cast<int>(it->get<int64_t>());
  }
  if (it->is_string()) {
    const std::string r = it->get<std::string>();
    if (r == "none") return 0;
    if (r == "mean") return 1;
    if (r == "sum") return 2;
  }
  return Unfit(fmt::format("reduction {} is not none, mean or sum", it->dump()));
}

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

Result<std::vector<int64_t>> BroadcastShape(const std::vector<int64_t>& a,
                                            const std::vector<int64_t>& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return Unfit(
          fmt::format("shapes {} and {} do not broadcast", ShapeString(a), ShapeString(b)));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void Gemm(const double* a, const double* b, double* c, int64_t m, int64_t n, int64_t k,
          bool transpose_b, bool accumulate) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate) std::fill(c, c + m * n, 0.0);
    return;
  }
  cblas_dgemm(CblasRowMajor, CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a,
              static_cast<int>(k), b, static_cast<int>(transpose_b ? k : n), accumulate ? 1.0 : 0.0,
              c, static_cast<int>(n));
}

}  // namespace oracle
}  // namespace parity
