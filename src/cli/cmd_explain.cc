// SPDX-License-Identifier: Apache-2.0
// parity explain A B: where a divergence between two dumps starts, and why.
#include <cstdio>
#include <string>

#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "core/memory.h"
#include "explain/explain.h"

namespace parity::cli {

int RunExplain(int argc, char** argv) {
  CommonOptions common;
  ExplainOptions options;
  std::string name;
  auto app = MakeApp(
      "explain",
      "Attribute the differences between two parity-dump directories (A trusted, B candidate) "
      "to causes. Records are matched by (rank, step, name, pass, call), then seq; each matched "
      "call is replayed in float64 on the inputs each side saw, and gets one label: identical, "
      "within-rounding, reduced-precision (tf32/bf16/fp16, inferred by the grid test and by "
      "replays with rounded inputs; fp16|tf32 where neither the data nor the manifest tells "
      "those two apart), rng-divergence (dropout masks that differ but agree in "
      "rate), nonfinite (NaN/Inf first appears here), inherited (accurate on its own inputs), "
      "algorithmic (beyond every bound, reproduced by no precision variant), structural, or "
      "not-judged (a tensor the dumps do not hold, statistics that cannot tell, or a bound "
      "both runs exceed by comparable errors; never an origin). Origins (labels other than "
      "identical, within-rounding, inherited and not-judged) come first, with the user's source "
      "line where recorded, after "
      "what each dump covers and, for version 2 dumps, the first step whose generator states "
      "differ and the GradScaler's scales and skipped steps on each side. Exit 1 "
      "when an origin or an input-data difference is found, 0 otherwise.",
      &common);
  app->add_option("a", options.a, "the trusted run's dump directory")->required();
  app->add_option("b", options.b, "the candidate run's dump directory")->required();
  app->add_option("--name", name, "only records whose name matches this glob")->option_text("GLOB");
  app->add_option("--slowest", options.slowest,
                  "how many ops slowest on B relative to A to list (records with time_us)")
      ->option_text("N")
      ->check(CLI::NonNegativeNumber);
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  if (!name.empty()) options.name = name;
  ReuseFreedMemory();
  auto report = parity::RunExplain(options);
  if (!report.ok()) return Fail(report.status());
  if (report->ops.empty()) {
    return Fail(Status::Invalid(
        options.a, options.name ? "no record matches --name" : "the dumps hold no records"));
  }
  if (common.human()) {
    std::fputs(ExplainReportText(*report).c_str(), stdout);
  } else {
    for (const std::string& w : report->warnings) Warn(w);
  }
  if (Status s = WriteJsonOutput(common, ExplainReportJson(*report)); !s.ok()) return Fail(s);
  return report->exit_code() == 0 ? kExitOk : kExitCheckFailed;
}

}  // namespace parity::cli
