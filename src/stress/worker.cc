// SPDX-License-Identifier: Apache-2.0
#include "stress/worker.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "bench/registry.h"
#include "core/exit_code.h"
#include "core/interrupt.h"
#include "stress/checkpoint.h"
#include "stress/workload.h"

namespace parity::stress {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Writes one protocol line and flushes it; false when the supervisor is gone.
bool Emit(const Json& line) {
  const std::string text = line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() &&
         std::fflush(stdout) == 0;
}

int Error(const Status& status) {
  Emit(Json{{"event", "error"}, {"message", status.message()}});
  std::fprintf(stderr, "parity: error: %s\n", status.message().c_str());
  return ExitCodeFor(status);
}

/// The workload, opened on its backend and started (from the checkpoint when there is one).
struct Started {
  std::unique_ptr<bench::Backend> backend;
  std::unique_ptr<StressWorkload> workload;
  std::int64_t step = 0;
  std::string device_name;
};

Result<Started> Start(const WorkerOptions& options) {
  PARITY_ASSIGN_OR_RETURN(const WorkloadInfo* info, FindWorkload(options.workload));
  if (info->create == nullptr) {
    return Status::Invalid("", fmt::format("workload {} does not run in a worker", info->name));
  }
  Started started;
  PARITY_ASSIGN_OR_RETURN(started.backend, bench::OpenBackend(options.backend));
  PARITY_ASSIGN_OR_RETURN(auto devices, started.backend->Devices());
  if (options.device < 0 || options.device >= static_cast<int>(devices.size())) {
    return Status::Unavailable(fmt::format("backend {} has no device {} ({} found)",
                                           options.backend, options.device, devices.size()));
  }
  started.device_name = devices[options.device].name;
  PARITY_RETURN_IF_ERROR(started.backend->Open(options.device));
  started.workload = info->create();
  std::string state;
  if (!options.resume.empty()) {
    PARITY_ASSIGN_OR_RETURN(Checkpoint checkpoint, ReadCheckpoint(options.resume));
    started.step = checkpoint.step;
    state = std::move(checkpoint.payload);
  }
  PARITY_RETURN_IF_ERROR(
      started.workload->Start(*started.backend, options.device, options.params, state));
  return started;
}

/// Control lines from the supervisor, read without blocking.
class ControlReader {
 public:
  ControlReader() { ::fcntl(0, F_SETFL, ::fcntl(0, F_GETFL) | O_NONBLOCK); }

  std::vector<Json> Poll() {
    std::vector<Json> out;
    char chunk[4096];
    while (true) {
      const ssize_t n = ::read(0, chunk, sizeof(chunk));
      if (n <= 0) break;
      buffer_.append(chunk, static_cast<std::size_t>(n));
      if (buffer_.size() > (1 << 20)) buffer_.clear();  // a runaway line: drop it
    }
    std::size_t newline;
    while ((newline = buffer_.find('\n')) != std::string::npos) {
      Json line = Json::parse(buffer_.substr(0, newline), nullptr, false);
      buffer_.erase(0, newline + 1);
      if (line.is_object()) out.push_back(std::move(line));
    }
    return out;
  }

 private:
  std::string buffer_;
};

/// The oom drill: allocates and touches memory until an allocation fails (then the worker
/// exits kWorkerExitOom, as a process out of memory does) or `limit` bytes are held.
void OomDrill(std::uint64_t limit) {
  constexpr std::size_t kChunk = std::size_t{16} << 20;
  std::vector<std::unique_ptr<char[]>> held;
  std::uint64_t bytes = 0;
  while (bytes < limit) {
    std::unique_ptr<char[]> chunk(new (std::nothrow) char[kChunk]);
    if (!chunk) {
      Emit(Json{{"event", "oom"}, {"allocated_bytes", bytes}});
      std::fprintf(stderr, "parity: worker out of memory after %llu bytes\n",
                   static_cast<unsigned long long>(bytes));
      std::_Exit(kWorkerExitOom);
    }
    std::memset(chunk.get(), 1, kChunk);
    held.push_back(std::move(chunk));
    bytes += kChunk;
  }
  Emit(Json{{"event", "oom"}, {"allocated_bytes", bytes}, {"survived", true}});
}

}  // namespace

