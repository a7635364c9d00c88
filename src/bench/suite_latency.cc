// SPDX-License-Identifier: Apache-2.0
// The latency suite: what launching an empty kernel costs, queued and with a wait each time.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "bench/suite.h"

namespace parity::bench {
namespace {

constexpr int kDefaultReps = 20;
constexpr int kLaunchesPerSample = 1000;

}  // namespace

Result<std::vector<BenchResult>> RunLatencySuite(Backend& backend, const SuiteOptions& options) {
  const int reps = options.reps.value_or(kDefaultReps);
  std::vector<BenchResult> results;
  for (const bool wait_each : {false, true}) {
    BenchResult r;
    r.benchmark = wait_each ? "latency.launch_sync" : "latency.launch";
    r.params = {{"reps", reps}, {"launches", kLaunchesPerSample}};
    r.unit = "us";
    r.higher_is_better = false;
    double fastest = std::numeric_limits<double>::infinity();
    std::size_t bad_readings = 0;
    for (int rep = 0; rep <= reps; ++rep) {
      PARITY_ASSIGN_OR_RETURN(double t, backend.Time(
                                            [&]() -> Status {
                                              for (int i = 0; i < kLaunchesPerSample; ++i) {
                                                PARITY_RETURN_IF_ERROR(backend.EmptyKernel());
                                                if (wait_each)
                                                  PARITY_RETURN_IF_ERROR(backend.Synchronize());
                                              }
                                              return Status::Ok();
                                              // Direct: the host's part of each launch is what this
                                              // suite measures.
                                            },
                                            Queuing::kDirect));
      if (rep == 0) continue;
      const double us = t / kLaunchesPerSample * 1e6;
      if (!std::isfinite(us) || us <= 0.0) {
        ++bad_readings;
        continue;
      }
      r.samples.push_back(us);
      fastest = std::min(fastest, us);
    }
    r.validation = {{"method",
                     "an empty kernel has no output: every timer reading must be "
                     "positive and finite"},
                    {"bad_readings", bad_readings}};
    if (r.samples.empty() || bad_readings > 0) {
      r.outcome = Outcome::kInvalid;
      r.reason =
          fmt::format("{} of {} timer readings were not positive and finite", bad_readings, reps);
    } else {
      r.best = fastest;
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace parity::bench
