// SPDX-License-Identifier: Apache-2.0
// The stream suite: BabelStream's kernels, initial values, byte counts, order and validation
// (UoB-HPC/BabelStream, src/benchmark.h, src/main.cpp check_solution, src/omp/OMPStream.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "bench/stream_model.h"
#include "bench/suite.h"

namespace parity::bench {
namespace {

constexpr std::size_t kDefaultN = std::size_t{1} << 25;
constexpr int kDefaultReps = 100;
// Elements copied back per validation step, so validating needs no second copy of the arrays.
constexpr std::size_t kValidateChunk = std::size_t{1} << 20;

struct Arrays {
  DeviceBuffer a, b, c;
};

// The index of every element whose value is not within `mrel` of `gold` (BabelStream's
// per-element test), counted, with the worst relative error and the first bad index.
struct ArrayCheck {
  std::size_t failures = 0;
  double max_rel_error = 0.0;
  std::optional<std::size_t> first_bad;
};

template <typename T>
Result<ArrayCheck> CheckArray(Backend& backend, const DeviceBuffer& array, std::size_t n, T gold,
                              double mrel) {
  ArrayCheck check;
  std::vector<T> host(std::min(n, kValidateChunk));
  for (std::size_t start = 0; start < n; start += kValidateChunk) {
    const std::size_t count = std::min(kValidateChunk, n - start);
    PARITY_RETURN_IF_ERROR(backend.Copy(host.data(), MemoryKind::kHostPageable,
                                        static_cast<const T*>(array.get()) + start,
                                        MemoryKind::kDevice, count * sizeof(T)));
    PARITY_RETURN_IF_ERROR(backend.Synchronize());
    for (std::size_t i = 0; i < count; ++i) {
      const double is = host[i];
      if (!StreamValueAgrees(is, static_cast<double>(gold), mrel)) {
        ++check.failures;
        if (!check.first_bad) check.first_bad = start + i;
      }
      const double scale = std::max(std::abs(is), std::abs(static_cast<double>(gold)));
      const double rel = scale == 0.0 ? 0.0 : std::abs(is - static_cast<double>(gold)) / scale;
      if (std::isnan(is)) {
        check.max_rel_error = std::numeric_limits<double>::infinity();
      } else {
        check.max_rel_error = std::max(check.max_rel_error, rel);
      }
    }
  }
  return check;
}

Json CheckJson(const ArrayCheck& check, double gold) {
  Json j = Json::object();
  j["expected"] = gold;
  j["failures"] = check.failures;
  SetNumber(j, "max_rel_error", check.max_rel_error);
  if (check.first_bad) j["first_bad_index"] = *check.first_bad;
  return j;
}

// One BabelStream run: arrays set to the start values, `kernels` run in order `reps` times,
// each call timed, then every element checked against the gold values.
template <typename T>
Result<std::vector<BenchResult>> RunPhase(Backend& backend, const SuiteOptions& options,
                                          DType dtype, Arrays& arrays,
                                          std::span<const StreamKernelInfo> kernels) {
  const std::size_t n = options.n.value_or(kDefaultN);
  const int reps = options.reps.value_or(kDefaultReps);
  const std::string dtype_name(Name(dtype));
  const Json params = {{"n", n}, {"reps", reps}};
  PARITY_RETURN_IF_ERROR(backend.Fill(arrays.a.get(), dtype, n, kStreamStartA));
  PARITY_RETURN_IF_ERROR(backend.Fill(arrays.b.get(), dtype, n, kStreamStartB));
  PARITY_RETURN_IF_ERROR(backend.Fill(arrays.c.get(), dtype, n, kStreamStartC));
  PARITY_RETURN_IF_ERROR(backend.Synchronize());

  std::vector<std::vector<double>> seconds(kernels.size());
  double last_sum = 0.0;
  for (int rep = 0; rep < reps; ++rep) {
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      const StreamKernelInfo& kernel = kernels[k];
      // The kernels are held (Queuing::kHeld: the host's launch is not counted) after the
      // first repetition, which warms up unheld and is dropped. Dot reads its block sums back
      // and adds them on the host, which BabelStream counts as part of dot: direct.
      const Queuing queuing = kernel.op && rep > 0 ? Queuing::kHeld : Queuing::kDirect;
      Result<double> t = backend.Time(
          [&]() -> Status {
            if (kernel.op) {
              return backend.Stream(*kernel.op, dtype, arrays.a.get(), arrays.b.get(),
                                    arrays.c.get(), n, kStreamScalar);
            }
            PARITY_ASSIGN_OR_RETURN(last_sum,
                                    backend.Dot(dtype, arrays.a.get(), arrays.b.get(), n));
            return Status::Ok();
          },
          queuing);
      if (!t.ok()) return t.status();
      seconds[k].push_back(*t);
    }
    if (options.progress && (rep + 1) % 25 == 0) {
      options.progress(fmt::format("stream {} {}: {}/{} repetitions", dtype_name,
                                   kernels.size() == 1 ? "nstream" : "classic", rep + 1, reps));
    }
  }

  // check_solution: gold values evolved in T through every kernel of every repetition.
  const StreamGold<T> gold = EvolveStreamGold<T>(kernels, reps, n);
  const double mrel = 100.0 * std::numeric_limits<T>::epsilon();
  const double dot_mrel = StreamDotTolerance(n, std::numeric_limits<T>::epsilon() / 2);
  PARITY_ASSIGN_OR_RETURN(ArrayCheck check_a, CheckArray<T>(backend, arrays.a, n, gold.a, mrel));
  PARITY_ASSIGN_OR_RETURN(ArrayCheck check_b, CheckArray<T>(backend, arrays.b, n, gold.b, mrel));
  PARITY_ASSIGN_OR_RETURN(ArrayCheck check_c, CheckArray<T>(backend, arrays.c, n, gold.c, mrel));
  const bool has_dot =
      std::any_of(kernels.begin(), kernels.end(), [](const StreamKernelInfo& k) { return !k.op; });
  const bool dot_ok = StreamValueAgrees(last_sum, static_cast<double>(gold.sum), dot_mrel);

