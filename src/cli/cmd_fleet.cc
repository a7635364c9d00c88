// SPDX-License-Identifier: Apache-2.0
// parity fleet collect PLAN -o FLEET_DIR (under mpirun) | parity fleet report FLEET_DIR: every
// node's bundle gathered on rank 0, and the members that fall behind the fleet.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/common.h"
#include "collect/plan.h"
#include "core/exit_code.h"
#include "fleet/fleet_collect.h"
#include "fleet/fleet_record.h"
#include "fleet/fleet_report.h"
#include "fleet/mpi_session.h"
#include "store/store.h"

namespace parity::cli {
namespace {

// slow:rank=R[,factor=F] or kill:rank=R[,after=S].
Status ParseInject(const std::string& text, fleet::FleetCollectOptions* options) {
  int rank = -1;
  double value = 0.0;
  char tail = 0;
  auto bad = [&] {
    return Status::Invalid("", fmt::format("--inject: '{}' is not slow:rank=R[,factor=F] or "
                                           "kill:rank=R[,after=S]",
                                           text));
  };
  if (text.rfind("slow:", 0) == 0) {
    const int n = std::sscanf(text.c_str(), "slow:rank=%d,factor=%lf%c", &rank, &value, &tail);
    if (!(n == 1 || n == 2) || rank < 0 || (n == 2 && !(value > 1.0 && value <= 100.0))) {
      return bad();
    }
    options->slow_rank = rank;
    if (n == 2) options->slow_factor = value;
  } else if (text.rfind("kill:", 0) == 0) {
    const int n = std::sscanf(text.c_str(), "kill:rank=%d,after=%lf%c", &rank, &value, &tail);
    if (!(n == 1 || n == 2) || rank < 0 || (n == 2 && !(value >= 0.0 && value < 1e6))) {
      return bad();
    }
    options->kill_rank = rank;
    if (n == 2) options->kill_after = value;
  } else {
    return bad();
  }
  options->inject = text;
  return Status::Ok();
}

std::string SelfPath() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("parity") : path.string();
}

/// Records the fleet in the results store (rank 0); a store that cannot be written is a warning,
/// as for collect: the fleet directory holds everything.
void RecordFleet(const fleet::FleetCollectRun& run, const std::string& plan_name,
                 const std::string& level, const std::string& backend, const std::string& fleet_dir,
                 const std::string& db_path) {
  const std::string path = db_path.empty() ? store::DefaultPath() : db_path;
  if (path.empty()) {
    Warn("no results store (XDG_DATA_HOME and HOME unset, no --db): the fleet is not recorded");
    return;
  }
  std::optional<int> level_number;
  if (!level.empty()) level_number = std::atoi(level.c_str());
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const store::RunRecord record =
      fleet::FleetRunRecord(run.manifest, plan_name, level_number, backend, fleet_dir, now);
  Result<std::unique_ptr<store::Store>> db = store::Store::Open(path);
  const Status recorded = db.ok() ? (*db)->Record(record) : db.status();
  if (!recorded.ok()) {
    Warn(fmt::format("results store {}: {}; the fleet is not recorded", path, recorded.message()));
  }
}

int RunFleetCollect(int argc, char** argv) {
  CommonOptions common;
  fleet::FleetCollectOptions options;
  std::string level, backend, inject, db_path;
  bool no_store = false;
  std::vector<std::string> vars;
  auto app = MakeApp(
      "fleet collect",
      "Under mpirun (or srun), one rank per node, or per device with --per-device: every rank "
      "runs 'parity collect PLAN' on its own machine with a time limit and sends its bundle to "
      "rank 0, which writes FLEET_DIR/fleet.json and FLEET_DIR/nodes/NAME/. A member whose "
      "collect fails, is killed or outlasts --timeout is recorded as failed and the others "
      "finish. Rank 0 records the fleet as one run (kind fleet, a stage per member) in the "
      "results store (parity history, parity serve). Exit 0 when every member collected, 1 "
      "when any failed.",
      &common);
  app->add_option("plan", options.plan, "the plan (YAML), readable on every node")->required();
  app->add_option("-o,--output", options.fleet_dir, "the fleet directory (new or empty)")
      ->required();
  app->add_option("--timeout", options.timeout,
                  "seconds one member's collect may take (default 3600)")
      ->check(CLI::Range(1.0, 1e7))
      ->option_text("S");
  app->add_flag("--per-device", options.per_device,
                "one member per device: the ranks of a node take devices 0, 1, ... "
                "(CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES)");
  app->add_flag("--sequential", options.sequential,
                "members collect one at a time, in rank order: for members that share a host's "
                "CPUs and memory, whose benchmarks would otherwise measure each other");
  app->add_option("--level", level, "passed to each collect: 1 to 4")->option_text("L");
  app->add_option("--backend", backend, "passed to each collect")->option_text("NAME");
  app->add_option("--var", vars, "passed to each collect: K=V")->option_text("K=V");
  app->add_option("--work-dir", options.work_dir,
                  "where each rank collects before sending its bundle (default $TMPDIR or /tmp)")
      ->option_text("DIR");
  app->add_option("--inject", inject,
                  "for tests: slow:rank=R[,factor=F] makes rank R's CPU benchmarks take F times "
                  "as long (default 4); kill:rank=R[,after=S] kills rank R's collect after S "
                  "seconds (default 2)")
      ->option_text("FAULT");
  app->add_option("--db", db_path,
                  "the results store rank 0 records the fleet in (default $XDG_DATA_HOME/parity/"
                  "parity.db, else ~/.local/share/parity/parity.db)")
      ->option_text("PATH");
  app->add_flag("--no-store", no_store, "do not record the fleet in the results store");
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  if (!inject.empty()) {
    if (Status s = ParseInject(inject, &options); !s.ok()) return Fail(s);
  }
  std::map<std::string, std::string> var_map;
  for (const std::string& v : vars) {
    const auto eq = v.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Fail(Status::Invalid("", fmt::format("--var: '{}' is not K=V", v)));
    }
    var_map[v.substr(0, eq)] = v.substr(eq + 1);
    options.collect_args.insert(options.collect_args.end(), {"--var", v});
  }
  if (!level.empty()) options.collect_args.insert(options.collect_args.end(), {"--level", level});
  if (!backend.empty()) {
    options.collect_args.insert(options.collect_args.end(), {"--backend", backend});
  }
  // A plan that does not load is the user's error, before any rank starts.
  auto plan = collect::LoadPlan(options.plan, var_map);
  if (!plan.ok()) return Fail(plan.status());
  options.plan = std::filesystem::absolute(options.plan).string();
  options.parity_bin = SelfPath();

