// SPDX-License-Identifier: Apache-2.0
// The rng suite: Philox4x32-10 uniform fill, GB/s of output, every sampled value checked bit for
// bit against parity's model of cuRAND's device state (rng/philox.h, tested against cuRAND).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "bench/suite.h"
#include "rng/philox.h"

namespace parity::bench {
namespace {

constexpr std::size_t kDefaultN = std::size_t{1} << 26;
constexpr int kDefaultReps = 20;
constexpr std::size_t kChecked = 1024;

}  // namespace

Result<std::vector<BenchResult>> RunRngSuite(Backend& backend, const SuiteOptions& options) {
  const std::size_t n = options.n.value_or(kDefaultN);
  const int reps = options.reps.value_or(kDefaultReps);
  BenchResult r;
  r.benchmark = "rng.philox_uniform";
  r.dtype = "float32";
  r.params = {{"n", n}, {"reps", reps}};
  r.unit = "GB/s";
  if (!options.WantsDType("float32")) return std::vector<BenchResult>{};
  if (n == 0) {
    return std::vector<BenchResult>{
        Skipped(r.benchmark, r.dtype, r.params, r.unit, "n = 0: nothing to generate")};
  }
  Result<DeviceBuffer> out =
      DeviceBuffer::Allocate(backend, n * sizeof(float), MemoryKind::kDevice);
  if (!out.ok()) {
    if (out.status().code() != StatusCode::kUnavailable) return out.status();
    return std::vector<BenchResult>{
        Skipped(r.benchmark, r.dtype, r.params, r.unit, out.status().message())};
  }
  float* values = static_cast<float*>(out->get());
  const double bytes = static_cast<double>(n) * sizeof(float);
  double fastest = std::numeric_limits<double>::infinity();
  for (int rep = 0; rep <= reps; ++rep) {
    // Repetition 0 warms up without holding the queue; the others are held (Queuing::kHeld),
    // so the host's launch is not counted.
    PARITY_ASSIGN_OR_RETURN(
        double t, backend.Time([&] { return backend.PhiloxUniform(values, n, options.seed, 0); },
                               rep == 0 ? Queuing::kDirect : Queuing::kHeld));
    if (rep == 0) continue;
    r.samples.push_back(bytes / t / 1e9);
    fastest = std::min(fastest, t);
  }
  r.best = bytes / fastest / 1e9;

  // The first and last blocks and positions spread over the rest, against curand_init(seed, 0,
  // i) followed by curand_uniform.
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < std::min<std::size_t>(n, 8); ++i) {
    positions.push_back(i);
    positions.push_back(n - 1 - i);
  }
  for (std::size_t j = 0; j < kChecked && n > 0; ++j) positions.push_back(j * 2654435761u % n);
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  std::size_t mismatches = 0;
  std::string first;
  for (std::size_t i : positions) {
    float got = 0.0f;
    PARITY_RETURN_IF_ERROR(backend.Copy(&got, MemoryKind::kHostPageable, values + i,
                                        MemoryKind::kDevice, sizeof(float)));
    PARITY_RETURN_IF_ERROR(backend.Synchronize());
    const float want = CurandPhilox(options.seed, 0, i).Uniform();
    if (std::memcmp(&got, &want, sizeof(float)) != 0) {
      if (mismatches++ == 0) {
        first = fmt::format("element {} is {:.9g}, cuRAND's stream has {:.9g}", i, got, want);
      }
    }
  }
  r.validation = {{"method",
                   "sampled elements against curand_init(seed, 0, i) + "
                   "curand_uniform, bit for bit"},
                  {"seed", options.seed},
                  {"checked", positions.size()},
                  {"mismatches", mismatches}};
  if (mismatches > 0) {
    r.outcome = Outcome::kInvalid;
    r.reason =
        fmt::format("{} of {} sampled values differ: {}", mismatches, positions.size(), first);
  }
  return std::vector<BenchResult>{std::move(r)};
}

}  // namespace parity::bench
