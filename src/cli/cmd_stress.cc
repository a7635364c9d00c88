// SPDX-License-Identifier: Apache-2.0
// parity stress: burn and training workloads (or an external command) under a supervisor with
// checkpoints, restarts, fault injection, a stress matrix and telemetry.
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench/registry.h"
#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "monitor/monitor.h"
#include "monitor/rules.h"
#include "stress/command_template.h"
#include "stress/inject.h"
#include "stress/matrix.h"
#include "stress/supervisor.h"
#include "stress/worker.h"
#include "stress/workload.h"

namespace parity::cli {
namespace {

/// NAME=VALUE: VALUE as a JSON integer or number when it reads as one, else as a string.
Status AddParam(const std::string& text, Json* params) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::Invalid("--param", fmt::format("'{}' is not NAME=VALUE", text));
  }
  const std::string name = text.substr(0, eq);
  const std::string value = text.substr(eq + 1);
  std::int64_t integer = 0;
  double number = 0.0;
  const char* end = value.data() + value.size();
  if (auto r = std::from_chars(value.data(), end, integer); r.ec == std::errc() && r.ptr == end) {
    (*params)[name] = integer;
  } else if (auto d = std::from_chars(value.data(), end, number);
             d.ec == std::errc() && d.ptr == end && std::isfinite(number)) {
    (*params)[name] = number;
  } else {
    (*params)[name] = value;
  }
  return Status::Ok();
}

std::string SelfExecutable() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("parity") : path.string();
}

/// Checks an exec template's placeholders against the names it will get.
Status CheckTemplate(const std::vector<std::string>& words, const Json& params,
                     const std::optional<stress::Matrix>& matrix) {
  Json values = params;
  if (matrix) {
    const Json drawn = stress::MatrixSampler(*matrix, 1).ValuesAt(0, 0, 0.0);
    for (const auto& [key, value] : drawn.items()) values[key] = value;
  }
  for (const char* name :
       {"checkpoint", "checkpoint_dir", "worker", "device", "step", "steps", "seed"}) {
    if (values.contains(name)) {
      return Status::Invalid("--cmd", fmt::format("{{{}}} is parity's own placeholder; name the "
                                                  "parameter otherwise",
                                                  name));
    }
    values[name] = 0;
  }
  auto expanded = stress::ExpandCommand(words, values);
  if (!expanded.ok()) return expanded.status().WithContext("--cmd");
  return Status::Ok();
}

int RunWorkerMode(const stress::WorkerOptions& options) { return stress::RunWorker(options); }

}  // namespace

