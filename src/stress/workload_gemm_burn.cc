// SPDX-License-Identifier: Apache-2.0
// gemm-burn, in the manner of gpu-burn and DCGM's diagnostic: the same C = A·B every step, each
// product copied back whole and compared with the first one entry by entry, and the sampled
// entries of bench's gemm check compared with a float64 product.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "bench/gemm_check.h"
#include "bench/suite.h"
#include "core/convert.h"
#include "core/error_bound.h"
#include "core/float_format.h"
#include "stress/workload_builtin.h"

namespace parity::stress {
namespace {

using bench::DeviceBuffer;
using bench::MemoryKind;

constexpr std::string_view kName = "gemm-burn";
constexpr std::array<std::string_view, 4> kParams = {"n", "dtype", "math", "seed"};
constexpr std::array<std::string_view, 4> kDTypes = {"float32", "float64", "float16", "bfloat16"};
constexpr std::array<std::string_view, 2> kMaths = {"native", "tf32"};
constexpr int64_t kMinN = 16, kMaxN = 32768;
constexpr int64_t kMaxSeed = int64_t{1} << 53;
// Elements of C copied back and checked at a time.
constexpr std::size_t kChunkElements = std::size_t{1} << 20;

// `x` rounded to `dtype`, written as its bits at `out`; returns the rounded value.
double StoreAs(DType dtype, double x, std::byte* out) {
  switch (dtype) {
    case DType::kFloat64:
      std::memcpy(out, &x, 8);
      return x;
    case DType::kFloat16: {
      const uint16_t h = DoubleToHalf(x);
      std::memcpy(out, &h, 2);
      return HalfToFloat(h);
    }
    case DType::kBFloat16: {
      const uint16_t h = DoubleToBFloat16(x);
      std::memcpy(out, &h, 2);
      return BFloat16ToFloat(h);
    }
    default: {
      const float f = static_cast<float>(x);
      std::memcpy(out, &f, 4);
      return f;
    }
  }
}

class GemmBurn final : public StressWorkload {
 public:
  std::string_view name() const override { return kName; }
  std::string_view work_unit() const override { return "GFLOP"; }

  Status Start(bench::Backend& backend, int device, const Params& params,
               std::string_view state) override {
    // A start that fails holds no device memory.
    Status status = Begin(backend, device, params, state);
    if (!status.ok()) Reset();
    return status;
  }
  Result<StepResult> Step(int64_t step) override;
  Result<std::string> Save() override;
  Status PlantBitFlip(uint64_t seed) override {
    plant_seed_ = seed;
    return Status::Ok();
  }
  std::size_t bytes_in_use() const override { return bytes_in_use_; }

 private:
  Status Begin(bench::Backend& backend, int device, const Params& params, std::string_view state);
  // Whether `got` against the first result's `first` (bitwise different) is corruption.
  static bool Corrupt(double first, double got, double bound) {
    if (!std::isfinite(got) || !std::isfinite(first)) return true;
    return std::abs(got - first) > bound;
  }

  /// The largest |c - c0| that rounding explains for entry (i, j) between two correct
  /// products, c0 being the first one. Each correct product is within CheckGemmSample's
  /// model of the exact one, growth·‖a_i∘b_j‖₂ + (growth + 2·u_storage)·|ref| with growth =
  /// λ·√n·u (λ = 6), so two of them are within twice that of each other. Here ‖a_i∘b_j‖₂ is
  /// bounded by min(‖a_i‖₂·‖b_j‖∞, ‖a_i‖∞·‖b_j‖₂) (norms kept from Start, so the bound costs
  /// O(1) per entry) and |ref| by |c0| (they differ by the bound's own size, a second-order
  /// term). u is the summation's unit roundoff: float32's for float32, tf32 (whose operand
  /// rounding is a function of the inputs, the same in every run), float16 and bfloat16
  /// (which accumulate in float32), float64's for float64. For uniform [-1, 1) inputs that is
  /// about 6e-4 at n = 1024 in float32, where entries are typically 10 in size: two correct
  /// GEMMs stay far inside it, while a flipped exponent bit (a factor of 2 or more) or one of
  /// the three leading fraction bits (a sixteenth of the value or more) lands outside it for
  /// any entry not within a few bounds of zero. (The drill checks its flip against this bound
  /// and moves to another bit or entry when it would not; in practice it never has to.)
  double RepeatBound(int64_t i, int64_t j, double first) const {
    const double norm = std::min(a_l2_[i] * b_inf_[j], a_inf_[i] * b_l2_[j]);
    return 2.0 * (growth_ * norm + (growth_ + 2.0 * u_storage_) * std::abs(first));
  }

