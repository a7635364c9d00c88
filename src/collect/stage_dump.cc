// SPDX-License-Identifier: Apache-2.0
// The dump stage: a command that writes a parity-dump directory (a script using parity_dump),
// checked to be a readable dump afterwards.
#include <fmt/format.h>

#include "collect/stage_kinds.h"
#include "collect/stage_util.h"
#include "io/dump.h"

namespace parity::collect {
namespace {

constexpr KeySpec kKeys[] = {
    {"command", ValueType::kCommand},
    {"env", ValueType::kStringMap},
    {"cwd", ValueType::kString},
    {"dir", ValueType::kString},
};

class DumpStage final : public StageKind {
 public:
  std::string_view name() const override { return "dump"; }
  std::string_view summary() const override {
    return "a command that writes a parity-dump directory into {out}, checked afterwards";
  }
  std::span<const KeySpec> keys() const override { return kKeys; }

  Status Check(const Json& params, const CheckContext&) const override {
    PARITY_RETURN_IF_ERROR(CheckCommandKeys(params));
    if (params.contains("dir")) {
      const std::string dir = params["dir"].get<std::string>();
      if (dir.empty() || dir[0] == '/' || dir.find("..") != std::string::npos) {
        return Status::Invalid("", "'dir' must be a relative path inside the stage's directory");
      }
    }
    return Status::Ok();
  }

  double Estimate(const Json&) const override { return 60.0; }

  StageOutcome Run(const StageRun& run) const override {
    StageOutcome outcome = RunStageCommand(run);
    if (outcome.status != "passed") return outcome;
    const std::string sub = StringField(run.params, "dir");
    const std::string dir = sub.empty() ? run.stage_dir : run.stage_dir + "/" + sub;
    auto dump = DumpDir::Open(dir);
    if (!dump.ok()) {
      outcome.status = "error";
      outcome.reason =
          fmt::format("the command wrote no readable dump: {}", dump.status().message());
      return outcome;
    }
    std::size_t tensors = 0;
    for (const DumpRecord& r : dump->records()) {
      tensors += r.inputs.size() + r.outputs.size() + r.params.size();
    }
    outcome.result = sub.empty() ? run.stage_rel : run.stage_rel + "/" + sub;
    outcome.summary = {
        {"records", dump->records().size()}, {"tensors", tensors}, {"warnings", dump->warnings()}};
    return outcome;
  }
};

}  // namespace

const StageKind& DumpStageKind() {
  static const DumpStage kind;
  return kind;
}

}  // namespace parity::collect