int RunStress(int argc, char** argv) {
  CommonOptions common;
  stress::StressOptions options;
  stress::WorkerOptions worker;
  std::string matrix_path, command, checkpoint_dir, rules_path, source_list, params_json;
  std::vector<std::string> inject, params;
  double duration = 0.0;
  std::int64_t steps = 0;
  std::uint64_t seed = 1;
  bool worker_mode = false, inline_mode = false, list = false, no_telemetry = false;
  std::string workload_help;
  for (const stress::WorkloadInfo& w : stress::Workloads()) {
    workload_help += fmt::format("\n  {:<12}{}{}", w.name, w.summary,
                                 w.params.empty() ? "" : fmt::format(" [{}]", w.params));
  }
  auto app = MakeApp(
      "stress",
      "Run a stress workload under a supervisor: workers as child processes with heartbeats, a "
      "watchdog, atomic checksummed checkpoints and restarts with backoff; a step ledger proves "
      "no step is lost or done twice; faults injected on a seeded schedule with recovery timed; "
      "parameters from a seeded stress matrix; telemetry sampled throughout with the monitor's "
      "rules. Exit 0 when the run passed, 1 on any silent data corruption, lost or duplicated "
      "step, unrecovered fault or fatal rule alert, 2 on bad input, 3 when the backend can't "
      "run here, 130 when interrupted (after a final checkpoint and the result).\n\nWorkloads:" +
          workload_help,
      &common);
  app->add_option("--workload", options.workload, "the workload (--list-workloads)")
      ->option_text("NAME");
  app->add_option("--backend", options.backend, "backend of the built-in workloads (default cpu)")
      ->option_text("B");
  app->add_option("--duration", duration, "run for S seconds")->option_text("S");
  app->add_option("--steps", steps, "steps per worker")->option_text("N");
  app->add_option("--matrix", matrix_path, "stress matrix (YAML): parameters and schedules")
      ->option_text("FILE");
  app->add_option("--seed", seed,
                  "seed of the matrix and the fault schedule (default: the "
                  "matrix's, else 1)")
      ->option_text("N");
  app->add_option("--inject", inject,
                  "KIND[:every=S|:p=P|:at=S], repeatable; KIND kill, hang, corrupt-checkpoint, "
                  "disk-full, oom, sdc. Bare KIND: once in the first three quarters of the run")
      ->option_text("SPEC");
  app->add_option("--workers", options.workers,
                  "worker processes (default 1); worker k runs "
                  "on device k mod the device count")
      ->check(CLI::Range(1, 1024))
      ->option_text("N");
  app->add_option("--checkpoint-dir", checkpoint_dir,
                  "keep checkpoints here (worker-K/ for each worker); default: a temporary "
                  "directory removed at the end")
      ->option_text("DIR");
  app->add_option("--checkpoint-every", options.checkpoint_every,
                  "steps between checkpoints (default 50)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40))
      ->option_text("N");
  app->add_option("--cmd", command,
                  "exec: the command, run without a shell; {name} takes a matrix or --param "
                  "value, {checkpoint} the checkpoint to resume from (empty for none), "
                  "{checkpoint_dir}, {worker}, {device}, {step}, {steps}, {seed}")
      ->option_text("TEMPLATE");
  app->add_option("--param", params,
                  "NAME=VALUE for the workload, repeatable (the matrix "
                  "overrides)")
      ->option_text("NAME=VALUE");
  app->add_option("--hang-timeout", options.hang_timeout,
                  "seconds without a completed step before a worker counts as hung (default 30)")
      ->check(CLI::Range(0.1, 1e7))
      ->option_text("S");
  app->add_option("--stop-grace", options.stop_grace,
                  "seconds a stopping worker gets for its final checkpoint (default 10)")
      ->check(CLI::Range(0.0, 1e6))
      ->option_text("S");
  app->add_option("--max-restarts", options.max_restarts,
                  "consecutive failed starts before a worker is given up (default 10)")
      ->check(CLI::Range(0, 1000000))
      ->option_text("N");
  app->add_option("--rules", rules_path,
                  "monitor rules (YAML) in place of the defaults; a "
                  "fatal rule's alert fails the run")
      ->option_text("FILE");
  app->add_option("--source", source_list, "telemetry sources (default all that are present)")
      ->option_text("LIST");
  app->add_option("--interval", options.telemetry_interval,
                  "seconds between telemetry samples "
                  "(default 1)")
      ->check(CLI::Range(0.05, 3600.0))
      ->option_text("S");
  app->add_flag("--no-telemetry", no_telemetry, "do not sample telemetry");
  app->add_flag("--inline", inline_mode,
                "run the workload in this process alone: no supervisor, checkpoints or faults "
                "(the bare workload, to measure the supervisor's overhead against)");
  app->add_flag("--list-workloads", list, "list the workloads and their parameters");
  // The worker side of the supervisor, not for users.
  app->add_flag("--worker", worker_mode)->group("");
  app->add_option("--device", worker.device)->group("");
  app->add_option("--params", params_json)->group("");
  app->add_option("--resume", worker.resume)->group("");
  app->add_option("--keep-checkpoints", worker.checkpoints_kept)->group("");
  if (auto code = Parse(*app, common, argc, argv)) return *code;

  if (list) {
    for (const stress::WorkloadInfo& w : stress::Workloads()) {
      std::printf("%-12s%s\n", std::string(w.name).c_str(), std::string(w.summary).c_str());
      if (!w.params.empty())
        std::printf("            parameters: %s\n", std::string(w.params).c_str());
    }
    return kExitOk;
  }
  if (options.workload.empty()) return Fail(Status::Invalid("", "--workload NAME is required"));
  if (worker_mode) {
    worker.workload = options.workload;
    worker.backend = options.backend;
    worker.params = Json::parse(params_json.empty() ? "{}" : params_json, nullptr, false);
    if (!worker.params.is_object()) return Fail(Status::Invalid("--params", "not a JSON object"));
    worker.checkpoint_dir = checkpoint_dir;
    worker.checkpoint_every = options.checkpoint_every;
    worker.steps = std::max<std::int64_t>(steps, 0);
    return RunWorkerMode(worker);
  }

  auto info = stress::FindWorkload(options.workload);
  if (!info.ok()) return Fail(info.status().WithContext("--workload"));
  if (app->count("--duration") && !(duration > 0.0 && std::isfinite(duration))) {
    return Fail(Status::Invalid("--duration", "must be more than 0 seconds"));
  }
  if (app->count("--steps") && steps < 1) {
    return Fail(Status::Invalid("--steps", "must be at least 1"));
  }
  if (app->count("--duration")) options.duration = duration;
  if (app->count("--steps")) options.steps = steps;
  for (const std::string& p : params) {
    if (Status s = AddParam(p, &options.params); !s.ok()) return Fail(s);
  }

  const bool exec = (*info)->create == nullptr;
  if (exec && command.empty()) return Fail(Status::Invalid("--cmd", "workload exec needs --cmd"));
  if (!exec && !command.empty()) {
    return Fail(Status::Invalid("--cmd", "only the exec workload runs a command"));
  }
  if (!matrix_path.empty()) {
    auto matrix = stress::LoadMatrix(matrix_path);
    if (!matrix.ok()) return Fail(matrix.status());
    options.matrix = std::move(matrix).value();
    options.seed = options.matrix->seed;
  }
  if (app->count("--seed")) options.seed = seed;
  for (const std::string& text : inject) {
    auto spec = stress::ParseInjectSpec(text);
    if (!spec.ok()) return Fail(spec.status());
    if (spec->mode == stress::InjectMode::kOnce && !options.duration && !options.steps) {
      return Fail(Status::Invalid(
          "--inject",
          fmt::format(
              "{}: a bare KIND is placed in the first three quarters of the run, which needs "
              "--duration or --steps (or give every=, p= or at=)",
              text)));
    }
    if (spec->kind == stress::FaultKind::kSdc && (exec || options.workload == "train")) {
      return Fail(Status::Invalid("--inject",
                                  "sdc flips a bit of a burn workload's result: "
                                  "use gemm-burn or stream-burn"));
    }
    options.inject.push_back(*spec);
  }
  if (exec) {
    auto words = SplitCommand(command);
    if (!words.ok()) return Fail(words.status().WithContext("--cmd"));
    options.command = std::move(words).value();
    if (Status s = CheckTemplate(options.command, options.params, options.matrix); !s.ok()) {
      return Fail(s);
    }
  }

  if (inline_mode) {
    if (exec) return Fail(Status::Invalid("--inline", "exec runs a command; nothing to inline"));
    if (!options.inject.empty() || options.matrix) {
      return Fail(Status::Invalid("--inline", "runs without supervisor: no --inject, no --matrix"));
    }
    worker.workload = options.workload;
    worker.backend = options.backend;
    worker.params = options.params;
    worker.steps = options.steps.value_or(0);
    if (!options.steps && !options.duration) options.duration = 10.0;
    auto run = stress::RunInline(worker, options.duration);
    if (!run.ok()) return Fail(run.status());
    Json doc = Document("parity-stress", 1);
    doc["workload"] = options.workload;
    doc["backend"] = options.backend;
    doc["supervised"] = false;
    doc["steps"] = run->steps;
    doc["duration_s"] = run->seconds;
    doc["throughput"] = {{"unit", run->unit + "/s"},
                         {"value", run->seconds > 0 ? Json(run->work / run->seconds) : Json()}};
    doc["sdc_event_count"] = run->sdc_events;
    doc["sdc_events"] = run->sdc;
    doc["params"] = options.params;
    doc["verdict"] = run->sdc_events == 0 ? "pass" : "fail";
    if (common.human()) {
      std::printf("parity stress --inline: %s on %s, %lld steps, %.4g %s/s, %lld SDC events\n",
                  options.workload.c_str(), options.backend.c_str(),
                  static_cast<long long>(run->steps),
                  run->seconds > 0 ? run->work / run->seconds : 0.0, run->unit.c_str(),
                  static_cast<long long>(run->sdc_events));
    }
    if (Status s = WriteJsonOutput(common, doc); !s.ok()) return Fail(s);
    if (run->interrupted) return kExitInterrupted;
    return run->sdc_events == 0 ? kExitOk : kExitCheckFailed;
  }

  // The backend must be here before any worker starts (exit 3 with the reason otherwise).
  if (!exec) {
    auto backend = bench::OpenBackend(options.backend);
    if (!backend.ok()) return Fail(backend.status());
    auto devices = (*backend)->Devices();
    if (!devices.ok()) return Fail(devices.status());
    if (devices->empty()) {
      return Fail(Status::Unavailable(fmt::format("backend {}: no devices", options.backend)));
    }
    options.devices = static_cast<int>(devices->size());
  }
  options.worker_threads = common.threads;
  if (options.worker_threads == 0 && options.backend == "cpu" && options.workers > 1) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    options.worker_threads = std::max(1, cores / options.workers);
  }
  options.parity_exe = SelfExecutable();
  options.forward_output = !common.quiet;

  std::unique_ptr<monitor::Sampler> sampler;
  std::unique_ptr<monitor::RuleEngine> engine;
  if (!no_telemetry) {
    std::vector<monitor::Rule> rules = monitor::DefaultRules();
    if (!rules_path.empty()) {
      auto loaded = monitor::LoadRules(rules_path);
      if (!loaded.ok()) return Fail(loaded.status());
      rules = std::move(loaded).value();
    }
    auto opened = monitor::Sampler::Open(SplitList(source_list), monitor::SourceOptions{});
    if (opened.ok()) {
      sampler = std::move(opened).value();
      engine = std::make_unique<monitor::RuleEngine>(std::move(rules));
    } else if (!source_list.empty() || opened.status().code() != StatusCode::kUnavailable) {
      return Fail(opened.status());
    } else if (common.human()) {
      Warn("no telemetry source can run here: " + opened.status().message());
    }
  }

  std::string temp_dir;
  if (checkpoint_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/parity-stress-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      return Fail(Status::Invalid(pattern, "cannot create a temporary checkpoint directory"));
    }
    temp_dir = checkpoint_dir = pattern;
  }
  options.checkpoint_dir = checkpoint_dir;
  auto run = stress::RunStress(options, sampler.get(), engine.get());
  if (!temp_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir, ec);
  }
  if (!run.ok()) return Fail(run.status());
  if (common.human()) std::fputs(stress::StressRunText(*run, options).c_str(), stdout);
  if (Status s = WriteJsonOutput(common, stress::StressRunToJson(*run, options)); !s.ok()) {
    return Fail(s);
  }
  if (run->interrupted) return kExitInterrupted;
  return run->reasons.empty() ? kExitOk : kExitCheckFailed;
}

}  // namespace parity::cli
