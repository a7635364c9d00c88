// SPDX-License-Identifier: Apache-2.0
#include "collect/stage_util.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/file_util.h"
#include "core/text.h"
#include "stress/command_template.h"

namespace parity::collect {

const std::vector<std::string>& CommandPlaceholders() {
  static const std::vector<std::string> kNames = {"out",     "bundle", "plan_dir", "level",
                                                  "backend", "parity", "stage"};
  return kNames;
}

Status CheckCommandKeys(const Json& params) {
  if (!params.contains("command")) return Status::Invalid("", "'command' is missing");
  std::vector<std::string> words = params["command"].get<std::vector<std::string>>();
  if (Status s = stress::CheckCommand(words, CommandPlaceholders()); !s.ok()) {
    return s.WithContext("command");
  }
  return Status::Ok();
}

Result<std::vector<std::string>> ExpandStageCommand(const StageRun& run) {
  const Json values = {{"out", run.stage_dir},     {"bundle", run.bundle_dir},
                       {"plan_dir", run.plan_dir}, {"level", run.level},
                       {"backend", run.backend},   {"parity", run.parity},
                       {"stage", run.name}};
  return stress::ExpandCommand(run.params["command"].get<std::vector<std::string>>(), values);
}

ProcessResult RunStageProcess(const StageRun& run, const std::vector<std::string>& argv) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.log_path = run.log_path;
  spec.timeout = run.timeout;
  // parity_dump records the platform fingerprint through this binary (`parity env`).
  if (!run.parity.empty()) spec.env["PARITY_BIN"] = run.parity;
  if (run.params.contains("env")) {
    for (const auto& [name, value] : run.params["env"].items()) {
      spec.env[name] = value.get<std::string>();
    }
  }
  spec.cwd = run.params.contains("cwd")
                 ? Resolve(run.plan_dir, run.params["cwd"].get<std::string>())
                 : run.plan_dir;
  return RunProcess(spec, run.stop);
}

StageOutcome RunStageCommand(const StageRun& run, std::vector<std::string>* argv,
                             ProcessResult* process) {
  auto expanded = ExpandStageCommand(run);
  if (!expanded.ok()) {
    StageOutcome outcome;
    outcome.reason = expanded.status().message();
    return outcome;
  }
  const ProcessResult ran = RunStageProcess(run, *expanded);
  if (argv != nullptr) *argv = *expanded;
  if (process != nullptr) *process = ran;
  return OutcomeOfCommand(run, ran);
}

void WriteStageResult(const StageRun& run, const std::string& file, const Json& doc,
                      StageOutcome& outcome) {
  const std::string path = fmt::format("{}/{}", run.stage_dir, file);
  if (Status s = WriteFileAtomically(path, {AsBytes(Dump(doc) + "\n")}); !s.ok()) {
    outcome.status = "error";
    outcome.reason = s.message();
    outcome.result.clear();
    return;
  }
  outcome.result = fmt::format("{}/{}", run.stage_rel, file);
}

StageOutcome OutcomeOfParity(const StageRun& run, const ProcessResult& process,
                             std::string_view failed_reason) {
  StageOutcome outcome;
  if (!process.started) {
    outcome.reason = process.Describe();
    return outcome;
  }
  if (process.interrupted || (process.signal == 0 && process.exit_code == 130)) {
    outcome.status = "interrupted";
    outcome.reason = "interrupted";
    return outcome;
  }
  const std::string error = LastParityError(LogTail(run.log_path, 1 << 16));
  if (process.timed_out || process.signal != 0) {
    outcome.reason = process.Describe();
    return outcome;
  }
  switch (process.exit_code) {
    case 0:
      outcome.status = "passed";
      break;
    case 1:
      outcome.status = "failed";
      outcome.reason = std::string(failed_reason);
      break;
    case 3:
      outcome.status = "skipped";
      outcome.reason = error.empty() ? "can't run here" : error;
      break;
    default:
      outcome.reason =
          error.empty() ? process.Describe() : fmt::format("{}: {}", process.Describe(), error);
  }
  return outcome;
}

StageOutcome OutcomeOfCommand(const StageRun& run, const ProcessResult& process) {
  StageOutcome outcome;
  if (process.interrupted) {
    outcome.status = "interrupted";
    outcome.reason = "interrupted";
  } else if (process.started && process.signal == 0 && !process.timed_out &&
             process.exit_code == 0) {
    outcome.status = "passed";
  } else {
    outcome.reason = process.Describe();
    const std::string last = LastLogLine(run.log_path);
    if (process.started && !last.empty()) outcome.reason += ": " + last;
  }
  return outcome;
}

Result<Json> ReadResultJson(const std::string& path, std::string_view format) {
  PARITY_ASSIGN_OR_RETURN(std::string text,
                          ReadSmallFile(path, std::size_t{256} << 20, "result file"));
  Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return Status::Invalid(path, "not a JSON object");
  if (!doc.contains("format") || doc["format"] != format) {
    return Status::Invalid(path, fmt::format("not a {} document", format));
  }
  return doc;
}

std::string BetterOfUnit(std::string_view unit) {
  if (unit == "s" || unit == "ms" || unit == "us" || unit == "ns") return "lower";
  if (unit.size() > 2 && unit.substr(unit.size() - 2) == "/s") return "higher";
  return "";
}

std::string Resolve(const std::string& dir, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return (std::filesystem::path(dir) / path).lexically_normal().string();
}

Status CheckRegularFile(const std::string& key, const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return Status::Invalid("", fmt::format("{}: {}: no such file", key, path));
  }
  if (!std::filesystem::is_regular_file(status)) {
    return Status::Invalid("", fmt::format("{}: {}: not a regular file", key, path));
  }
  return Status::Ok();
}

std::string LastLogLine(const std::string& log_path) {
  const std::string tail = LogTail(log_path, 4096);
  std::size_t end = tail.size();
  while (end > 0 && (tail[end - 1] == '\n' || tail[end - 1] == '\r' || tail[end - 1] == ' ')) {
    --end;
  }
  const std::size_t start = tail.rfind('\n', end == 0 ? 0 : end - 1);
  const std::size_t from = start == std::string::npos ? 0 : start + 1;
  return Printable(tail.substr(from, end - from));
}

}  // namespace parity::collect