  // Frees everything and forgets the last start.
  void Reset() {
    a_ = DeviceBuffer();
    b_ = DeviceBuffer();
    c_ = DeviceBuffer();
    bytes_in_use_ = 0;
    first_.clear();
    first_.shrink_to_fit();
    started_ = false;
  }

  bench::Backend* backend_ = nullptr;
  int device_ = 0;
  int64_t n_ = 0;
  DType dtype_ = DType::kFloat32;
  bench::GemmMath math_ = bench::GemmMath::kNative;
  uint64_t seed_ = 1;
  Json params_ = Json::object();
  bool started_ = false;

  DeviceBuffer a_, b_, c_;
  std::size_t bytes_in_use_ = 0;
  std::vector<std::byte> first_;  // the first product, as the device stored it
  uint64_t first_hash_ = 0;
  // Norms of A's rows and B's columns, for RepeatBound.
  std::vector<double> a_l2_, a_inf_, b_l2_, b_inf_;
  double growth_ = 0.0, u_storage_ = 0.0;
  // The float64 check: sampled rows × columns, their float64 products and bounds.
  bench::GemmSample sample_;
  std::vector<int64_t> sample_slot_of_row_;  // row -> index in sample_.rows, or -1
  std::vector<double> sample_ref_, sample_bound_;

