// SPDX-License-Identifier: Apache-2.0
// One benchmark result and the `parity-bench` v1 document (docs/DESIGN.md "Benchmark results"):
// writing it, and reading it back for `parity bench compare` with every field checked.
#ifndef PARITY_BENCH_RESULT_H_
#define PARITY_BENCH_RESULT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"

namespace parity::bench {

/// What became of a benchmark.
enum class Outcome {
  kOk,       ///< ran, and its output was validated
  kInvalid,  ///< ran, and its output was wrong: the figure must not be used
  kSkipped,  ///< did not run here (the reason says why); never a pass
};
std::string_view OutcomeName(Outcome outcome);

/// One benchmark at one dtype and one set of parameters.
struct BenchResult {
  std::string benchmark;  ///< "<suite>.<kernel>": "stream.triad", "gemm", "transfer.h2d"
  std::string dtype;      ///< "float64", ...; empty where the benchmark has none (transfer)
  /// The parameters. "size" (when present) is the sweep coordinate that tells results of one
  /// benchmark apart (GEMM order, transfer bytes); the others are run settings that two results
  /// must share to be compared (n, reps, memory kinds).
  Json params = Json::object();
  std::string unit;              ///< "GB/s", "GFLOP/s", "us"
  bool higher_is_better = true;  ///< false for times ("us")
  /// One figure per timed repetition in `unit` (warm-up repetitions left out), all runs of
  /// `parity bench --repeat` one after another.
  std::vector<double> samples;
  /// With --repeat K > 1: the median of each run, the run-level figures `bench compare` uses.
  std::vector<double> run_medians;
  /// The figure from the fastest repetition (BabelStream's headline number).
  std::optional<double> best;
  Outcome outcome = Outcome::kOk;
  std::string reason;                ///< why invalid or skipped
  Json validation = Json::object();  ///< how the output was checked, and what was found
  /// What computed it, where the backend says (GEMM: library, version, call); may be empty.
  std::string implementation;
  std::optional<double> peak;  ///< datasheet peak in `unit`, when the device is known
  std::string peak_source;     ///< the peak's source (a URL)
  /// Further top-level fields of the result, written and read back as they are (the
  /// collective suite's algbw, busbw, time_us and wrong). Never one of the fields above.
  Json extra = Json::object();

  /// The identity `bench compare` matches on: benchmark, dtype and params.size.
  std::string Key() const;
  /// "stream.triad float64" or "gemm float32 size=2048", for people.
  std::string Label() const;
};

/// The result as docs/DESIGN.md writes it: benchmark, dtype, params, unit, median, min, max, cv,
/// samples, valid, peak, efficiency, plus best, status, reason, validation, runs and
/// implementation (when known).
Json ToJson(const BenchResult& result);

/// A parsed `parity-bench` v1 document.
struct BenchDocument {
  Json platform = Json::object();
  std::string backend;
  std::string device;
  int repeat = 1;
  std::vector<BenchResult> results;
};

/// Reads a `parity-bench` v1 document from `text`; `path` names it in errors ("path: result 3:
/// 'samples' is not a list of positive numbers"). Every field compare uses is checked.
Result<BenchDocument> ParseBenchDocument(std::string_view text, std::string_view path);
/// The same, reading the file (at most 1 GiB).
Result<BenchDocument> LoadBenchDocument(const std::string& path);

}  // namespace parity::bench

#endif  // PARITY_BENCH_RESULT_H_
