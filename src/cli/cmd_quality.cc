// SPDX-License-Identifier: Apache-2.0
// parity quality auc|logloss|accuracy: model quality of B against A on the same evaluation set.
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "core/memory.h"
#include "quality/curve.h"
#include "quality/quality.h"

namespace parity::cli {
namespace {

int RunMetric(const std::string& metric, int argc, char** argv) {
  CommonOptions common;
  QualityOptions options;
  options.metric = metric;
  bool absolute = false, relative = false, allow_inconclusive = false;
  std::string column;
  auto app = MakeApp(
      "quality " + metric,
      fmt::format(
          "Is B's {} at parity with A's on the same evaluation set? One score file per side: "
          "the paired test ({}). Several per side (one per seed): per-side mean and sd, "
          "Welch's t-test. Either way, two one-sided tests (TOST) of equivalence within the "
          "margin (default 0.15% of A's value, --margin 0.0015 --relative). Verdict pass "
          "(equivalent within the margin), fail (different beyond it) or inconclusive (exit 1 "
          "unless --allow-inconclusive). Files: .npy/.npz/.safetensors of one tensor, or text "
          "with one value per line (or CSV with --column).",
          metric,
          metric == "auc" ? "DeLong, Sun & Xu's O(n log n) algorithm"
                          : "mean of the per-sample differences"),
      &common);
  app->add_option("--labels", options.labels, "labels, 0 or 1 per sample")
      ->required()
      ->option_text("FILE");
  app->add_option("--a", options.a, "A's scores: one file per run (seed)")
      ->required()
      ->expected(1, -1)
      ->option_text("FILE...");
  app->add_option("--b", options.b, "B's scores: one file per run (seed)")
      ->required()
      ->expected(1, -1)
      ->option_text("FILE...");
  app->add_option("--column", column, "the CSV column to read from text files")
      ->option_text("NAME");
  app->add_option("--margin", options.margin, "equivalence margin (default 0.0015)")
      ->check(CLI::NonNegativeNumber)
      ->option_text("M");
  auto* rel = app->add_flag("--relative", relative, "margin as a share of A's value (default)");
  app->add_flag("--absolute", absolute, "margin in the metric's units")->excludes(rel);
  app->add_option("--bootstrap", options.bootstrap,
                  "also a stratified bootstrap CI of the difference, with N replicates")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000}))
      ->option_text("N");
  app->add_option("--seed", options.seed, "the bootstrap's seed (default 0)")->option_text("S");
  if (metric == "accuracy") {
    app->add_option("--threshold", options.threshold,
                    "a score at or above it predicts the positive class (default 0.5)")
        ->option_text("T");
  }
  app->add_flag("--allow-inconclusive", allow_inconclusive, "exit 0 on an inconclusive verdict");
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  options.relative = !absolute;
  if (!column.empty()) options.column = column;
  ReuseFreedMemory();
  auto report = RunQuality(options);
  if (!report.ok()) return Fail(report.status());
  if (common.human()) std::fputs(QualityReportText(*report).c_str(), stdout);
  if (Status s = WriteJsonOutput(common, QualityReportJson(*report)); !s.ok()) return Fail(s);
  if (report->verdict == "pass") return kExitOk;
  if (report->verdict == "inconclusive" && allow_inconclusive) return kExitOk;
  return kExitCheckFailed;
}

int RunCurveCommand(int argc, char** argv) {
  CommonOptions common;
  CurveOptions options;
  bool absolute = false, relative = false, allow_inconclusive = false;
  auto app = MakeApp(
      "quality curve",
      "Two platforms' training curves: CSV files with a header (step and value columns), one "
      "file per run (seed) per side. Step by step, B's mean against A's seed envelope (min to "
      "max over A's runs) and the first step from which B stays outside it; the final values "
      "compared by Welch's t-test and TOST within the margin (two or more runs per side). "
      "Verdict pass, fail or inconclusive (exit 1 unless --allow-inconclusive).",
      &common);
  app->add_option("--a", options.a, "A's curves, one CSV per run")
      ->required()
      ->expected(1, -1)
      ->option_text("FILE...");
  app->add_option("--b", options.b, "B's curves, one CSV per run")
      ->required()
      ->expected(1, -1)
      ->option_text("FILE...");
  app->add_option("--step-column", options.step_column, "default: step")->option_text("NAME");
  app->add_option("--value-column", options.value_column, "default: value")->option_text("NAME");
  app->add_option("--patience", options.patience,
                  "steps outside the envelope in a row that make a departure (default 3)")
      ->check(CLI::PositiveNumber)
      ->option_text("N");
  app->add_option("--margin", options.margin, "final-value margin (default 0.0015)")
      ->check(CLI::NonNegativeNumber)
      ->option_text("M");
  auto* rel = app->add_flag("--relative", relative, "margin as a share of A's final value");
  app->add_flag("--absolute", absolute, "margin in the curve's units")->excludes(rel);
  app->add_flag("--allow-inconclusive", allow_inconclusive, "exit 0 on inconclusive");
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  options.relative = !absolute;
  auto report = RunCurve(options);
  if (!report.ok()) return Fail(report.status());
  if (common.human()) std::fputs(CurveReportText(*report).c_str(), stdout);
  if (Status s = WriteJsonOutput(common, CurveReportJson(*report)); !s.ok()) return Fail(s);
  if (report->verdict == "pass") return kExitOk;
  if (report->verdict == "inconclusive" && allow_inconclusive) return kExitOk;
  return kExitCheckFailed;
}

}  // namespace

int RunQuality(int argc, char** argv) {
  std::vector<Subcommand> subcommands;
  for (std::string_view metric : QualityMetrics()) {
    subcommands.push_back({std::string(metric),
                           fmt::format("{} of B against A on the same evaluation set", metric),
                           [](int n, char** args) { return RunMetric(args[0], n, args); }});
  }
  subcommands.push_back(
      {"curve", "training curves: B against A's seed envelope, final values", RunCurveCommand});
  return DispatchSubcommand(
      "quality",
      "Usage: parity quality <metric> --labels L --a A [A2 ...] --b B [B2 ...] [options]\n"
      "       parity quality curve --a A.csv [A2.csv ...] --b B.csv [...] [options]",
      subcommands, argc, argv);
}

}  // namespace parity::cli