  int64_t last_step_ = 0;
  int64_t pending_nondeterministic_ = 0;
  std::optional<uint64_t> plant_seed_;
};

Status GemmBurn::Begin(bench::Backend& backend, int device, const Params& params,
                       std::string_view state) {
  Reset();
  PARITY_ASSIGN_OR_RETURN(internal::ParamReader reader,
                          internal::ParamReader::Make(kName, params, kParams));
  // GPUs get a larger default: a 1024² product takes them microseconds, less than its check.
  const int64_t default_n = backend.name() == "cpu" ? 1024 : 4096;
  PARITY_ASSIGN_OR_RETURN(const int64_t n, reader.Int("n", default_n, kMinN, kMaxN));
  PARITY_ASSIGN_OR_RETURN(const std::string dtype_name, reader.Choice("dtype", "float32", kDTypes));
  PARITY_ASSIGN_OR_RETURN(const std::string math_name, reader.Choice("math", "native", kMaths));
  PARITY_ASSIGN_OR_RETURN(const int64_t seed, reader.Int("seed", 1, 0, kMaxSeed));
  if (math_name == "tf32" && dtype_name != "float32") {
    return Status::Invalid(
        "", fmt::format("workload {}: math tf32 needs dtype float32, not {}", kName, dtype_name));
  }
  backend_ = &backend;
  device_ = device;
  n_ = n;
  dtype_ = *DTypeFromName(dtype_name);
  math_ = math_name == "tf32" ? bench::GemmMath::kTf32 : bench::GemmMath::kNative;
  seed_ = static_cast<uint64_t>(seed);
  params_ = Json{{"n", n}, {"dtype", dtype_name}, {"math", math_name}, {"seed", seed}};
  last_step_ = 0;
  pending_nondeterministic_ = 0;

  std::optional<uint64_t> saved_hash;
  bool same_params = false;
  if (!state.empty()) {
    PARITY_ASSIGN_OR_RETURN(internal::DecodedState saved, internal::DecodeState(state, kName));
    const auto hash = saved.header.find("first_result_fnv1a");
    if (hash == saved.header.end() || !hash->is_number_unsigned()) {
      return Status::Invalid("",
                             fmt::format("workload {}: state has no first_result_fnv1a", kName));
    }
    saved_hash = hash->get<uint64_t>();
    const auto saved_params = saved.header.find("params");
    same_params = saved_params != saved.header.end() && *saved_params == params_;
    last_step_ = saved.step;
  }

  // The model constants of bench's float64 check (an empty sample checks nothing).
  const bench::GemmCheck model = bench::CheckGemmSample(dtype_, math_, n, {}, {}, {}, {});
  u_storage_ = model.u_storage;
  const double u_sum = dtype_ == DType::kFloat64 ? model.u_compute : std::ldexp(1.0, -24);
  growth_ = DotProductGrowth(n, u_sum, model.lambda);

  const std::size_t item = ItemSize(dtype_);
  const std::size_t count = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  const std::size_t bytes = count * item;
  for (DeviceBuffer* buffer : {&a_, &b_, &c_}) {
    PARITY_ASSIGN_OR_RETURN(*buffer, DeviceBuffer::Allocate(backend, bytes, MemoryKind::kDevice));
    bytes_in_use_ += bytes;
  }

  // A and B, generated and uploaded a block of rows at a time; their norms and the sampled
  // rows of A and columns of B (as the dtype's values) kept.
  sample_ = bench::SampleRowsAndColumns(n, seed_);
  sample_slot_of_row_.assign(static_cast<std::size_t>(n), -1);
  for (std::size_t r = 0; r < sample_.rows.size(); ++r) {
    sample_slot_of_row_[static_cast<std::size_t>(sample_.rows[r])] = static_cast<int64_t>(r);
  }
  std::vector<int64_t> sample_slot_of_column(static_cast<std::size_t>(n), -1);
  for (std::size_t c = 0; c < sample_.columns.size(); ++c) {
    sample_slot_of_column[static_cast<std::size_t>(sample_.columns[c])] = static_cast<int64_t>(c);
  }
  const std::size_t un = static_cast<std::size_t>(n);
  std::vector<double> a_rows(sample_.rows.size() * un), b_columns(sample_.columns.size() * un);
  a_l2_.assign(un, 0.0);
  a_inf_.assign(un, 0.0);
  b_l2_.assign(un, 0.0);
  b_inf_.assign(un, 0.0);
  const int64_t rows_per_chunk = std::max<int64_t>(1, static_cast<int64_t>(kChunkElements) / n);
  std::vector<std::byte> bits(static_cast<std::size_t>(std::min(rows_per_chunk, n)) * un * item);
  for (int matrix = 0; matrix < 2; ++matrix) {
    void* device_matrix = matrix == 0 ? a_.get() : b_.get();
    for (int64_t r0 = 0; r0 < n; r0 += rows_per_chunk) {
      const int64_t r1 = std::min(n, r0 + rows_per_chunk);
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t k = 0; k < n; ++k) {
          const std::size_t index = static_cast<std::size_t>(r * n + k);
          const double v = StoreAs(dtype_, bench::GemmInputValue(seed_, matrix + 1, index),
                                   bits.data() + (index - static_cast<std::size_t>(r0 * n)) * item);
          if (matrix == 0) {
            a_l2_[r] += v * v;
            a_inf_[r] = std::max(a_inf_[r], std::abs(v));
            if (const int64_t slot = sample_slot_of_row_[r]; slot >= 0) {
              a_rows[static_cast<std::size_t>(slot) * un + k] = v;
            }
          } else {
            b_l2_[k] += v * v;
            b_inf_[k] = std::max(b_inf_[k], std::abs(v));
            if (const int64_t slot = sample_slot_of_column[k]; slot >= 0) {
              b_columns[static_cast<std::size_t>(slot) * un + r] = v;
            }
          }
        }
      }
      const std::size_t chunk_bytes = static_cast<std::size_t>(r1 - r0) * un * item;
      PARITY_RETURN_IF_ERROR(backend.Copy(
          static_cast<std::byte*>(device_matrix) + static_cast<std::size_t>(r0) * un * item,
          MemoryKind::kDevice, bits.data(), MemoryKind::kHostPageable, chunk_bytes));
      PARITY_RETURN_IF_ERROR(backend.Synchronize());
    }
  }
  for (double& v : a_l2_) v = std::sqrt(v);
  for (double& v : b_l2_) v = std::sqrt(v);

  // The float64 products of the sampled entries and bench's bounds for them: the same for
  // every step, since A and B are.
  sample_ref_.clear();
  sample_bound_.clear();
  const double sample_growth = DotProductGrowth(n, model.u_compute, model.lambda);
  for (std::size_t r = 0; r < sample_.rows.size(); ++r) {
    for (std::size_t c = 0; c < sample_.columns.size(); ++c) {
      double ref = 0.0, norm2 = 0.0;
      for (std::size_t k = 0; k < un; ++k) {
        const double p = a_rows[r * un + k] * b_columns[c * un + k];
        ref += p;
        norm2 += p * p;
      }
      sample_ref_.push_back(ref);
      sample_bound_.push_back(sample_growth * std::sqrt(norm2) +
                              (sample_growth + 2.0 * model.u_storage) * std::abs(ref));
    }
  }