  Json validation = {{"method",
                      "BabelStream check_solution: every element against the value "
                      "evolved through every repetition"},
                     {"mrel", mrel},
                     {"a", CheckJson(check_a, gold.a)},
                     {"b", CheckJson(check_b, gold.b)},
                     {"c", CheckJson(check_c, gold.c)}};
  if (has_dot) {
    validation["dot_mrel"] = dot_mrel;
    validation["dot_method"] =
        "|got - expected| <= max(|got|, |expected|) * dot_mrel, dot_mrel = lambda*sqrt(n)*u "
        "(the `auto` tolerance's bound on a length-n dot of same-signed terms, lambda = 6)";
    validation["dot"] = Json::object();
    SetNumber(validation["dot"], "expected", static_cast<double>(gold.sum));
    SetNumber(validation["dot"], "got", last_sum);
  }
  const std::array<const ArrayCheck*, 3> checks = {&check_a, &check_b, &check_c};

  std::vector<BenchResult> results;
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    const StreamKernelInfo& kernel = kernels[k];
    BenchResult r;
    r.benchmark = kernel.benchmark;
    r.dtype = dtype_name;
    r.params = params;
    r.unit = "GB/s";
    const double bytes = static_cast<double>(kernel.weight * sizeof(T) * n);
    // BabelStream drops the first repetition.
    double fastest = std::numeric_limits<double>::infinity();
    for (std::size_t i = 1; i < seconds[k].size(); ++i) {
      r.samples.push_back(bytes / seconds[k][i] / 1e9);
      fastest = std::min(fastest, seconds[k][i]);
    }
    r.best = bytes / fastest / 1e9;
    r.validation = validation;
    r.validation["bytes_per_repetition"] = bytes;
    // A wrong array fails the kernels that write it; a wrong sum fails dot.
    std::vector<std::string> wrong;
    if (kernel.op) {
      for (int array : StreamArraysWritten(*kernel.op)) {
        if (checks[array]->failures > 0) wrong.push_back(std::string(1, "abc"[array]));
      }
    } else if (!dot_ok) {
      wrong.push_back("the sum");
    }
    if (!wrong.empty()) {
      r.outcome = Outcome::kInvalid;
      r.reason =
          fmt::format("{} differs from BabelStream's expected value", fmt::join(wrong, ", "));
    }
    results.push_back(std::move(r));
  }
  return results;
}

template <typename T>
Result<std::vector<BenchResult>> RunOneDType(Backend& backend, const SuiteOptions& options,
                                             DType dtype) {
  const std::size_t n = options.n.value_or(kDefaultN);
  const int reps = options.reps.value_or(kDefaultReps);
  const std::string dtype_name(Name(dtype));
  const Json params = {{"n", n}, {"reps", reps}};
  std::vector<BenchResult> results;
  auto skip_all = [&](const std::string& reason) {
    std::vector<StreamKernelInfo> all(ClassicStreamKernels().begin(), ClassicStreamKernels().end());
    all.push_back(NstreamKernel());
    for (const StreamKernelInfo& k : all) {
      results.push_back(Skipped(std::string(k.benchmark), dtype_name, params, "GB/s", reason));
    }
    return results;
  };
  if (reps < 2) return skip_all("stream needs at least 2 repetitions (the first is dropped)");

  Arrays arrays;
  for (DeviceBuffer* buffer : {&arrays.a, &arrays.b, &arrays.c}) {
    Result<DeviceBuffer> allocated =
        DeviceBuffer::Allocate(backend, n * sizeof(T), MemoryKind::kDevice);
    if (!allocated.ok()) {
      if (allocated.status().code() == StatusCode::kUnavailable) {
        return skip_all(allocated.status().message());
      }
      return allocated.status();
    }
    *buffer = std::move(allocated).value();
  }
  // A kernel the device can't run here (no code for its architecture: kUnavailable) skips the
  // dtype's kernels with the reason; any other failure is an error.
  Result<std::vector<BenchResult>> classic =
      RunPhase<T>(backend, options, dtype, arrays, ClassicStreamKernels());
  Result<std::vector<BenchResult>> nstream =
      classic.ok() ? RunPhase<T>(backend, options, dtype, arrays, std::span(&NstreamKernel(), 1))
                   : classic.status();
  for (const Result<std::vector<BenchResult>>* phase : {&classic, &nstream}) {
    if (phase->ok()) continue;
    if (phase->status().code() == StatusCode::kUnavailable) {
      return skip_all(phase->status().message());
    }
    return phase->status();
  }
  results = std::move(classic).value();
  results.insert(results.end(), nstream->begin(), nstream->end());
  return results;
}

}  // namespace

Result<std::vector<BenchResult>> RunStreamSuite(Backend& backend, const SuiteOptions& options) {
  std::vector<BenchResult> all;
  for (const auto& [dtype, run] : {std::pair{DType::kFloat64, &RunOneDType<double>},
                                   std::pair{DType::kFloat32, &RunOneDType<float>}}) {
    if (!options.WantsDType(Name(dtype))) continue;
    PARITY_ASSIGN_OR_RETURN(auto results, run(backend, options, dtype));
    all.insert(all.end(), results.begin(), results.end());
  }
  return all;
}

}  // namespace parity::bench
