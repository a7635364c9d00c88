// SPDX-License-Identifier: Apache-2.0
// train: a two-layer perceptron learning a fixed linear teacher by SGD, every matrix product on
// the backend's float32 GEMM and everything else on the host in float32 in a fixed order, so
// that a run resumed from a checkpoint reproduces the losses of one that never stopped, bit for
// bit (tests/gen/gen_stress.py implements the same model in numpy).
//
// The model, for a batch x (batch_size × inputs):
//   h = relu(x·W1 + b1), y = h·W2 + b2, loss = mean over batch and outputs of (y - t)²,
// with targets t = x·T. Its data, for seed s and step k (counted from 1):
//   x[r][i]  = float32(GemmInputValue(s + 1000, 1, (k·batch_size + r)·inputs + i)),
//   T[i][o]  = float32(GemmInputValue(s, 23, i·outputs + o) / √inputs),
// and its initial weights W1[i][j] = float32(GemmInputValue(s, 21, i·hidden + j) / √inputs),
// W2[j][o] = float32(GemmInputValue(s, 22, j·outputs + o) / √hidden), b1 = b2 = 0 (the
// products and quotients in float64, then rounded once; matrices row-major).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "bench/gemm_check.h"
#include "bench/suite.h"
#include "stress/workload_builtin.h"

namespace parity::stress {
namespace {

using bench::DeviceBuffer;
using bench::MemoryKind;

constexpr std::string_view kName = "train";
constexpr std::array<std::string_view, 6> kParams = {"batch_size", "lr",      "inputs",
                                                     "hidden",     "outputs", "seed"};
constexpr int64_t kMaxBatch = 65536;
constexpr int64_t kMaxWidth = 8192;
constexpr int64_t kMaxSeed = int64_t{1} << 53;
constexpr uint64_t kSaltW1 = 21, kSaltW2 = 22, kSaltTeacher = 23, kSaltData = 1;
constexpr uint64_t kDataSeedOffset = 1000;

// rows × cols row-major `src` into cols × rows row-major `dst`.
void Transpose(const std::vector<float>& src, int64_t rows, int64_t cols, std::vector<float>* dst) {
  dst->resize(src.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) (*dst)[c * rows + r] = src[r * cols + c];
  }
}

// count values float32(GemmInputValue(seed, salt, first + i) · scale).
std::vector<float> Values(uint64_t seed, uint64_t salt, uint64_t first, std::size_t count,
                          double scale) {
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    out[i] = static_cast<float>(bench::GemmInputValue(seed, salt, first + i) * scale);
  }
  return out;
}

// v -= lr·g, element by element.
void Descend(std::vector<float>* v, const std::vector<float>& g, float lr) {
  for (std::size_t i = 0; i < v->size(); ++i) (*v)[i] -= lr * g[i];
}

// Sums over the rows of a rows × cols matrix, in row order.
std::vector<float> ColumnSums(const std::vector<float>& m, int64_t rows, int64_t cols) {
  std::vector<float> out(static_cast<std::size_t>(cols), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[c] += m[r * cols + c];
  }
  return out;
}

class Train final : public StressWorkload {
 public:
  std::string_view name() const override { return kName; }
  std::string_view work_unit() const override { return "samples"; }

  Status Start(bench::Backend& backend, int device, const Params& params,
               std::string_view state) override {
    // A start that fails holds no device memory.
    Status status = Begin(backend, device, params, state);
    if (!status.ok()) Reset();
    return status;
  }
  Result<StepResult> Step(int64_t step) override;
  Result<std::string> Save() override;
  Status PlantBitFlip(uint64_t) override {
    return Status::Unavailable(
        "train has no result to corrupt in place; use gemm-burn or stream-burn");
  }
  std::size_t bytes_in_use() const override { return bytes_in_use_; }

 private:
  Status Begin(bench::Backend& backend, int device, const Params& params, std::string_view state);
  // Frees everything and forgets the last start.
  void Reset() {
    a_ = DeviceBuffer();
    b_ = DeviceBuffer();
    c_ = DeviceBuffer();
    bytes_in_use_ = 0;
    started_ = false;
  }
  // c (m×n) = a (m×k)·b (k×n) on the backend: the operands copied into device memory, the
  // product copied back.
  Status Gemm(int64_t m, int64_t n, int64_t k, const std::vector<float>& a,
              const std::vector<float>& b, std::vector<float>* c);

  bench::Backend* backend_ = nullptr;
  int64_t batch_ = 0, inputs_ = 0, hidden_ = 0, outputs_ = 0;
  float lr_ = 0.0f;
  uint64_t seed_ = 1;
  Json params_ = Json::object();
  bool started_ = false;
  int64_t last_step_ = 0;

  std::vector<float> w1_, b1_, w2_, b2_, teacher_;
  DeviceBuffer a_, b_, c_;  // GEMM operands, each as large as the largest of that role
  std::size_t bytes_in_use_ = 0;
};