  // The first product: the reference of every step.
  PARITY_RETURN_IF_ERROR(backend.Gemm(dtype_, math_, n, n, n, a_.get(), b_.get(), c_.get()));
  PARITY_RETURN_IF_ERROR(backend.Synchronize());
  first_.resize(bytes);
  PARITY_RETURN_IF_ERROR(
      backend.Copy(first_.data(), MemoryKind::kHostPageable, c_.get(), MemoryKind::kDevice, bytes));
  PARITY_RETURN_IF_ERROR(backend.Synchronize());
  first_hash_ = internal::Fnv1a(first_);
  // A product that differs from the saved run's first one, on the same inputs: the library
  // (or the hardware under it) is not deterministic. The state keeps only a hash, so which
  // entries changed and how many is unknown; it counts as one.
  if (saved_hash && same_params && *saved_hash != first_hash_) pending_nondeterministic_ = 1;
  started_ = true;
  return Status::Ok();
}

Result<StepResult> GemmBurn::Step(int64_t step) {
  if (!started_) return Status::Internal("gemm-burn: Step before a successful Start");
  bench::Backend& backend = *backend_;
  const int64_t n = n_;
  const std::size_t un = static_cast<std::size_t>(n);
  const std::size_t item = ItemSize(dtype_);
  StepResult result;
  result.work =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / 1e9;
  result.nondeterministic = std::exchange(pending_nondeterministic_, 0);

  PARITY_RETURN_IF_ERROR(backend.Gemm(dtype_, math_, n, n, n, a_.get(), b_.get(), c_.get()));
  PARITY_RETURN_IF_ERROR(backend.Synchronize());

  // The drill's element: row and column from the seed (the column moves along the row until a
  // flip there is one the repeat check must report; in practice the first one is).
  std::optional<int64_t> plant_row, plant_column;
  std::vector<int> plant_bits;
  if (plant_seed_) {
    plant_row = static_cast<int64_t>(internal::Mix64(*plant_seed_) % un);
    plant_column = static_cast<int64_t>(internal::Mix64(*plant_seed_ ^ 0x5bd1e995ull) % un);
    plant_bits = internal::FlipCandidateBits(dtype_, *plant_seed_);
    plant_seed_.reset();
  }

  const auto report = [&](SdcEvent event) {
    // kMaxSdcEventsPerStep listed; the rest counted.
    if (result.sdc.size() < internal::kMaxSdcEventsPerStep) {
      result.sdc.push_back(std::move(event));
    } else {
      ++result.sdc_unlisted;
    }
  };

  const std::size_t sampled_columns = sample_.columns.size();
  std::vector<double> sample_got(sample_.rows.size() * sampled_columns, 0.0);
  std::vector<bool> sample_flagged(sample_got.size(), false);

  const int64_t rows_per_chunk = std::max<int64_t>(1, static_cast<int64_t>(kChunkElements) / n);
  const std::size_t chunk_capacity = static_cast<std::size_t>(std::min(rows_per_chunk, n)) * un;
  std::vector<std::byte> got_bits(chunk_capacity * item);
  std::vector<double> got(chunk_capacity), first(chunk_capacity);
  for (int64_t r0 = 0; r0 < n; r0 += rows_per_chunk) {
    const int64_t r1 = std::min(n, r0 + rows_per_chunk);
    const std::size_t elements = static_cast<std::size_t>(r1 - r0) * un;
    const std::size_t offset = static_cast<std::size_t>(r0) * un * item;
    PARITY_RETURN_IF_ERROR(backend.Copy(got_bits.data(), MemoryKind::kHostPageable,
                                        static_cast<const std::byte*>(c_.get()) + offset,
                                        MemoryKind::kDevice, elements * item));
    PARITY_RETURN_IF_ERROR(backend.Synchronize());
    const std::byte* first_bits = first_.data() + offset;
    const bool plant_here = plant_row && *plant_row >= r0 && *plant_row < r1;
    const bool identical = std::memcmp(got_bits.data(), first_bits, elements * item) == 0;
    bool has_sample = false;
    for (int64_t r = r0; r < r1 && !has_sample; ++r) has_sample = sample_slot_of_row_[r] >= 0;
    if (identical && !plant_here && !has_sample) continue;
    ConvertToFloat64(dtype_, got_bits.data(), std::span(got.data(), elements));
    ConvertToFloat64(dtype_, first_bits, std::span(first.data(), elements));

    if (plant_here) {
      const int64_t i = *plant_row;
      std::optional<std::pair<int64_t, int>> chosen;
      for (int64_t t = 0; t < n && !chosen; ++t) {
        const int64_t j = (*plant_column + t) % n;
        const std::size_t e = static_cast<std::size_t>((i - r0) * n + j);
        for (int bit : plant_bits) {
          std::array<std::byte, 8> flipped{};
          std::memcpy(flipped.data(), got_bits.data() + e * item, item);
          internal::FlipBit(flipped.data(), item, bit);
          const double value = ElementToFloat64(dtype_, flipped.data());
          if (Corrupt(first[e], value, RepeatBound(i, j, first[e]))) {
            chosen = std::pair{j, bit};
            break;
          }
        }
      }
      if (!chosen) chosen = std::pair{*plant_column, plant_bits.front()};
      const auto [j, bit] = *chosen;
      const std::size_t e = static_cast<std::size_t>((i - r0) * n + j);
      internal::FlipBit(got_bits.data() + e * item, item, bit);
      got[e] = ElementToFloat64(dtype_, got_bits.data() + e * item);
      result.planted = Json{{"array", "C"}, {"position", {i, j}}, {"bit", bit}};
    }

    for (int64_t r = r0; r < r1; ++r) {
      const int64_t slot = sample_slot_of_row_[r];
      const std::size_t row_at = static_cast<std::size_t>(r - r0) * un;
      if (slot >= 0) {
        for (std::size_t c = 0; c < sampled_columns; ++c) {
          sample_got[static_cast<std::size_t>(slot) * sampled_columns + c] =
              got[row_at + static_cast<std::size_t>(sample_.columns[c])];
        }
      }
      if (identical && !(plant_here && r == *plant_row)) continue;
      for (int64_t j = 0; j < n; ++j) {
        const std::size_t e = row_at + static_cast<std::size_t>(j);
        if (std::memcmp(got_bits.data() + e * item, first_bits + e * item, item) == 0) continue;
        const double bound = RepeatBound(r, j, first[e]);
        if (!Corrupt(first[e], got[e], bound)) {
          ++result.nondeterministic;
          continue;
        }
        if (slot >= 0) {
          const auto column = std::find(sample_.columns.begin(), sample_.columns.end(), j);
          if (column != sample_.columns.end()) {
            sample_flagged[static_cast<std::size_t>(slot) * sampled_columns +
                           static_cast<std::size_t>(column - sample_.columns.begin())] = true;
          }
        }
        report(SdcEvent{device_, step, "repeat", "C", {r, j}, first[e], got[e], bound});
      }
    }
  }

  // The sampled entries against float64, but for those the repeat check already reported
  // (one event per entry: the repeat check's, which compares with what this device computed).
  for (std::size_t r = 0; r < sample_.rows.size(); ++r) {
    for (std::size_t c = 0; c < sampled_columns; ++c) {
      const std::size_t s = r * sampled_columns + c;
      if (sample_flagged[s]) continue;
      const double value = sample_got[s];
      if (std::isfinite(value) && std::abs(value - sample_ref_[s]) <= sample_bound_[s]) continue;
      report(SdcEvent{device_,
                      step,
                      "float64",
                      "C",
                      {sample_.rows[r], sample_.columns[c]},
                      sample_ref_[s],
                      value,
                      sample_bound_[s]});
    }
  }
  last_step_ = step;
  return result;
}

Result<std::string> GemmBurn::Save() {
  if (!started_) return Status::Internal("gemm-burn: Save before a successful Start");
  const Json header = {{"workload", kName},
                       {"step", last_step_},
                       {"params", params_},
                       {"first_result_fnv1a", first_hash_}};
  return internal::EncodeState(header, "");
}

}  // namespace

std::unique_ptr<StressWorkload> MakeGemmBurn() { return std::make_unique<GemmBurn>(); }

}  // namespace parity::stress
