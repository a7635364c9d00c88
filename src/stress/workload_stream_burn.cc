// SPDX-License-Identifier: Apache-2.0
// stream-burn: BabelStream's classic kernels (copy, mul, add, triad; dot, which writes no
// array, left out) once per step on a, b and c in device memory, then every element of the
// three arrays copied back and checked against BabelStream's expected value.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "bench/stream_model.h"
#include "bench/suite.h"
#include "stress/workload_builtin.h"

namespace parity::stress {
namespace {

using bench::DeviceBuffer;
using bench::MemoryKind;

constexpr std::string_view kName = "stream-burn";
constexpr std::array<std::string_view, 3> kParams = {"n", "dtype", "seed"};
constexpr std::array<std::string_view, 2> kDTypes = {"float64", "float32"};
constexpr int64_t kDefaultN = int64_t{1} << 22;
constexpr int64_t kMinN = 1024, kMaxN = int64_t{1} << 34;
constexpr int64_t kMaxSeed = int64_t{1} << 53;
/// The arrays are set to BabelStream's values after (step - 1) mod kRefillEvery repetitions
/// before the steps where that is 0 (and before the first step after Start), so that they
/// never shrink past 0.96^64 of their start values (a shrinks by 0.96 per repetition; left
/// alone, float32 would reach subnormals after ~2000 steps) and a resumed run fills them
/// with what an uninterrupted one holds there.
constexpr int64_t kRefillEvery = 64;
// Elements copied back and checked at a time.
constexpr std::size_t kChunkElements = std::size_t{1} << 20;

class StreamBurn final : public StressWorkload {
 public:
  StreamBurn() {
    for (const bench::StreamKernelInfo& k : bench::ClassicStreamKernels()) {
      if (k.op) kernels_.push_back(k);
    }
  }

  std::string_view name() const override { return kName; }
  std::string_view work_unit() const override { return "GB"; }