Status Train::Begin(bench::Backend& backend, int /*device*/, const Params& params,
                    std::string_view state) {
  Reset();
  PARITY_ASSIGN_OR_RETURN(internal::ParamReader reader,
                          internal::ParamReader::Make(kName, params, kParams));
  PARITY_ASSIGN_OR_RETURN(const int64_t batch, reader.Int("batch_size", 64, 1, kMaxBatch));
  PARITY_ASSIGN_OR_RETURN(const double lr, reader.Real("lr", 0.01, 0.0, 10.0));
  PARITY_ASSIGN_OR_RETURN(const int64_t inputs, reader.Int("inputs", 64, 1, kMaxWidth));
  PARITY_ASSIGN_OR_RETURN(const int64_t hidden, reader.Int("hidden", 128, 1, kMaxWidth));
  PARITY_ASSIGN_OR_RETURN(const int64_t outputs, reader.Int("outputs", 8, 1, kMaxWidth));
  PARITY_ASSIGN_OR_RETURN(const int64_t seed, reader.Int("seed", 1, 0, kMaxSeed));
  batch_ = batch;
  inputs_ = inputs;
  hidden_ = hidden;
  outputs_ = outputs;
  lr_ = static_cast<float>(lr);
  seed_ = static_cast<uint64_t>(seed);
  params_ = Json{{"batch_size", batch}, {"lr", lr},           {"inputs", inputs},
                 {"hidden", hidden},    {"outputs", outputs}, {"seed", seed}};
  const std::size_t n_w1 = static_cast<std::size_t>(inputs * hidden);
  const std::size_t n_w2 = static_cast<std::size_t>(hidden * outputs);
  const std::size_t n_b1 = static_cast<std::size_t>(hidden);
  const std::size_t n_b2 = static_cast<std::size_t>(outputs);

  if (state.empty()) {
    last_step_ = 0;
    w1_ = Values(seed_, kSaltW1, 0, n_w1, 1.0 / std::sqrt(static_cast<double>(inputs)));
    w2_ = Values(seed_, kSaltW2, 0, n_w2, 1.0 / std::sqrt(static_cast<double>(hidden)));
    b1_.assign(n_b1, 0.0f);
    b2_.assign(n_b2, 0.0f);
  } else {
    PARITY_ASSIGN_OR_RETURN(internal::DecodedState saved, internal::DecodeState(state, kName));
    const Json shape = {{"inputs", inputs}, {"hidden", hidden}, {"outputs", outputs}};
    const auto saved_shape = saved.header.find("shape");
    if (saved_shape == saved.header.end() || !saved_shape->is_object()) {
      return Status::Invalid("", fmt::format("workload {}: state has no shape", kName));
    }
    if (*saved_shape != shape) {
      return Status::Invalid(
          "", fmt::format("workload {}: state holds weights of shape {}, the parameters ask "
                          "for {} (a run resumes with the same inputs, hidden and outputs)",
                          kName, saved_shape->dump(), shape.dump()));
    }
    const std::size_t floats = n_w1 + n_b1 + n_w2 + n_b2;
    if (saved.payload.size() != floats * 4) {
      return Status::Invalid("", fmt::format("workload {}: state holds {} bytes of weights, "
                                             "its shape needs {}",
                                             kName, saved.payload.size(), floats * 4));
    }
    std::size_t at = 0;
    for (auto [v, count] : {std::pair{&w1_, n_w1}, std::pair{&b1_, n_b1}, std::pair{&w2_, n_w2},
                            std::pair{&b2_, n_b2}}) {
      v->resize(count);
      for (float& f : *v) {
        uint32_t bits = 0;
        for (int i = 0; i < 4; ++i) {
          bits |= uint32_t{static_cast<unsigned char>(saved.payload[at++])} << (8 * i);
        }
        f = std::bit_cast<float>(bits);
      }
    }
    last_step_ = saved.step;
  }
  teacher_ = Values(seed_, kSaltTeacher, 0, static_cast<std::size_t>(inputs * outputs),
                    1.0 / std::sqrt(static_cast<double>(inputs)));

  // The products of a step, as (m, n, k): t = x·T, x·W1, h·W2, hᵀ·dy, dy·W2ᵀ, xᵀ·dh.
  const std::array<std::array<int64_t, 3>, 6> shapes = {{{batch, outputs, inputs},
                                                         {batch, hidden, inputs},
                                                         {batch, outputs, hidden},
                                                         {hidden, outputs, batch},
                                                         {batch, hidden, outputs},
                                                         {inputs, hidden, batch}}};
  int64_t most_a = 0, most_b = 0, most_c = 0;
  for (const auto& [m, n, k] : shapes) {
    most_a = std::max(most_a, m * k);
    most_b = std::max(most_b, k * n);
    most_c = std::max(most_c, m * n);
  }
  backend_ = &backend;
  for (auto [buffer, count] :
       {std::pair{&a_, most_a}, std::pair{&b_, most_b}, std::pair{&c_, most_c}}) {
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(float);
    PARITY_ASSIGN_OR_RETURN(*buffer, DeviceBuffer::Allocate(backend, bytes, MemoryKind::kDevice));
    bytes_in_use_ += bytes;
  }
  started_ = true;
  return Status::Ok();
}

