// SPDX-License-Identifier: Apache-2.0
// The result of a stress run: the --json document and the human summary.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/text_table.h"
#include "stress/supervisor.h"

namespace parity::stress {
namespace {

/// Recovery times of the injected faults that end in a recovery (sdc's detection excluded).
std::vector<double> RecoveryTimes(const StressRun& run) {
  std::vector<double> out;
  for (const FaultRecord& f : run.faults) {
    if (f.injected && f.kind != "sdc" && f.recovered && f.recovery_seconds) {
      out.push_back(*f.recovery_seconds);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The median of sorted values (the mean of the middle two for an even count).
double Median(const std::vector<double>& sorted) {
  const std::size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

double Throughput(const StressRun& run) {
  double total = 0.0;
  for (const WorkerSummary& w : run.workers) {
    if (w.busy_seconds > 0.0) total += w.work / w.busy_seconds;
  }
  return total;
}

}  // namespace

std::vector<std::string> FailReasons(const StressRun& run, const StressOptions& options) {
  std::vector<std::string> reasons;
  for (const WorkerSummary& worker : run.workers) {
    if (worker.state == "failed") {
      reasons.push_back(fmt::format("worker {} failed: {}", worker.index, worker.failure));
    } else if (options.steps && worker.steps < *options.steps && !run.interrupted &&
               !options.duration) {
      reasons.push_back(fmt::format("worker {} ended at step {} of {}", worker.index, worker.steps,
                                    *options.steps));
    }
    if (worker.lost > 0) {
      reasons.push_back(fmt::format("worker {}: {} steps lost", worker.index, worker.lost));
    }
    if (worker.duplicated > 0) {
      reasons.push_back(
          fmt::format("worker {}: {} steps done twice", worker.index, worker.duplicated));
    }
  }
  if (run.sdc_count > 0) {
    reasons.push_back(fmt::format("{} silent-data-corruption events", run.sdc_count));
  }
  std::int64_t unrecovered = 0;
  for (const FaultRecord& record : run.faults) {
    if (!record.recovered && !run.interrupted) ++unrecovered;
  }
  if (unrecovered > 0) reasons.push_back(fmt::format("{} faults not recovered", unrecovered));
  std::int64_t fatal_alerts = 0;
  for (const monitor::Alert& alert : run.alerts) {
    if (alert.severity == monitor::Severity::kFatal && !alert.resolved) ++fatal_alerts;
  }
  if (fatal_alerts > 0) reasons.push_back(fmt::format("{} fatal rule alerts", fatal_alerts));
  return reasons;
}

Json StressRunToJson(const StressRun& run, const StressOptions& options) {
  Json doc = Document("parity-stress", 1);
  doc["workload"] = options.workload;
  doc["backend"] = options.workload == "exec" ? Json() : Json(options.backend);
  if (options.workload == "exec") doc["command"] = options.command;
  doc["workers"] = options.workers;
  doc["seed"] = options.seed;
  doc["duration_s"] = run.seconds;
  doc["steps"] = run.steps;
  doc["target_steps"] = options.steps ? Json(*options.steps) : Json();
  std::int64_t injected = 0, recovered = 0;
  for (const FaultRecord& f : run.faults) {
    if (!f.injected) continue;
    ++injected;
    if (f.recovered) ++recovered;
  }
  doc["faults_injected"] = injected;
  doc["faults_recovered"] = recovered;
  const std::vector<double> times = RecoveryTimes(run);
  Json recovery = Json::object();
  recovery["count"] = times.size();
  recovery["p50"] = times.empty() ? Json() : Json(Median(times));
  recovery["max"] = times.empty() ? Json() : Json(times.back());
  recovery["samples"] = times;
  doc["recovery_s"] = recovery;
  std::int64_t lost = 0, duplicated = 0, redone = 0, mismatches = 0, restarts = 0;
  for (const WorkerSummary& w : run.workers) {
    lost += w.lost;
    duplicated += w.duplicated;
    redone += w.redone;
    mismatches += w.redo_mismatches;
    restarts += w.restarts;
  }
  doc["lost_steps"] = lost;
  doc["duplicated_steps"] = duplicated;
  doc["redone_steps"] = redone;
  doc["redo_loss_mismatches"] = mismatches;
  doc["restarts"] = restarts;
  doc["sdc_events"] = run.sdc_events;
  doc["sdc_event_count"] = run.sdc_count;
  doc["nondeterministic_results"] = run.nondeterministic;
  doc["checkpoint_failures"] = run.checkpoint_failures;
  doc["corrupt_checkpoints_detected"] = run.corrupt_checkpoints;
  Json alerts = Json::array();
  for (const monitor::Alert& alert : run.alerts) alerts.push_back(monitor::AlertToJson(alert));
  doc["alerts"] = alerts;
  Json sources = Json::array();
  for (const monitor::SourceState& s : run.sources) {
    Json source = {{"name", s.name}, {"up", s.up}};
    if (!s.up) source["reason"] = s.reason;
    sources.push_back(source);
  }
  doc["telemetry"] = {{"samples", run.telemetry_samples},
                      {"interval_s", options.telemetry_interval},
                      {"sources", sources}};
  Json throughput = Json::object();
  throughput["unit"] = fmt::format("{}/s", run.unit);
  const double rate = Throughput(run);
  throughput["value"] = rate > 0.0 ? Json(rate) : Json();
  doc["throughput"] = throughput;
  Json faults = Json::array();
  for (const FaultRecord& f : run.faults) {
    Json fault = {{"kind", f.kind},
                  {"injected", f.injected},
                  {"worker", f.worker},
                  {"time_s", f.time},
                  {"recovered", f.recovered}};
    fault["recovery_s"] = f.recovery_seconds ? Json(*f.recovery_seconds) : Json();
    fault["detail"] = f.detail;
    if (!f.planted.is_null()) fault["planted"] = f.planted;
    faults.push_back(fault);
  }
  doc["faults"] = faults;
  Json workers = Json::array();
  for (const WorkerSummary& w : run.workers) {
    Json worker = {{"worker", w.index},
                   {"device", w.device},
                   {"state", w.state},
                   {"steps", w.steps},
                   {"restarts", w.restarts},
                   {"lost_steps", w.lost},
                   {"duplicated_steps", w.duplicated},
                   {"redone_steps", w.redone},
                   {"redo_loss_mismatches", w.redo_mismatches}};
    if (w.first_redo_mismatch) worker["first_redo_mismatch_step"] = *w.first_redo_mismatch;
    worker["throughput"] = w.busy_seconds > 0.0 ? Json(w.work / w.busy_seconds) : Json();
    if (!w.failure.empty()) worker["failure"] = w.failure;
    workers.push_back(worker);
  }
  doc["worker_results"] = workers;
  if (options.matrix) doc["matrix"] = MatrixToJson(*options.matrix);
  doc["params"] = options.params;
  doc["parameter_changes"] = run.parameter_changes;
  doc["events"] = run.events;
  doc["interrupted"] = run.interrupted;
  doc["verdict"] = run.reasons.empty() ? "pass" : "fail";
  doc["reasons"] = run.reasons;
  return doc;
}

std::string StressRunText(const StressRun& run, const StressOptions& options) {
  std::string out =
      fmt::format("parity stress: {} on {}, {} worker{}, {:.1f} s, {} steps\n", options.workload,
                  options.workload == "exec" ? std::string("an external command") : options.backend,
                  options.workers, options.workers == 1 ? "" : "s", run.seconds, run.steps);
  const double rate = Throughput(run);
  if (rate > 0.0) out += fmt::format("throughput: {:.4g} {}/s\n", rate, run.unit);
  Table workers({"worker", "device", "state", "steps", "restarts", "redone", "lost", "twice"},
                {true, true, false, true, true, true, true, true});
  for (const WorkerSummary& w : run.workers) {
    workers.AddRow({std::to_string(w.index), std::to_string(w.device), w.state,
                    std::to_string(w.steps), std::to_string(w.restarts), std::to_string(w.redone),
                    std::to_string(w.lost), std::to_string(w.duplicated)});
  }
  out += fmt::format("\n{}", workers.Render("  "));
  if (!run.faults.empty()) {
    Table faults({"t (s)", "fault", "worker", "recovered", "after (s)", "detail"},
                 {true, false, true, false, true, false});
    for (const FaultRecord& f : run.faults) {
      faults.AddRow(
          {fmt::format("{:.2f}", f.time),
           f.injected ? f.kind : fmt::format("{} (not injected)", f.kind), std::to_string(f.worker),
           f.kind == "sdc" ? (f.recovered ? "detected" : "MISSED") : (f.recovered ? "yes" : "NO"),
           f.recovery_seconds ? fmt::format("{:.3f}", *f.recovery_seconds) : "-", f.detail});
    }
    out += fmt::format("\n{}", faults.Render("  "));
    const std::vector<double> times = RecoveryTimes(run);
    if (!times.empty()) {
      out += fmt::format("recovery: median {:.3f} s, max {:.3f} s over {} faults\n", Median(times),
                         times.back(), times.size());
    }
  }
  for (const Json& event : run.sdc_events) {
    if (&event - &run.sdc_events[0] >= 10) {
      out += fmt::format("  ... {} more\n", run.sdc_count - 10);
      break;
    }
    out += fmt::format(
        "SDC: worker {} step {} {}{}: {} expected {} ({} check)\n", event.value("worker", 0),
        event.value("step", 0), event.value("array", std::string()),
        event.value("position", Json::array()).dump(), event.value("got", Json()).dump(),
        event.value("expected", Json()).dump(), event.value("check", std::string()));
  }
  if (run.checkpoint_failures > 0) {
    out += fmt::format("checkpoint writes failed: {} (the run went on)\n", run.checkpoint_failures);
  }
  if (run.corrupt_checkpoints > 0) {
    out += fmt::format("corrupt checkpoints detected and skipped: {}\n", run.corrupt_checkpoints);
  }
  std::int64_t mismatches = 0;
  for (const WorkerSummary& w : run.workers) mismatches += w.redo_mismatches;
  if (mismatches > 0) {
    out += fmt::format(
        "warning: {} redone steps gave a different loss than the first time "
        "(the workload is not reproducible)\n",
        mismatches);
  }
  if (run.nondeterministic > 0) {
    out += fmt::format(
        "note: {} result entries differed bitwise from the first result within "
        "rounding (a nondeterministic library, not corruption)\n",
        run.nondeterministic);
  }
  for (const monitor::Alert& alert : run.alerts) {
    out += fmt::format("alert ({}): {}\n", monitor::SeverityName(alert.severity), alert.message);
  }
  std::int64_t up = 0;
  for (const monitor::SourceState& s : run.sources) up += s.up ? 1 : 0;
  out += fmt::format("telemetry: {} samples from {} source{} up\n", run.telemetry_samples, up,
                     up == 1 ? "" : "s");
  if (run.interrupted) out += "interrupted: workers stopped with a final checkpoint\n";
  if (run.reasons.empty()) {
    out += "verdict: PASS\n";
  } else {
    out += "verdict: FAIL\n";
    for (const std::string& reason : run.reasons) out += fmt::format("  {}\n", reason);
  }
  return out;
}

}  // namespace parity::stress