int RunWorker(const WorkerOptions& options) {
  const ScopedStopFlag stop_flag;
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGXFSZ, SIG_IGN);  // a file size limit fails the write (EFBIG) instead of killing
  auto started = Start(options);
  if (!started.ok()) return Error(started.status());
  StressWorkload& workload = *started->workload;
  std::int64_t step = started->step;
  if (!Emit(Json{{"event", "ready"},
                 {"resumed_from", step},
                 {"device", started->device_name},
                 {"bytes_in_use", workload.bytes_in_use()}})) {
    return kWorkerExitFailed;
  }
  ControlReader control;
  std::int64_t checkpointed = step;
  const auto checkpoint = [&](Json* line) {
    if (options.checkpoint_dir.empty()) return;
    checkpointed = step;
    auto state = workload.Save();
    if (!state.ok()) {
      (*line)["checkpoint_error"] = state.status().message();
      return;
    }
    const std::string path = options.checkpoint_dir + "/" + CheckpointFileName(step);
    if (Status s = WriteCheckpoint(path, step, *state); !s.ok()) {
      (*line)["checkpoint_error"] = s.message();
      return;
    }
    (*line)["checkpoint"] = path;
    PruneCheckpoints(options.checkpoint_dir, options.checkpoints_kept);
  };
  while (!StopRequested() && (options.steps == 0 || step < options.steps)) {
    for (const Json& message : control.Poll()) {
      if (message.value("plant", "") == "sdc") {
        const std::uint64_t seed = message.value("seed", std::uint64_t{1});
        if (Status s = workload.PlantBitFlip(seed); !s.ok()) {
          Emit(Json{{"event", "error"}, {"message", s.message()}, {"fatal", false}});
        }
      } else if (message.contains("oom") && message["oom"].is_object()) {
        OomDrill(message["oom"].value("limit_bytes", std::uint64_t{1} << 30));
      }
    }
    const double begin = Now();
    auto result = workload.Step(step + 1);
    if (!result.ok()) return Error(result.status());
    ++step;
    Json line = {{"step", step}, {"work", result->work}, {"seconds", Now() - begin}};
    if (result->loss) SetNumber(line, "loss", *result->loss);
    if (result->nondeterministic > 0) line["nondeterministic"] = result->nondeterministic;
    if (result->sdc_unlisted > 0) line["sdc_unlisted"] = result->sdc_unlisted;
    if (!result->planted.is_null()) {
      Json planted = result->planted;
      planted["event"] = "planted";
      planted["step"] = step;
      Emit(planted);
    }
    for (const SdcEvent& event : result->sdc) {
      Json json = SdcEventToJson(event);
      json["event"] = "sdc";
      Emit(json);
    }
    const bool last = options.steps != 0 && step >= options.steps;
    if (step % std::max<std::int64_t>(options.checkpoint_every, 1) == 0 || last ||
        StopRequested()) {
      checkpoint(&line);
    }
    if (!Emit(line)) return kWorkerExitFailed;
  }
  // Stopped between steps: the final checkpoint, reported with the stop.
  Json stopped = {{"event", "stopped"}, {"step", step}};
  if (step > checkpointed) checkpoint(&stopped);
  Emit(stopped);
  return kExitOk;
}

Result<InlineRun> RunInline(const WorkerOptions& options, std::optional<double> duration) {
  const ScopedStopFlag stop_flag;
  PARITY_ASSIGN_OR_RETURN(Started started, Start(options));
  InlineRun run;
  run.unit = std::string(started.workload->work_unit());
  const double start = Now();
  double first_end = 0.0, last_end = 0.0;
  while (!StopRequested()) {
    PARITY_ASSIGN_OR_RETURN(StepResult result, started.workload->Step(run.steps + 1));
    ++run.steps;
    last_end = Now();
    if (run.steps == 1) {
      first_end = last_end;
    } else {
      run.work += result.work;
    }
    for (const SdcEvent& event : result.sdc) {
      if (run.sdc.size() < 100) run.sdc.push_back(SdcEventToJson(event));
      ++run.sdc_events;
    }
    run.sdc_events += result.sdc_unlisted;
    if (run.steps >= 2) {
      if (options.steps != 0 && run.steps >= options.steps) break;
      if (duration && last_end - start >= *duration) break;
    }
  }
  run.interrupted = StopRequested();
  run.seconds = last_end - first_end;
  return run;
}

}  // namespace parity::stress
