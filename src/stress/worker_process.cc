// SPDX-License-Identifier: Apache-2.0
#include "stress/worker_process.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "stress/command_template.h"

namespace parity::stress {
namespace {

constexpr std::size_t kMaxLine = std::size_t{1} << 20;

}  // namespace

Result<std::vector<std::string>> WorkerArgv(const StressOptions& options,
                                            const WorkerLaunch& launch) {
  if (options.workload == "exec") {
    Json values = launch.values;
    values["checkpoint"] = launch.resume;
    values["checkpoint_dir"] = launch.dir;
    values["worker"] = launch.index;
    values["device"] = launch.device;
    values["step"] = launch.resume_step;
    values["steps"] = options.steps.value_or(0);
    values["seed"] = options.seed;
    return ExpandCommand(options.command, values);
  }
  std::vector<std::string> argv = {options.parity_exe,
                                   "stress",
                                   "--worker",
                                   "--workload",
                                   options.workload,
                                   "--backend",
                                   options.backend,
                                   "--device",
                                   std::to_string(launch.device),
                                   "--params",
                                   launch.values.dump(),
                                   "--checkpoint-dir",
                                   launch.dir,
                                   "--checkpoint-every",
                                   std::to_string(options.checkpoint_every),
                                   "--keep-checkpoints",
                                   std::to_string(options.checkpoints_kept),
                                   "--steps",
                                   std::to_string(launch.stop_at)};
  if (!launch.resume.empty()) argv.insert(argv.end(), {"--resume", launch.resume});
  if (options.worker_threads > 0) {
    argv.insert(argv.end(), {"--threads", std::to_string(options.worker_threads)});
  }
  return argv;
}

Result<StartedProcess> StartWorkerProcess(const std::vector<std::string>& argv,
                                          const WorkerLaunch& launch, bool control) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.env_unset_prefix = "PARITY_STRESS_";
  spec.env = {{"PARITY_STRESS_WORKER", std::to_string(launch.index)},
              {"PARITY_STRESS_DEVICE", std::to_string(launch.device)},
              {"PARITY_STRESS_CHECKPOINT_DIR", launch.dir}};
  return StartProcess(spec, control);
}

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return fmt::format("exit {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return fmt::format("signal {} ({})", sig, ::strsignal(sig));
  }
  return fmt::format("status {}", status);
}

void LineReader::Feed(std::string_view bytes, const OnLine& on_line,
                      const std::function<void()>& on_overflow) {
  buffer_.append(bytes);
  std::size_t begin = 0, newline;
  while ((newline = buffer_.find('\n', begin)) != std::string::npos) {
    const std::string line = buffer_.substr(begin, newline - begin);
    begin = newline + 1;
    on_line(line);
  }
  buffer_.erase(0, begin);
  if (buffer_.size() > kMaxLine) {
    buffer_.clear();
    on_overflow();
  }
}

void LineReader::Read(int fd, bool drain, const OnLine& on_line,
                      const std::function<void()>& on_overflow) {
  char chunk[65536];
  for (int reads = 0; drain || reads < 16; ++reads) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    Feed(std::string_view(chunk, static_cast<std::size_t>(n)), on_line, on_overflow);
  }
}

WorkerLine ParseWorkerLine(const std::string& line, bool builtin) {
  Json json = Json::parse(line, nullptr, false);
  if (builtin && json.is_object() && json.contains("event") && json["event"].is_string()) {
    return {LineKind::kEvent, std::move(json)};
  }
  if (json.is_object() && json.contains("step") && json["step"].is_number_integer()) {
    return {LineKind::kStep, std::move(json)};
  }
  return {LineKind::kOutput, Json()};
}

StepLine ParseStepLine(const Json& line) {
  StepLine step;
  step.step = line["step"].get<std::int64_t>();
  if (line.contains("loss") && line["loss"].is_number()) step.loss = line["loss"].get<double>();
  if (line.contains("work") && line["work"].is_number()) step.work = line["work"].get<double>();
  if (line.contains("sdc_unlisted") && line["sdc_unlisted"].is_number_integer()) {
    step.sdc_unlisted = std::max<std::int64_t>(line["sdc_unlisted"].get<std::int64_t>(), 0);
  }
  if (line.contains("nondeterministic") && line["nondeterministic"].is_number_integer()) {
    step.nondeterministic = line["nondeterministic"].get<std::int64_t>();
  }
  if (line.contains("checkpoint") && line["checkpoint"].is_string()) {
    step.checkpoint = line["checkpoint"].get<std::string>();
  }
  if (line.contains("checkpoint_error")) {
    step.checkpoint_error = line["checkpoint_error"].is_string()
                                ? line["checkpoint_error"].get<std::string>()
                                : std::string("(no message)");
  }
  return step;
}

std::string OomEventMessage(int worker, const Json& line) {
  const std::uint64_t bytes = line.value("allocated_bytes", std::uint64_t{0});
  return line.value("survived", false)
             ? fmt::format("worker {} allocated {} bytes past its limit without failing", worker,
                           bytes)
             : fmt::format("worker {} ran out of memory after {} more bytes", worker, bytes);
}

std::string PlantMessage(std::uint64_t seed) {
  return Json{{"plant", "sdc"}, {"seed", seed}}.dump() + "\n";
}

std::string OomMessage(std::uint64_t limit_bytes) {
  return Json{{"oom", {{"limit_bytes", limit_bytes}}}}.dump() + "\n";
}

void SendControl(int stdin_fd, const std::string& message) {
  if (stdin_fd < 0) return;
  (void)!::write(stdin_fd, message.data(), message.size());
}

}  // namespace parity::stress
