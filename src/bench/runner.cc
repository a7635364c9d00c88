// SPDX-License-Identifier: Apache-2.0
#include "bench/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>

#include "bench/pair_matrix.h"
#include "bench/peaks.h"
#include "bench/platform.h"
#include "bench/registry.h"
#include "bench/stats.h"
#include "core/parallel.h"
#include "core/spellcheck.h"
#include "core/text_table.h"

namespace parity::bench {
namespace {

std::string SuiteOf(const std::string& benchmark) {
  return benchmark.substr(0, benchmark.find('.'));
}

// The datasheet figure a result is measured against: memory bandwidth for stream kernels,
// the dtype's GEMM peak (matrix units where the device has them) for gemm.
const PeakValue* PeakFor(const DevicePeaks& device, const BenchResult& r) {
  auto find = [&](std::string_view metric) -> const PeakValue* {
    const auto it = device.peaks.find(std::string(metric));
    return it == device.peaks.end() ? nullptr : &it->second;
  };
  if (r.benchmark.starts_with("stream.")) return find("memory_bandwidth_gbs");
  if (r.benchmark == "gemm") {
    if (r.dtype == "float64") {
      const PeakValue* tensor = find("fp64_tensor_gflops");
      return tensor != nullptr ? tensor : find("fp64_gflops");
    }
    if (r.dtype == "float32") return find("fp32_gflops");
    if (r.dtype == "tf32") return find("tf32_tensor_gflops");
    if (r.dtype == "float16") return find("fp16_tensor_gflops");
    if (r.dtype == "bfloat16") return find("bf16_tensor_gflops");
  }
  return nullptr;
}

Status CheckSuites(const std::vector<std::string>& suites) {
  for (const std::string& name : suites) {
    if (FindSuite(name) != nullptr) continue;
    std::vector<std::string_view> names;
    for (const Suite& suite : Suites()) names.push_back(suite.name);
    std::string message =
        fmt::format("unknown suite '{}' (suites: {})", name, fmt::join(names, ", "));
    if (auto suggestion = Suggest(name, names)) {
      message += fmt::format("; did you mean '{}'?", *suggestion);
    }
    return Status::Invalid("", message);
  }
  return Status::Ok();
}

}  // namespace

std::string Iso8601Now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

Result<std::vector<BenchResult>> MergeRuns(const std::vector<std::vector<BenchResult>>& runs) {
  if (runs.empty()) return std::vector<BenchResult>{};
  std::vector<BenchResult> merged = runs.front();
  if (runs.size() == 1) return merged;
  for (BenchResult& r : merged) {
    if (!r.samples.empty()) r.run_medians = {Median(r.samples)};
    if (r.outcome == Outcome::kInvalid) r.reason = fmt::format("run 1: {}", r.reason);
  }
  for (std::size_t run = 1; run < runs.size(); ++run) {
    if (runs[run].size() != merged.size()) {
      return Status::Internal(fmt::format("run {} produced {} results, run 1 {}", run + 1,
                                          runs[run].size(), merged.size()));
    }
    for (std::size_t i = 0; i < merged.size(); ++i) {
      BenchResult& into = merged[i];
      const BenchResult& r = runs[run][i];
      if (r.Key() != into.Key()) {
        return Status::Internal(fmt::format("run {} result {} is {}, run 1 had {}", run + 1, i + 1,
                                            r.Label(), into.Label()));
      }
      into.samples.insert(into.samples.end(), r.samples.begin(), r.samples.end());
      if (!r.samples.empty()) into.run_medians.push_back(Median(r.samples));
      if (r.best &&
          (!into.best || (into.higher_is_better ? *r.best > *into.best : *r.best < *into.best))) {
        into.best = r.best;
      }
      if (r.outcome == Outcome::kInvalid && into.outcome != Outcome::kInvalid) {
        into.outcome = Outcome::kInvalid;
        into.reason = fmt::format("run {}: {}", run + 1, r.reason);
        into.validation = r.validation;
      } else if (r.outcome == Outcome::kSkipped && into.outcome == Outcome::kOk) {
        into.outcome = Outcome::kSkipped;
        into.reason = fmt::format("run {}: {}", run + 1, r.reason);
      }
    }
  }
  // A result with one run's medians only (others skipped) has no run-level spread to show.
  for (BenchResult& r : merged) {
    if (r.run_medians.size() < 2) r.run_medians.clear();
  }
  return merged;
}

Result<BenchRun> RunBenchOn(Backend& backend, const DeviceInfo& device,
                            const BenchOptions& options) {
  PARITY_RETURN_IF_ERROR(CheckSuites(options.suites));
  std::vector<std::string> suites;
  for (const std::string& name : options.suites) {
    if (std::find(suites.begin(), suites.end(), name) == suites.end()) suites.push_back(name);
  }
  if (suites.empty()) {
    for (const Suite& suite : Suites()) {
      if (suite.by_default) suites.emplace_back(suite.name);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string started = Iso8601Now();
  std::vector<std::vector<BenchResult>> runs;
  for (int run = 0; run < options.repeat; ++run) {
    std::vector<BenchResult> results;
    for (const std::string& name : suites) {
      if (options.suite.progress) {
        options.suite.progress(options.repeat > 1
                                   ? fmt::format("run {}/{}: {}", run + 1, options.repeat, name)
                                   : name);
      }
      Result<std::vector<BenchResult>> suite_results = FindSuite(name)->run(backend, options.suite);
      if (!suite_results.ok()) {
        // The device can't do what the suite needs here (a kernel without code for this GPU,
        // a library call this GPU lacks): the suite is skipped with the reason, not an error.
        if (suite_results.status().code() != StatusCode::kUnavailable) {
          return suite_results.status();
        }
        results.push_back(Skipped(name, "", Json::object(), "", suite_results.status().message()));
        continue;
      }
      results.insert(results.end(), suite_results->begin(), suite_results->end());
    }
    runs.push_back(std::move(results));
  }
  BenchRun out;
  PARITY_ASSIGN_OR_RETURN(out.results, MergeRuns(runs));
  const DevicePeaks* peaks = FindPeaks(BuiltinPeaks(), device.name);
  for (BenchResult& r : out.results) {
    if (peaks != nullptr && r.outcome == Outcome::kOk) {
      if (const PeakValue* peak = PeakFor(*peaks, r)) {
        r.peak = peak->value;
        r.peak_source = peak->source;
      }
    }
    switch (r.outcome) {
      case Outcome::kOk:
        ++out.ok;
        break;
      case Outcome::kInvalid:
        ++out.invalid;
        break;
      case Outcome::kSkipped:
        ++out.skipped;
        break;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  Json doc = Document("parity-bench", 1);
  Json platform = options.platform.is_object() ? options.platform : HostFingerprint();
  platform["device"] = {{"backend", std::string(backend.name())},
                        {"index", device.index},
                        {"name", device.name},
                        {"vendor", device.vendor},
                        {"properties", device.properties}};
  if (peaks != nullptr) platform["device"]["datasheet"] = peaks->name;
  doc["platform"] = std::move(platform);
  doc["backend"] = std::string(backend.name());
  doc["device"] = device.name;
  doc["suites"] = suites;
  doc["repeat"] = options.repeat;
  Json settings = {
      {"full", options.suite.full}, {"seed", options.suite.seed}, {"threads", ThreadCount()}};
  if (options.suite.n) settings["n"] = *options.suite.n;
  if (options.suite.reps) settings["reps"] = *options.suite.reps;
  if (!options.suite.dtypes.empty()) settings["dtypes"] = options.suite.dtypes;
  doc["settings"] = settings;
  doc["started"] = started;
  doc["duration_s"] = seconds;
  doc["summary"] = {{"ok", out.ok}, {"invalid", out.invalid}, {"skipped", out.skipped}};
  Json results = Json::array();
  for (const BenchResult& r : out.results) results.push_back(ToJson(r));
  doc["results"] = std::move(results);
  out.document = std::move(doc);
  return out;
}

Result<BenchRun> RunBench(const BenchOptions& options) {
  PARITY_RETURN_IF_ERROR(CheckSuites(options.suites));
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, OpenBackend(options.backend));
  PARITY_ASSIGN_OR_RETURN(std::vector<DeviceInfo> devices, backend->Devices());
  if (devices.empty()) {
    return Status::Unavailable(fmt::format("{} backend: no devices", options.backend));
  }
  if (options.device < 0 || options.device >= static_cast<int>(devices.size())) {
    return Status::Unavailable(fmt::format("{} backend: no device {} (it has {}: 0..{})",
                                           options.backend, options.device, devices.size(),
                                           devices.size() - 1));
  }
  PARITY_RETURN_IF_ERROR(backend->Open(options.device));
  BenchOptions with_devices = options;
  with_devices.suite.open_device =
      [name = options.backend](int index) -> Result<std::unique_ptr<Backend>> {
    PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Backend> other, OpenBackend(name));
    PARITY_RETURN_IF_ERROR(other->Open(index));
    return other;
  };
  return RunBenchOn(*backend, devices[static_cast<std::size_t>(options.device)], with_devices);
}

std::string BenchText(const BenchRun& run) {
  const Json& doc = run.document;
  std::string text = fmt::format("parity bench: {} backend, {}", doc["backend"].get<std::string>(),
                                 doc["device"].get<std::string>());
  if (doc["repeat"].get<int>() > 1) text += fmt::format(", {} runs", doc["repeat"].get<int>());
  text += "\n";
  std::map<std::string, Table> tables;
  std::vector<std::string> order;
  std::vector<BenchResult> peer;
  int peer_devices = 0;
  for (const BenchResult& r : run.results) {
    const std::string suite = SuiteOf(r.benchmark);
    if (suite == "peer") {
      // Matrices, as p2pBandwidthLatencyTest prints them, after the tables.
      peer.push_back(r);
      peer_devices =
          std::max({peer_devices, r.params.value("src", 0) + 1, r.params.value("dst", 0) + 1});
      continue;
    }
    if (!tables.contains(suite)) {
      order.push_back(suite);
      tables.emplace(suite, Table({"benchmark", "dtype", "size", "unit", "best", "median", "cv",
                                   "efficiency", "status"},
                                  {false, false, true, false, true, true, true, true, false}));
    }
    std::string size = r.params.contains("size") ? r.params["size"].dump() : "";
    std::string best = r.best ? fmt::format("{:.4g}", *r.best) : "-";
    std::string median = "-", cv = "-";
    if (!r.samples.empty()) {
      const Summary s = Summarize(r.samples);
      median = fmt::format("{:.4g}", s.median);
      cv = fmt::format("{:.1f}%", 100.0 * s.cv);
    }
    std::string efficiency =
        r.peak && r.best ? fmt::format("{:.0f}%", 100.0 * *r.best / *r.peak) : "";
    std::string status = r.outcome == Outcome::kOk        ? "ok"
                         : r.outcome == Outcome::kInvalid ? fmt::format("INVALID: {}", r.reason)
                                                          : fmt::format("SKIP: {}", r.reason);
    tables.at(suite).AddRow(
        {r.benchmark, r.dtype, size, r.unit, best, median, cv, efficiency, status});
  }
  for (const std::string& suite : order) {
    text += '\n';
    text += tables.at(suite).Render("  ");
  }
  if (!peer.empty()) {
    text += PairMatrixText(
        peer, peer_devices, "device(row) -> device(column)",
        [](const BenchResult& r) -> std::string {
          const std::string access =
              r.params.value("peer_access", false) ? "peer access on" : "peer access off (staged)";
          if (r.benchmark == "peer.latency") {
            return fmt::format("latency, {} (us per 8 B copy)", access);
          }
          return fmt::format("{} bandwidth, {} (GB/s, {} B copies)",
                             r.params.value("direction", "") == "bi" ? "bidirectional" : "one-way",
                             access, r.params.value("bytes", std::size_t{0}));
        });
  }
  text += fmt::format("\n{} ok, {} invalid, {} skipped; {:.1f} s\n", run.ok, run.invalid,
                      run.skipped, doc["duration_s"].get<double>());
  return text;
}

}  // namespace parity::bench
