// SPDX-License-Identifier: Apache-2.0
// parity replay DUMP: each recorded op against its float64 replay on the recorded inputs.
#include <cstdio>
#include <string>

#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "core/memory.h"
#include "oracle/replay.h"

namespace parity::cli {

int RunReplay(int argc, char** argv) {
  CommonOptions common;
  ReplayOptions options;
  std::optional<int64_t> seq;
  std::string name;
  auto app = MakeApp(
      "replay",
      "Replay each op call of a parity-dump directory in float64 on the inputs, params and "
      "attrs it recorded, and compare the recorded output with it: how accurate this "
      "platform's operator was on what it was given. Each output is judged by the `auto` "
      "tolerance of `parity compare` (lambda*sqrt(K)*u with the platform's declared compute "
      "precision, per output and, where the op gives it, per element against its own "
      "summands); random ops (dropout) are 'not judged', their drop rate checked against p; "
      "ops without a replay are SKIP with the reason. Exit 1 when any op is outside its bound "
      "or a drop rate is not p.",
      &common);
  app->add_option("dump", options.dump, "a parity-dump directory")->required();
  app->add_option("--seq", seq, "only the record with this seq");
  app->add_option("--name", name, "only records whose name matches this glob")->option_text("NAME");
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  options.seq = seq;
  if (!name.empty()) options.name = name;
  ReuseFreedMemory();
  auto report = parity::RunReplay(options);
  if (!report.ok()) return Fail(report.status());
  if (report->ops.empty()) {
    return Fail(Status::Invalid(options.dump, options.seq || options.name
                                                  ? "no record matches --seq/--name"
                                                  : "the dump holds no records"));
  }
  if (common.human()) {
    std::fputs(ReplayReportText(*report).c_str(), stdout);
  } else {
    for (const std::string& w : report->warnings) Warn(w);
  }
  if (Status s = WriteJsonOutput(common, ReplayReportJson(*report)); !s.ok()) return Fail(s);
  return report->outside > 0 ? kExitCheckFailed : kExitOk;
}

}  // namespace parity::cli
