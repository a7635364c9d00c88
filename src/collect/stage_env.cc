// SPDX-License-Identifier: Apache-2.0
// The env stage: the platform fingerprint (env::Fingerprint(), and the devices `parity devices`
// finds, asked in a child process), a parity-env document like `parity env --json`.
#include <fmt/format.h>

#include "collect/stage_kinds.h"
#include "collect/stage_util.h"
#include "core/file_util.h"
#include "env/fingerprint.h"

namespace parity::collect {
namespace {

class EnvStage final : public StageKind {
 public:
  std::string_view name() const override { return "env"; }
  std::string_view summary() const override {
    return "the platform fingerprint: host, devices, settings; a parity-env document";
  }
  std::span<const KeySpec> keys() const override { return {}; }
  Status Check(const Json&, const CheckContext&) const override { return Status::Ok(); }
  double Estimate(const Json&) const override { return 1.0; }

  StageOutcome Run(const StageRun& run) const override {
    StageOutcome outcome;
    Json doc = env::EnvDocument({}, Json());
    const std::string devices_path = run.stage_dir + "/devices.json";
    const ProcessResult process =
        RunStageProcess(run, {run.parity, "devices", "--json", devices_path, "--quiet"});
    // `parity devices` exits 3 when no backend has a device; its document still says why.
    auto devices = ReadResultJson(devices_path, "parity-devices");
    if (devices.ok()) {
      doc["devices"] = std::move(devices).value();
    } else {
      doc["devices_error"] = process.started && process.exit_code != 0
                                 ? fmt::format("parity devices: {}", process.Describe())
                                 : devices.status().message();
    }
    outcome.status = "passed";
    WriteStageResult(run, "env.json", doc, outcome);
    const Json& cpu = doc["host"].contains("cpu") ? doc["host"]["cpu"] : Json::object();
    if (cpu.contains("model")) outcome.summary["cpu"] = cpu["model"];
    if (doc["host"].contains("hostname")) outcome.summary["hostname"] = doc["host"]["hostname"];
    return outcome;
  }
};

}  // namespace

const StageKind& EnvStageKind() {
  static const EnvStage kind;
  return kind;
}

}  // namespace parity::collect