Status Train::Gemm(int64_t m, int64_t n, int64_t k, const std::vector<float>& a,
                   const std::vector<float>& b, std::vector<float>* c) {
  bench::Backend& backend = *backend_;
  PARITY_RETURN_IF_ERROR(backend.Copy(a_.get(), MemoryKind::kDevice, a.data(),
                                      MemoryKind::kHostPageable,
                                      static_cast<std::size_t>(m * k) * sizeof(float)));
  PARITY_RETURN_IF_ERROR(backend.Copy(b_.get(), MemoryKind::kDevice, b.data(),
                                      MemoryKind::kHostPageable,
                                      static_cast<std::size_t>(k * n) * sizeof(float)));
  PARITY_RETURN_IF_ERROR(backend.Gemm(DType::kFloat32, bench::GemmMath::kNative, m, n, k, a_.get(),
                                      b_.get(), c_.get()));
  c->resize(static_cast<std::size_t>(m * n));
  PARITY_RETURN_IF_ERROR(backend.Copy(c->data(), MemoryKind::kHostPageable, c_.get(),
                                      MemoryKind::kDevice, c->size() * sizeof(float)));
  return backend.Synchronize();
}

Result<StepResult> Train::Step(int64_t step) {
  if (!started_) return Status::Internal("train: Step before a successful Start");
  const int64_t nb = batch_, ni = inputs_, nh = hidden_, no = outputs_;
  const std::vector<float> x = Values(seed_ + kDataSeedOffset, kSaltData,
                                      static_cast<uint64_t>(step) * static_cast<uint64_t>(nb * ni),
                                      static_cast<std::size_t>(nb * ni), 1.0);
  std::vector<float> t, pre, y;
  PARITY_RETURN_IF_ERROR(Gemm(nb, no, ni, x, teacher_, &t));

  // Forward.
  PARITY_RETURN_IF_ERROR(Gemm(nb, nh, ni, x, w1_, &pre));
  std::vector<float> h(pre.size());
  for (int64_t r = 0; r < nb; ++r) {
    for (int64_t j = 0; j < nh; ++j) {
      float& p = pre[r * nh + j];
      p += b1_[j];
      h[r * nh + j] = p > 0.0f ? p : 0.0f;
    }
  }
  PARITY_RETURN_IF_ERROR(Gemm(nb, no, nh, h, w2_, &y));
  const float count = static_cast<float>(nb * no);
  float sum = 0.0f;
  std::vector<float> dy(y.size());
  for (int64_t r = 0; r < nb; ++r) {
    for (int64_t o = 0; o < no; ++o) {
      const std::size_t e = static_cast<std::size_t>(r * no + o);
      const float d = (y[e] + b2_[o]) - t[e];
      sum += d * d;
      dy[e] = d;
    }
  }
  StepResult result;
  result.loss = static_cast<double>(sum / count);
  result.work = static_cast<double>(nb);

  // Backward: d loss / dy = 2(y - t) / (batch·outputs).
  const float scale = 2.0f / count;
  for (float& d : dy) d *= scale;
  std::vector<float> transposed, dw2, dh, dw1;
  Transpose(h, nb, nh, &transposed);
  PARITY_RETURN_IF_ERROR(Gemm(nh, no, nb, transposed, dy, &dw2));
  const std::vector<float> db2 = ColumnSums(dy, nb, no);
  Transpose(w2_, nh, no, &transposed);
  PARITY_RETURN_IF_ERROR(Gemm(nb, nh, no, dy, transposed, &dh));
  for (std::size_t e = 0; e < dh.size(); ++e) {
    if (!(pre[e] > 0.0f)) dh[e] = 0.0f;
  }
  Transpose(x, nb, ni, &transposed);
  PARITY_RETURN_IF_ERROR(Gemm(ni, nh, nb, transposed, dh, &dw1));
  const std::vector<float> db1 = ColumnSums(dh, nb, nh);

  // SGD.
  Descend(&w1_, dw1, lr_);
  Descend(&b1_, db1, lr_);
  Descend(&w2_, dw2, lr_);
  Descend(&b2_, db2, lr_);
  last_step_ = step;
  return result;
}

Result<std::string> Train::Save() {
  if (!started_) return Status::Internal("train: Save before a successful Start");
  const Json header = {
      {"workload", kName},
      {"step", last_step_},
      {"params", params_},
      {"shape", {{"inputs", inputs_}, {"hidden", hidden_}, {"outputs", outputs_}}}};
  std::string payload;
  payload.reserve((w1_.size() + b1_.size() + w2_.size() + b2_.size()) * 4);
  for (const std::vector<float>* v : {&w1_, &b1_, &w2_, &b2_}) {
    for (float f : *v) {
      const uint32_t bits = std::bit_cast<uint32_t>(f);
      for (int i = 0; i < 4; ++i) payload.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
    }
  }
  return internal::EncodeState(header, payload);
}

}  // namespace

std::unique_ptr<StressWorkload> MakeTrain() { return std::make_unique<Train>(); }

}  // namespace parity::stress