  Status Start(bench::Backend& backend, int device, const Params& params,
               std::string_view state) override {
    // A start that fails holds no device memory.
    Status status = Begin(backend, device, params, state);
    if (!status.ok()) Reset();
    return status;
  }
  Result<StepResult> Step(int64_t step) override {
    if (!started_) return Status::Internal("stream-burn: Step before a successful Start");
    return dtype_ == DType::kFloat64 ? StepAs<double>(step) : StepAs<float>(step);
  }
  Result<std::string> Save() override;
  Status PlantBitFlip(uint64_t seed) override {
    plant_seed_ = seed;
    return Status::Ok();
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
  template <typename T>
  Result<StepResult> StepAs(int64_t step);

  std::vector<bench::StreamKernelInfo> kernels_;
  bench::Backend* backend_ = nullptr;
  int device_ = 0;
  std::size_t n_ = 0;
  DType dtype_ = DType::kFloat64;
  Json params_ = Json::object();
  bool started_ = false;
  bool filled_ = false;
  DeviceBuffer a_, b_, c_;
  std::size_t bytes_in_use_ = 0;
  int64_t last_step_ = 0;
  std::optional<uint64_t> plant_seed_;
};

Status StreamBurn::Begin(bench::Backend& backend, int device, const Params& params,
                         std::string_view state) {
  Reset();
  PARITY_ASSIGN_OR_RETURN(internal::ParamReader reader,
                          internal::ParamReader::Make(kName, params, kParams));
  PARITY_ASSIGN_OR_RETURN(const int64_t n, reader.Int("n", kDefaultN, kMinN, kMaxN));
  PARITY_ASSIGN_OR_RETURN(const std::string dtype_name, reader.Choice("dtype", "float64", kDTypes));
  // Accepted so that a matrix can sweep one seed over every workload; the arrays' values
  // are BabelStream's, which no seed changes.
  PARITY_ASSIGN_OR_RETURN(const int64_t seed, reader.Int("seed", 1, 0, kMaxSeed));
  last_step_ = 0;
  if (!state.empty()) {
    PARITY_ASSIGN_OR_RETURN(internal::DecodedState saved, internal::DecodeState(state, kName));
    last_step_ = saved.step;
  }
  backend_ = &backend;
  device_ = device;
  n_ = static_cast<std::size_t>(n);
  dtype_ = *DTypeFromName(dtype_name);
  params_ = Json{{"n", n}, {"dtype", dtype_name}, {"seed", seed}};
  const std::size_t bytes = n_ * ItemSize(dtype_);
  for (DeviceBuffer* buffer : {&a_, &b_, &c_}) {
    PARITY_ASSIGN_OR_RETURN(*buffer, DeviceBuffer::Allocate(backend, bytes, MemoryKind::kDevice));
    bytes_in_use_ += bytes;
  }
  filled_ = false;
  started_ = true;
  return Status::Ok();
}

template <typename T>
Result<StepResult> StreamBurn::StepAs(int64_t step) {
  bench::Backend& backend = *backend_;
  const std::size_t n = n_;
  const int done = static_cast<int>(((step - 1) % kRefillEvery + kRefillEvery) % kRefillEvery);
  if (!filled_ || done == 0) {
    const auto start = bench::EvolveStreamGold<T>(kernels_, done, n);
    PARITY_RETURN_IF_ERROR(backend.Fill(a_.get(), dtype_, n, static_cast<double>(start.a)));
    PARITY_RETURN_IF_ERROR(backend.Fill(b_.get(), dtype_, n, static_cast<double>(start.b)));
    PARITY_RETURN_IF_ERROR(backend.Fill(c_.get(), dtype_, n, static_cast<double>(start.c)));
    filled_ = true;
  }
  StepResult result;
  for (const bench::StreamKernelInfo& kernel : kernels_) {
    PARITY_RETURN_IF_ERROR(
        backend.Stream(*kernel.op, dtype_, a_.get(), b_.get(), c_.get(), n, bench::kStreamScalar));
    result.work += static_cast<double>(kernel.weight * sizeof(T) * n) / 1e9;
  }
  PARITY_RETURN_IF_ERROR(backend.Synchronize());

  // BabelStream's check_solution: the expected values evolved in T, each element within
  // mrel = 100·epsilon of them (bench's stream suite), and finite.
  const auto gold = bench::EvolveStreamGold<T>(kernels_, done + 1, n);
  const std::array<double, 3> expected = {static_cast<double>(gold.a), static_cast<double>(gold.b),
                                          static_cast<double>(gold.c)};
  const double mrel = 100.0 * std::numeric_limits<T>::epsilon();
  const auto wrong = [mrel](double is, double should) {
    return !std::isfinite(is) || !bench::StreamValueAgrees(is, should, mrel);
  };

  // The drill's element: array, index and bit from the seed.
  std::optional<std::pair<int, std::size_t>> plant;
  std::vector<int> plant_bits;
  if (plant_seed_) {
    plant = std::pair{static_cast<int>(internal::Mix64(*plant_seed_) % 3),
                      static_cast<std::size_t>(internal::Mix64(*plant_seed_ ^ 0x5bd1e995ull) % n)};
    plant_bits = internal::FlipCandidateBits(dtype_, *plant_seed_);
    plant_seed_.reset();
  }

  const std::array<const DeviceBuffer*, 3> arrays = {&a_, &b_, &c_};
  std::vector<T> host(std::min(n, kChunkElements));
  for (int array = 0; array < 3; ++array) {
    const std::string array_name(1, "abc"[array]);
    const double should = expected[array];
    for (std::size_t start = 0; start < n; start += kChunkElements) {
      const std::size_t count = std::min(kChunkElements, n - start);
      PARITY_RETURN_IF_ERROR(backend.Copy(host.data(), MemoryKind::kHostPageable,
                                          static_cast<const T*>(arrays[array]->get()) + start,
                                          MemoryKind::kDevice, count * sizeof(T)));
      PARITY_RETURN_IF_ERROR(backend.Synchronize());
      if (plant && plant->first == array && plant->second >= start &&
          plant->second < start + count) {
        T* element = &host[plant->second - start];
        int chosen = plant_bits.front();
        for (int bit : plant_bits) {
          T flipped = *element;
          internal::FlipBit(reinterpret_cast<std::byte*>(&flipped), sizeof(T), bit);
          if (wrong(static_cast<double>(flipped), should)) {
            chosen = bit;
            break;
          }
        }
        internal::FlipBit(reinterpret_cast<std::byte*>(element), sizeof(T), chosen);
        result.planted = Json{
            {"array", array_name}, {"position", Json::array({plant->second})}, {"bit", chosen}};
      }
      for (std::size_t i = 0; i < count; ++i) {
        const double is = static_cast<double>(host[i]);
        if (!wrong(is, should)) continue;
        // kMaxSdcEventsPerStep listed; the rest counted.
        if (result.sdc.size() >= internal::kMaxSdcEventsPerStep) {
          ++result.sdc_unlisted;
          continue;
        }
        result.sdc.push_back(SdcEvent{device_,
                                      step,
                                      "analytic",
                                      array_name,
                                      {static_cast<int64_t>(start + i)},
                                      should,
                                      is,
                                      std::max(std::abs(is), std::abs(should)) * mrel});
      }
    }
  }
  last_step_ = step;
  return result;
}

Result<std::string> StreamBurn::Save() {
  if (!started_) return Status::Internal("stream-burn: Save before a successful Start");
  return internal::EncodeState(Json{{"workload", kName}, {"step", last_step_}, {"params", params_}},
                               "");
}

}  // namespace

std::unique_ptr<StressWorkload> MakeStreamBurn() { return std::make_unique<StreamBurn>(); }

}  // namespace parity::stress
