// SPDX-License-Identifier: Apache-2.0
// parity tune WORKLOAD --space FILE [--budget DURATION]: the training settings that make a
// workload fast without changing its results (workload/tune.h).
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "core/file_util.h"
#include "env/knowledge.h"
#include "workload/python_env.h"
#include "workload/tune.h"

namespace parity::cli {

int RunTune(int argc, char** argv) {
  CommonOptions common;
  workload::TuneOptions options;
  std::string workload_name, space_path, budget = "10m", python, backend = "cpu", vars_path;
  std::string lr_rule = "held";
  int device = 0;
  double timeout = 0.0;
  auto app = MakeApp(
      "tune",
      "Search a space of training settings (batch size, DataLoader workers, pinned memory, "
      "prefetching, threads, channels-last, AMP, torch.compile, the optimizer's implementation, "
      "the SDPA backend, environment variables) for the fastest "
      "configuration of a workload by successive halving under a time budget: every "
      "configuration trained by the model suite's harness in a fresh process, the fastest "
      "third kept at each rung of more steps. A configuration whose loss curve leaves the "
      "default's seed envelope is flagged and never recommended. Prints the best configuration "
      "with its speed-up over the default (95% bootstrap interval) and the trials; "
      "docs/WORKLOADS.md describes space files.",
      &common);
  app->add_option("workload", workload_name,
                  "a reference workload (recsys, transformer, cnn), a model-library workload "
                  "(hf-llama, hf-bert, timm-vit, timm-resnet, torchrec-dlrm, minilm) or "
                  "MODULE:FUNCTION")
      ->required();
  app->add_option("--space", space_path,
                  "the space file (YAML: knobs and env, each a list of candidate values; "
                  "data/tune/default.yaml holds the knobs that exist)")
      ->required()
      ->option_text("FILE");
  app->add_option("--budget", budget,
                  "wall time for the search: seconds, or with a unit (90, 120s, 10m, 2h; "
                  "default 10m)")
      ->option_text("DURATION");
  app->add_option("--size", options.run.size, "tiny, small or base (default small)")
      ->check(CLI::IsMember({"tiny", "small", "base"}))
      ->option_text("S");
  app->add_option("--python", python,
                  "the interpreter (default $PARITY_PYTHON, else the first python3 on PATH that "
                  "imports torch, else /usr/bin/python3)")
      ->option_text("PY");
  app->add_option("--backend", backend, "cpu, cuda or hip: torch's cpu or cuda device")
      ->check(CLI::IsMember({"cpu", "cuda", "hip"}))
      ->option_text("NAME");
  app->add_option("--device", device, "device index (default 0)")
      ->check(CLI::Range(0, 1 << 20))
      ->option_text("I");
  app->add_option("--warmup", options.run.warmup, "warm-up steps of every trial (default 3)")
      ->check(CLI::Range(0, 100000))
      ->option_text("N");
  app->add_option("--min-steps", options.min_steps, "timed steps of the first rung (default 5)")
      ->check(CLI::Range(2, 1000000))
      ->option_text("N");
  app->add_option("--max-steps", options.max_steps, "timed steps of the last rung (default 45)")
      ->check(CLI::Range(2, 1000000))
      ->option_text("N");
  app->add_option("--eta", options.eta, "each rung keeps 1/ETA of the configurations (default 3)")
      ->check(CLI::Range(2, 100))
      ->option_text("ETA");
  app->add_option("--seeds", options.seeds,
                  "runs of the default (seeds) that make the loss envelope (default 3)")
      ->check(CLI::Range(2, 100))
      ->option_text("N");
  app->add_option("--max-configs", options.max_configs,
                  "configurations tried at most; a larger space, or one whose halving the budget "
                  "cannot hold, is sampled, the default always in; a budget below one trial of "
                  "each is refused (default 81)")
      ->check(CLI::Range(2, 10000))
      ->option_text("N");
  app->add_flag("--allow-result-changes", options.allow_result_changes,
                "let a configuration whose losses leave the default's seed envelope be promoted "
                "and recommended, marked 'changes results' (bf16, compile, another batch size)");
  app->add_option("--lr-rule", lr_rule,
                  "the learning rate at a batch_size other than the workload's: held, linear "
                  "(Goyal et al. 2017) or sqrt (Krizhevsky 2014) in the batch sizes' ratio "
                  "(default held)")
      ->check(CLI::IsMember({"held", "linear", "sqrt"}))
      ->option_text("RULE");
  app->add_option("--timeout", timeout, "seconds one trial may take (default: no limit)")
      ->check(CLI::PositiveNumber)
      ->option_text("S");
  app->add_option("--confirm", options.confirm,
                  "pairs of re-runs of the default and the best, interleaved, after the search; "
                  "their steps join the final rung's in the speed-up (default 2; 0: none)")
      ->check(CLI::Range(0, 100))
      ->option_text("N");
  app->add_option("--journal", options.journal,
                  "keep finished trials in FILE as they end; a run started again with the same "
                  "FILE (same workload, space and options; the budget may differ) takes them "
                  "from it instead of running them again")
      ->option_text("FILE");
  app->add_option("--vars", vars_path,
                  "write the best configuration as a plan's vars: map (YAML) to FILE")
      ->option_text("FILE");
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  if (options.max_steps < options.min_steps) {
    return Fail(Status::Invalid("", fmt::format("--max-steps {} is below --min-steps {}",
                                                options.max_steps, options.min_steps)));
  }
  Result<double> seconds = workload::ParseDuration(budget, "--budget");
  if (!seconds.ok()) return Fail(seconds.status());
  options.budget_s = *seconds;
  Result<const env::Knowledge*> knowledge = env::BuiltinKnowledge();
  if (!knowledge.ok()) return Fail(knowledge.status());
  Result<workload::TuneSpace> space = workload::LoadTuneSpace(space_path, **knowledge);
  if (!space.ok()) return Fail(space.status());
  options.space = std::move(space).value();
  Result<std::string> interpreter = workload::FindPython(python);
  if (!interpreter.ok()) return Fail(interpreter.status());
  options.run.python = *interpreter;
  options.run.workload = workload_name;
  options.run.device = backend == "cpu" ? "cpu" : fmt::format("cuda:{}", device);
  if (timeout > 0) options.run.timeout = timeout;
  if (common.threads > 0) options.run.settings["threads"] = common.threads;
  if (lr_rule != "held") options.run.settings["lr_rule"] = lr_rule;
  if (!common.quiet) {
    options.progress = [](std::string_view line) {
      std::fprintf(stderr, "parity tune: %.*s\n", static_cast<int>(line.size()), line.data());
    };
  }
  Result<workload::TuneReport> report = workload::RunTune(options);
  if (!report.ok()) return Fail(report.status());
  if (common.human()) std::fputs(workload::TuneText(*report).c_str(), stdout);
  if (Status s = WriteJsonOutput(common, workload::TuneJson(*report)); !s.ok()) return Fail(s);
  if (!vars_path.empty()) {
    if (Status s = WriteTextFile(vars_path, workload::TunePlanVars(*report)); !s.ok()) {
      return Fail(s);
    }
  }
  return report->best ? kExitOk : kExitCheckFailed;
}

}  // namespace parity::cli
