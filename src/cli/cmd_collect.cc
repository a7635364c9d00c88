// SPDX-License-Identifier: Apache-2.0
// parity collect: an acceptance plan run on this machine into a bundle.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/common.h"
#include "collect/collect.h"
#include "collect/plan.h"
#include "collect/stage.h"
#include "core/exit_code.h"
#include "core/interrupt.h"
#include "store/store.h"

namespace parity::cli {
namespace {

std::string SelfPath() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("parity") : path.string();
}

std::string KindsHelp() {
  std::string text;
  for (const collect::StageKind* kind : collect::StageKinds()) {
    std::string keys;
    for (const collect::KeySpec& k : kind->keys())
      keys += fmt::format("{}{}", keys.empty() ? "" : ", ", std::string(k.key));
    text += fmt::format("\n  {:<9}{}", kind->name(), kind->summary());
    if (!keys.empty()) text += fmt::format("\n           keys: {}", keys);
  }
  return text;
}

}  // namespace

int RunCollect(int argc, char** argv) {
  CommonOptions common;
  collect::CollectOptions options;
  std::string plan_path, db_path, redo;
  bool no_store = false, check = false;
  auto app = MakeApp(
      "collect",
      "Run an acceptance plan (YAML) on this machine and write the evidence into a bundle "
      "directory: manifest.json, one result per stage, telemetry.jsonl, logs. Levels include the "
      "ones below: 1 about a minute (env, quick bench, monitor), 2 about ten minutes (full bench, "
      "dumps, quality inputs), 3 about an hour (stress with fault drills), 4 hours (soak). "
      "Rerunning on the same bundle keeps the stages that finished with the same settings and "
      "runs the rest, so an interrupted collect resumes. Each collect is recorded in the results "
      "store (parity history). Exit 0 when every stage that ran passed, 1 when one failed or "
      "could not produce its result, 2 on a bad plan or bundle, 3 when nothing could run here, 130 "
      "when "
      "interrupted.\n\nStage kinds "
      "(every stage also takes name, level, by_level, timeout, estimate, description):" +
          KindsHelp(),
      &common);
  app->add_option("plan", plan_path, "the plan (YAML); examples/plan.yaml runs on any CPU")
      ->required();
  app->add_option("-o,--output", options.bundle, "the bundle directory (made, or resumed)")
      ->option_text("BUNDLE");
  app->add_option("--level", options.level, "1 to 4 (default 1)")
      ->check(CLI::Range(1, collect::kMaxLevel))
      ->option_text("N");
  app->add_option("--backend", options.backend,
                  "backend of the bench and stress stages (default: "
                  "the plan's)")
      ->option_text("B");
  app->add_option("--db", db_path,
                  "the results store (default $XDG_DATA_HOME/parity/parity.db, else "
                  "~/.local/share/parity/parity.db)")
      ->option_text("PATH");
  app->add_flag("--no-store", no_store, "do not record the run in the results store");
  app->add_option("--redo", redo, "stages to run again even when the bundle holds their result")
      ->option_text("LIST");
  std::vector<std::string> var_args;
  app->add_option("--var", var_args,
                  "set one of the plan's vars (repeatable): {var.NAME} in its stages takes VALUE")
      ->option_text("NAME=VALUE");
  app->add_flag("--check", check, "check the plan and exit (0 valid, 2 not)");
  if (auto code = Parse(*app, common, argc, argv)) return *code;

  std::map<std::string, std::string> vars;
  for (const std::string& arg : var_args) {
    const std::size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Fail(Status::Invalid("--var", fmt::format("'{}' is not NAME=VALUE", arg)));
    }
    vars[arg.substr(0, eq)] = arg.substr(eq + 1);
  }
  auto plan = collect::LoadPlan(plan_path, vars);
  if (!plan.ok()) return Fail(plan.status());
  if (check) {
    if (common.human()) {
      std::printf("%s: plan '%s', %zu stages\n", plan_path.c_str(), plan->name.c_str(),
                  plan->stages.size());
    }
    return kExitOk;
  }
  if (options.bundle.empty()) return Fail(Status::Invalid("", "-o BUNDLE is required"));
  for (const std::string& name : SplitList(redo)) {
    bool found = false;
    for (const collect::PlanStage& s : plan->stages) found = found || s.name == name;
    if (!found)
      return Fail(Status::Invalid("--redo", fmt::format("the plan has no stage '{}'", name)));
    options.redo.push_back(name);
  }
  if (!no_store) {
    options.db_path = db_path.empty() ? store::DefaultPath() : db_path;
    if (options.db_path.empty()) {
      Warn("no results store (XDG_DATA_HOME and HOME unset, no --db): the run is not recorded");
    }
  }
  options.parity = SelfPath();
  const ScopedStopFlag stop_flag;
  options.stop = &StopFlag();
  if (!common.quiet) {
    options.progress = stderr;
    options.tty = ::isatty(STDERR_FILENO) != 0;
  }
  ::signal(SIGPIPE, SIG_IGN);

  auto run = collect::RunCollect(*plan, options);
  if (!run.ok()) return Fail(run.status());
  if (!run->store_problem.empty()) {
    Warn(fmt::format("results store {}: {}; the run is not recorded", options.db_path,
                     run->store_problem));
  }
  if (common.human()) std::fputs(collect::CollectText(*run).c_str(), stdout);
  if (Status s = WriteJsonOutput(common, run->manifest); !s.ok()) return Fail(s);
  if (run->interrupted) {
    std::fprintf(stderr, "parity: interrupted; run the same command again to resume\n");
    return kExitInterrupted;
  }
  if (run->failed + run->errors > 0) return kExitCheckFailed;
  if (run->passed == 0 && run->unavailable > 0) {
    std::fprintf(stderr,
                 "parity: error: nothing asked for can run here: every stage was "
                 "skipped (reasons above)\n");
    return kExitUnavailable;
  }
  return kExitOk;
}

}  // namespace parity::cli