  // srun without PMIx: every task would start a fleet of its own.
  if (Status s = fleet::CheckSlurmStep(); !s.ok()) return Fail(s, fleet::ReportsStartFailure());
  // The collect needs nothing from the other ranks: it runs while MPI starts.
  std::optional<fleet::EarlyCollect> early;
  if (fleet::MayStartEarly(options)) early.emplace(options);
  Result<fleet::MpiSession> session = fleet::MpiSession::Start();
  if (!session.ok()) return Fail(session.status(), fleet::ReportsStartFailure());
  const bool root = session->rank() == 0;
  for (const std::optional<int>& injected : {options.slow_rank, options.kill_rank}) {
    if (injected && *injected >= session->size()) {
      if (root) {
        Fail(Status::Invalid(
            "", fmt::format("--inject: rank {} is not one of the {} ranks (0 to {})", *injected,
                            session->size(), session->size() - 1)));
      }
      return kExitUsage;
    }
  }
  if (root && !common.quiet) {
    options.progress = [](std::string_view line) {
      std::fprintf(stderr, "parity fleet: %.*s\n", static_cast<int>(line.size()), line.data());
    };
  }
  Result<fleet::FleetCollectRun> run =
      fleet::FleetCollect(*session, options, early ? &*early : nullptr);
  if (!run.ok()) return Fail(run.status(), root);
  if (!root) return run->failed > 0 ? kExitCheckFailed : kExitOk;
  if (common.human()) {
    std::string text = fmt::format("parity fleet collect: {} members into {}\n", session->size(),
                                   options.fleet_dir);
    for (const Json& m : run->manifest["members"]) {
      text += fmt::format("  {:<28} rank {:<4} {:<7} {:>8.1f} s  {}\n", m.value("name", ""),
                          m.value("rank", 0), m.value("status", "") == "ok" ? "ok" : "FAILED",
                          m.value("seconds", 0.0), m.value("reason", ""));
    }
    text += fmt::format("{} ok, {} failed; {:.1f} s (slowest collect {:.1f} s)\n",
                        session->size() - run->failed, run->failed,
                        run->manifest["duration_s"].get<double>(),
                        run->manifest["collect_seconds_max"].get<double>());
    std::fputs(text.c_str(), stdout);
  }
  if (!no_store) {
    RecordFleet(*run, plan->name, level, backend, options.fleet_dir, db_path);
  }
  if (Status s = WriteJsonOutput(common, run->manifest); !s.ok()) return Fail(s);
  if (!run->silent.empty()) {
    std::fflush(nullptr);
    std::fprintf(stderr, "parity: error: %zu rank(s) never answered: ending the job\n",
                 run->silent.size());
    session->Abort(kExitCheckFailed);
  }
  return run->failed > 0 ? kExitCheckFailed : kExitOk;
}

int RunFleetReport(int argc, char** argv) {
  CommonOptions common;
  std::string dir;
  fleet::FleetReportOptions options;
  auto app = MakeApp(
      "fleet report",
      "Per benchmark of a fleet directory: the fleet's median and median absolute deviation "
      "(MAD) over its members, and the outliers, members more than k MAD on the slow side of "
      "the median (the spread counted is at least 1% of the median), each with the fingerprint "
      "keys (driver, firmware, clocks, PCIe link, settings) where it differs from the fleet's "
      "commonest value. Exit 1 when any outlier is found or any member failed.",
      &common);
  app->add_option("fleet", dir, "the fleet directory 'parity fleet collect' wrote")->required();
  app->add_option("--k", options.k, "MADs from the median that make an outlier (default 3)")
      ->check(CLI::Range(0.1, 1000.0))
      ->option_text("K");
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  auto report = fleet::MakeFleetReport(dir, options);
  if (!report.ok()) return Fail(report.status());
  if (common.human()) std::fputs(fleet::FleetReportText(*report, options).c_str(), stdout);
  if (Status s = WriteJsonOutput(common, fleet::FleetReportJson(*report, options)); !s.ok()) {
    return Fail(s);
  }
  return report->outliers > 0 || !report->failed.empty() ? kExitCheckFailed : kExitOk;
}

}  // namespace

int RunFleet(int argc, char** argv) {
  static const std::vector<Subcommand> kSubcommands = {
      {"collect",
       "under mpirun: every node (or device) collects a plan; rank 0 gathers the "
       "bundles into a fleet directory",
       RunFleetCollect},
      {"report",
       "per benchmark, the fleet's median and spread, and the outliers with the "
       "fingerprint differences that might explain them",
       RunFleetReport},
  };
  return DispatchSubcommand("fleet", "Usage: parity fleet <subcommand> [options]", kSubcommands,
                            argc, argv);
}

}  // namespace parity::cli
