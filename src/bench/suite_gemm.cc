// SPDX-License-Identifier: Apache-2.0
// The gemm suite: square C = A·B per dtype (float64, float32, tf32, float16, bfloat16) and
// order, GFLOP/s = 2n³/t, validated against a float64 product on sampled rows and columns with
// `parity compare`'s `auto` bound.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "bench/gemm_check.h"
#include "bench/suite.h"
#include "core/convert.h"
#include "core/float_format.h"

namespace parity::bench {
namespace {

// Orders and repetitions: fixed per order, so results from two machines share their params.
struct GemmSize {
  int64_t n;
  int reps;
  bool full_only;
};
constexpr GemmSize kSizes[] = {
    {256, 20, false}, {512, 20, true}, {1024, 10, false}, {2048, 5, false}, {4096, 3, true},
};
constexpr double kWarmupSeconds = 0.25;
// Each sample queues enough GEMMs (at most kMaxHeldCalls) to last about this long on the
// device, so the events' resolution (about 0.5 us) and the gaps between kernels the device
// itself leaves stay far below 1% of it.
constexpr double kTargetSampleSeconds = 2e-3;
// Outputs are handed to SuiteOptions::gemm_output up to this order (4 MiB of float32 each).
constexpr int64_t kMaxKeptOrder = 1024;

struct GemmVariant {
  DType dtype;  // storage of A, B and C
  GemmMath math;
};
constexpr GemmVariant kVariants[] = {
    {DType::kFloat64, GemmMath::kNative},  {DType::kFloat32, GemmMath::kNative},
    {DType::kFloat32, GemmMath::kTf32},    {DType::kFloat16, GemmMath::kNative},
    {DType::kBFloat16, GemmMath::kNative},
};

// Host copies of A and B (as the dtype's values, widened to double) and their device bits.
struct Operands {
  std::vector<double> a, b;  // n×n, row-major, exactly the values on the device
  std::vector<std::byte> a_bits, b_bits;
};

Operands MakeOperands(DType dtype, int64_t n, uint64_t seed) {
  Operands op;
  const std::size_t count = static_cast<std::size_t>(n * n);
  const std::size_t item = ItemSize(dtype);
  for (auto [values, bits, salt] :
       {std::tuple{&op.a, &op.a_bits, uint64_t{1}}, std::tuple{&op.b, &op.b_bits, uint64_t{2}}}) {
    values->resize(count);
    bits->resize(count * item);
    for (std::size_t i = 0; i < count; ++i) {
      const double x = GemmInputValue(seed, salt, i);
      std::byte* dst = bits->data() + i * item;
      if (dtype == DType::kFloat64) {
        std::memcpy(dst, &x, 8);
        (*values)[i] = x;
      } else if (dtype == DType::kFloat32) {
        const float f = static_cast<float>(x);
        std::memcpy(dst, &f, 4);
        (*values)[i] = f;
      } else if (dtype == DType::kFloat16) {
        const uint16_t h = DoubleToHalf(x);
        std::memcpy(dst, &h, 2);
        (*values)[i] = HalfToFloat(h);
      } else {
        const uint16_t h = DoubleToBFloat16(x);
        std::memcpy(dst, &h, 2);
        (*values)[i] = BFloat16ToFloat(h);
      }
    }
  }
  return op;
}

Result<std::vector<BenchResult>> RunOne(Backend& backend, const SuiteOptions& options,
                                        const GemmVariant& variant, const GemmSize& size) {
  const DType dtype = variant.dtype;
  const int64_t n = size.n;
  const int reps = options.reps.value_or(size.reps);
  const std::string dtype_name = GemmLabel(dtype, variant.math);
  const Json params = {{"size", n}, {"m", n}, {"n", n}, {"k", n}, {"reps", reps}};
  const std::size_t bytes = static_cast<std::size_t>(n * n) * ItemSize(dtype);
  auto skip = [&](std::string reason) {
    return std::vector<BenchResult>{
        Skipped("gemm", dtype_name, params, "GFLOP/s", std::move(reason))};
  };
  DeviceBuffer a, b, c;
  for (DeviceBuffer* buffer : {&a, &b, &c}) {
    Result<DeviceBuffer> allocated = DeviceBuffer::Allocate(backend, bytes, MemoryKind::kDevice);
    if (!allocated.ok()) {
      if (allocated.status().code() == StatusCode::kUnavailable) {
        return skip(allocated.status().message());
      }
      return allocated.status();
    }
    *buffer = std::move(allocated).value();
  }
  const Operands op = MakeOperands(dtype, n, options.seed);
  PARITY_RETURN_IF_ERROR(backend.Copy(a.get(), MemoryKind::kDevice, op.a_bits.data(),
                                      MemoryKind::kHostPageable, bytes));
  PARITY_RETURN_IF_ERROR(backend.Copy(b.get(), MemoryKind::kDevice, op.b_bits.data(),
                                      MemoryKind::kHostPageable, bytes));
  PARITY_RETURN_IF_ERROR(backend.Synchronize());

  BenchResult r;
  r.benchmark = "gemm";
  r.dtype = dtype_name;
  r.params = params;
  r.unit = "GFLOP/s";
  r.implementation = backend.GemmImplementation(dtype, variant.math);
  const double flops =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  double fastest = std::numeric_limits<double>::infinity();
  // Each sample holds the device's queue until its `calls` GEMMs are queued (Queuing::kHeld),
  // so the host's work (selecting the device, the library's host code) is not counted, and
  // divides by `calls` (nccl-tests' loop). The first call runs unheld: it initialises the
  // library and loads its kernels. Then warm-up samples (library workspaces, page faults,
  // clocks ramping up, the spinning threads another library left behind) for at least
  // kWarmupSeconds, each re-deriving `calls` from the time per GEMM so far; then the timed ones.
  auto timed = [&](int calls, Queuing queuing) {
    return backend.Time(
        [&]() -> Status {
          for (int i = 0; i < calls; ++i) {
            PARITY_RETURN_IF_ERROR(
                backend.Gemm(dtype, variant.math, n, n, n, a.get(), b.get(), c.get()));
          }
          return Status::Ok();
        },
        queuing);
  };
  int calls = 1;
  double warm = 0.0;
  for (int rep = -1; rep < reps;) {
    Result<double> t = timed(rep < 0 ? 1 : calls, rep < 0 ? Queuing::kDirect : Queuing::kHeld);
    if (!t.ok()) {
      if (t.status().code() == StatusCode::kUnavailable) return skip(t.status().message());
      return t.status();
    }
    if (rep < 0) {
      rep = 0;
      continue;
    }
    const double per_call = *t / calls;
    if (warm < kWarmupSeconds) {
      warm += *t;
      // A millionth of a call less, so the events' rounding doesn't add one.
      calls = static_cast<int>(std::clamp(std::ceil(kTargetSampleSeconds / per_call - 1e-6), 1.0,
                                          double{kMaxHeldCalls}));
      continue;
    }
    ++rep;
    r.samples.push_back(flops / per_call / 1e9);
    fastest = std::min(fastest, per_call);
  }
  r.extra["calls_per_sample"] = calls;
  r.best = flops / fastest / 1e9;

  // Copy back the sampled rows of C and check the sampled columns in them.
  const GemmSample sample = SampleRowsAndColumns(n, options.seed);
  std::vector<std::byte> row(static_cast<std::size_t>(n) * ItemSize(dtype));
  std::vector<double> c_rows;
  c_rows.reserve(sample.rows.size() * sample.columns.size());
  for (int64_t i : sample.rows) {
    PARITY_RETURN_IF_ERROR(backend.Copy(
        row.data(), MemoryKind::kHostPageable,
        static_cast<const std::byte*>(c.get()) + static_cast<std::size_t>(i) * row.size(),
        MemoryKind::kDevice, row.size()));
    PARITY_RETURN_IF_ERROR(backend.Synchronize());
    for (int64_t j : sample.columns) {
      c_rows.push_back(ElementToFloat64(dtype, row.data() + j * ItemSize(dtype)));
    }
  }
  const GemmCheck check = CheckGemmSample(dtype, variant.math, n, op.a, op.b, sample, c_rows);
  r.validation = check.ToJson();
  if (!check.ok()) {
    r.outcome = Outcome::kInvalid;
    r.reason = check.Summary();
  }
  if (options.gemm_output && n <= kMaxKeptOrder) {
    GemmOutput out;
    out.label = dtype_name;
    out.dtype = dtype;
    out.n = n;
    out.implementation = r.implementation;
    out.a = op.a_bits;
    out.b = op.b_bits;
    out.c.resize(bytes);
    PARITY_RETURN_IF_ERROR(
        backend.Copy(out.c.data(), MemoryKind::kHostPageable, c.get(), MemoryKind::kDevice, bytes));
    PARITY_RETURN_IF_ERROR(backend.Synchronize());
    PARITY_RETURN_IF_ERROR(options.gemm_output(out));
  }
  return std::vector<BenchResult>{std::move(r)};
}

}  // namespace

Result<std::vector<BenchResult>> RunGemmSuite(Backend& backend, const SuiteOptions& options) {
  std::vector<BenchResult> all;
  for (const GemmVariant& variant : kVariants) {
    const std::string label = GemmLabel(variant.dtype, variant.math);
    if (!options.WantsDType(label)) continue;
    for (const GemmSize& size : kSizes) {
      if (size.full_only && !options.full) continue;
      if (options.progress) options.progress(fmt::format("gemm {} n={}", label, size.n));
      PARITY_ASSIGN_OR_RETURN(auto results, RunOne(backend, options, variant, size));
      all.insert(all.end(), results.begin(), results.end());
    }
  }
  return all;
}

}  // namespace parity::bench
