// SPDX-License-Identifier: Apache-2.0
// parity compare A B [--golden G]: per-tensor metrics, derived tolerances and verdicts.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/common.h"
#include "compare/compare.h"
#include "core/exit_code.h"
#include "core/file_util.h"

namespace parity::cli {

int RunCompare(int argc, char** argv) {
  CommonOptions common;
  CompareOptions options;
  std::string golden, tol_file, csv_path, compute;
  std::optional<double> rtol, atol, tiny;
  std::optional<int64_t> k;
  auto app = MakeApp(
      "compare",
      "Compare the tensors of A and B: two tensor files, two directories of tensor files, or two "
      "parity-dump directories. Each pair gets every metric (max_abs, rmse, max_rel, cosine, ulp "
      "distances, NaN/Inf mismatches...) and a verdict against a tolerance; by default (--tol "
      "auto) the tolerance is derived from the dtype's unit roundoff, the op's reduction length "
      "K and the magnitude of its summands: lambda*sqrt(K)*u. B is the reference for relative "
      "measures. A pair with a tensor parity does not compare (one a dump does not hold, "
      "a complex dtype) is SKIP, not compared, with the reason: neither passed nor failed. Exit "
      "0 when no pair fails, 1 when any fails.",
      &common);
  app->add_option("a", options.a, "baseline: file, directory or dump directory")->required();
  app->add_option("b", options.b, "candidate, of the same kind")->required();
  app->add_option("--golden", golden,
                  "a third run or a float64 reference: B passes when its error against it is no "
                  "worse than --ratio times A's")
      ->option_text("G");
  app->add_option("--only", options.only,
                  "compare only tensors whose name matches GLOB (repeatable)")
      ->option_text("GLOB")
      ->allow_extra_args(false)  // one GLOB per --only; what follows is A and B
      ->take_all();
  app->add_option("--tol", options.tolerance.policy, "tolerance policy")
      ->check(CLI::IsMember({"auto", "torch", "exact"}))
      ->default_str("auto");
  app->add_option("--rtol", rtol, "explicit relative tolerance")->check(CLI::NonNegativeNumber);
  app->add_option("--atol", atol, "explicit absolute tolerance")->check(CLI::NonNegativeNumber);
  app->add_option("--tol-file", tol_file,
                  "YAML list of {match: GLOB, rtol:, atol:} or {match: GLOB, policy:}; the "
                  "first match wins")
      ->option_text("FILE");
  app->add_option("--k", k, "reduction length for `auto` when no dump record says it")
      ->check(CLI::PositiveNumber);
  app->add_option("--compute", compute,
                  "compute precision for `auto` (default: from the dump "
                  "manifest, else float32)")
      ->check(CLI::IsMember({"float32", "tf32", "bfloat16", "float16", "float64"}));
  app->add_option("--lambda", options.tolerance.lambda, "the bound's lambda")
      ->check(CLI::PositiveNumber)
      ->default_str("6");
  app->add_option("--ratio", options.ratio, "with --golden: how much worse B may be than A")
      ->check(CLI::PositiveNumber)
      ->default_str("2");
  app->add_option("--tiny", tiny,
                  "|b| below this is judged by max_abs_small, not relative error (default: "
                  "the dtype's smallest normal)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--worst", options.worst, "how many worst elements to report")
      ->check(CLI::Range(0, 1000))
      ->default_str("5");
  app->add_option("--csv", csv_path, "write one CSV row per tensor to FILE")->option_text("FILE");
  if (auto code = Parse(*app, common, argc, argv)) return *code;

  if (!golden.empty()) options.golden = golden;
  options.tolerance.rtol = rtol;
  options.tolerance.atol = atol;
  options.tolerance.k = k;
  options.tiny = tiny;
  if (!compute.empty()) options.tolerance.compute = compute;
  if (!tol_file.empty()) {
    auto rules = LoadToleranceRules(tol_file);
    if (!rules.ok()) return Fail(rules.status());
    options.rules = std::move(rules).value();
  }
  auto report = parity::RunCompare(options);
  if (!report.ok()) return Fail(report.status());
  if (report->tensors.empty()) {
    return Fail(Status::Invalid("", options.only.empty()
                                        ? "nothing to compare: no tensors found"
                                        : "nothing to compare: --only matched no tensor"));
  }
  if (common.human()) {
    std::fputs(CompareReportText(*report).c_str(), stdout);
  } else {
    for (const std::string& w : report->warnings) Warn(w);
  }
  if (Status s = WriteJsonOutput(common, CompareReportJson(*report)); !s.ok()) return Fail(s);
  if (!csv_path.empty()) {
    if (Status s = WriteTextFile(csv_path, CompareReportCsv(*report)); !s.ok()) return Fail(s);
  }
  return report->failed > 0 ? kExitCheckFailed : kExitOk;
}

}  // namespace parity::cli
