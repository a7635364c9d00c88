// SPDX-License-Identifier: Apache-2.0
#include "stress/supervisor.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "core/interrupt.h"
#include "stress/checkpoint.h"
#include "stress/fault_tracking.h"
#include "stress/worker_process.h"
#include "stress/worker_slot.h"
#include "stress/workload.h"

namespace parity::stress {
namespace {

constexpr std::size_t kMaxEvents = 10000;
constexpr std::size_t kMaxSdcEvents = 1000;
constexpr std::size_t kMaxAlerts = 1000;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class Supervisor {
 public:
  Supervisor(const StressOptions& options, monitor::Sampler* sampler, monitor::RuleEngine* rules)
      : options_(options),
        sampler_(sampler),
        rules_(rules),
        schedule_(options.inject, options.seed, RunLength{options.duration, options.steps},
                  options.workers) {
    if (options_.matrix) matrix_.emplace(*options_.matrix, options_.seed);
    exec_ = options_.workload == "exec";
  }

  Result<StressRun> Run();

 private:
  void Event(double t, const std::string& kind, int worker, const std::string& message) {
    if (run_.events.size() < kMaxEvents) {
      Json event = {{"time_s", t}, {"kind", kind}};
      if (worker >= 0) event["worker"] = worker;
      event["message"] = message;
      run_.events.push_back(std::move(event));
    }
  }
  double T() const { return Now() - start_; }
  /// A failure nobody injected, now.
  FaultRecord Unplanned(const Slot& slot, std::string kind, std::string detail) const {
    return UnplannedFault(slot.index, T(), std::move(kind), std::move(detail));
  }
  Json ValuesFor(const Slot& slot) const;
  Status Spawn(Slot& slot);
  void Signal(Slot& slot, int sig) {
    if (slot.pid > 0) ::kill(-slot.pid, sig);
  }
  void ReadOutput(Slot& slot, bool is_stdout, bool drain);
  /// A line that is not protocol: forwarded, and kept in the slot's tail.
  void KeepOutput(Slot& slot, const std::string& line);
  void HandleLine(Slot& slot, const std::string& line);
  void HandleStep(Slot& slot, const Json& line);
  void HandleWorkerEvent(Slot& slot, const Json& line);
  void HandleSdcEvent(Slot& slot, const Json& line);
  /// A checkpoint the worker reported: its digest taken now, the newest few kept.
  void RecordCheckpoint(Slot& slot, std::int64_t step, const std::string& path);
  void HandleExit(Slot& slot);
  /// A failure the supervisor did not cause: recorded (or counted on the one still open),
  /// then a restart with backoff, or the worker given up.
  void HandleFailure(Slot& slot, const std::string& how);
  void Restart(Slot& slot, double delay);
  FaultTarget TargetOf(const Slot& slot) const;
  void Fire(const DueFault& due, Slot& slot);
  void LiftDiskFull(Slot& slot, const std::string& why);
  void Sample();
  bool HasOpenFaults(const Slot& slot) const { return faults_.HasOpen(slot.index); }
  // The steps of the supervising loop, in the order Run takes them.
  Status StartWorkers();
  void CheckStop(double now, bool interrupted);
  void StopWorkers(double now);
  void RestartDue(double now);
  void PollOutput();
  void ReapExits();
  void Watchdog();
  void FireDueFaults();
  void ApplyMatrix();
  /// The loop, run under a ScopedStopFlag until every worker has ended.
  Status Supervise();

  const StressOptions& options_;
  monitor::Sampler* sampler_;
  monitor::RuleEngine* rules_;
  FaultSchedule schedule_;
  std::optional<MatrixSampler> matrix_;
  bool exec_ = false;
  double start_ = 0.0;
  std::vector<Slot> slots_;
  std::vector<DueFault> pending_;
  StressRun run_;
  FaultBook faults_{&run_.faults};
  std::optional<Status> fatal_;
  bool stopping_ = false;
  double stop_time_ = 0.0;
};

Json Supervisor::ValuesFor(const Slot& slot) const {
  Json values = options_.params;
  if (matrix_) {
    const Json drawn = matrix_->ValuesAt(slot.index, slot.ledger.last(), T());
    for (const auto& [key, value] : drawn.items()) values[key] = value;
  }
  return values;
}

Status Supervisor::Spawn(Slot& slot) {
  std::vector<std::string> rejected;
  const CheckpointRef resume = ChooseResume(slot, &rejected);
  for (const std::string& message : rejected) {
    ++run_.corrupt_checkpoints;
    Event(T(), "checkpoint-rejected", slot.index, message);
  }
  slot.ledger.Resume(resume.step);
  const Json values = ValuesFor(slot);
  // A worker started at the last step runs no step with new values: no change to record.
  const bool runs_a_step = !options_.steps || resume.step < *options_.steps;
  if (slot.generation > 0 && values != slot.values && runs_a_step &&
      run_.parameter_changes.size() < kMaxEvents) {
    run_.parameter_changes.push_back(
        {{"worker", slot.index}, {"time_s", T()}, {"step", resume.step}, {"values", values}});
  }
  slot.values = values;
  // A built-in worker stops by itself where a step-scheduled parameter changes, so that new
  // values start exactly at the boundary; `exec` commands and time schedules get SIGTERM.
  slot.boundary = 0;
  std::int64_t stop_at = options_.steps.value_or(0);
  if (matrix_ && !exec_) {
    if (const auto next = matrix_->NextStepBoundary(resume.step);
        next && (stop_at == 0 || *next < stop_at)) {
      slot.boundary = *next;
      stop_at = *next;
    }
  }
  const WorkerLaunch launch{slot.index,  slot.device, slot.dir, slot.values,
                            resume.path, resume.step, stop_at};
  PARITY_ASSIGN_OR_RETURN(const std::vector<std::string> argv, WorkerArgv(options_, launch));
  PARITY_ASSIGN_OR_RETURN(const StartedProcess process,
                          StartWorkerProcess(argv, launch, /*control=*/!exec_));
  OnProcessStarted(slot, process, Now());
  // A flip asked of the previous process that it did not live to plant: asked again.
  for (const std::uint64_t seed : faults_.UnplantedSeeds(slot.index)) {
    SendControl(slot.in_fd, PlantMessage(seed));
  }
  Event(T(), "worker-start", slot.index,
        fmt::format("worker {} started (pid {}) from {}", slot.index, slot.pid,
                    resume.path.empty() ? std::string("the beginning")
                                        : fmt::format("the checkpoint of step {}", resume.step)));
  return Status::Ok();
}

void Supervisor::ReadOutput(Slot& slot, bool is_stdout, bool drain) {
  const auto overflow = [&] {
    Event(T(), "output-dropped", slot.index, "a line over 1 MiB was dropped");
  };
  if (is_stdout) {
    slot.out_reader.Read(
        slot.out_fd, drain, [&](const std::string& line) { HandleLine(slot, line); }, overflow);
  } else {
    slot.err_reader.Read(
        slot.err_fd, drain, [&](const std::string& line) { KeepOutput(slot, line); }, overflow);
  }
}

void Supervisor::KeepOutput(Slot& slot, const std::string& line) {
  if (options_.forward_output) std::fprintf(stderr, "[worker %d] %s\n", slot.index, line.c_str());
  KeepTail(slot, line);
}

void Supervisor::HandleLine(Slot& slot, const std::string& line) {
  const WorkerLine parsed = ParseWorkerLine(line, !exec_);
  switch (parsed.kind) {
    case LineKind::kEvent:
      HandleWorkerEvent(slot, parsed.json);
      break;
    case LineKind::kStep:
      HandleStep(slot, parsed.json);
      break;
    case LineKind::kOutput:  // the workload's own output: logged, not interpreted
      KeepOutput(slot, line);
      break;
  }
}

void Supervisor::HandleStep(Slot& slot, const Json& json) {
  const double now = Now();
  const StepLine line = ParseStepLine(json);
  const std::int64_t step = line.step;
  OnStep(slot, line, now);
  run_.sdc_count += line.sdc_unlisted;
  run_.nondeterministic += line.nondeterministic;
  if (line.checkpoint) RecordCheckpoint(slot, step, *line.checkpoint);
  if (line.checkpoint_error) {
    ++run_.checkpoint_failures;
    Event(T(), "checkpoint-failed", slot.index,
          fmt::format("checkpoint of step {} failed, the run goes on: {}", step,
                      *line.checkpoint_error));
    if (slot.disk_full) LiftDiskFull(slot, "after the failed checkpoint");
  }
  // Two intervals: the worker may be steps ahead of the lines read so far, past the checkpoint
  // the limit was meant for, so the first one it writes under the limit can be a full interval
  // after the step the limit was set at.
  if (slot.disk_full && slot.ledger.last() - slot.disk_full_since_step >
                            2 * std::max<std::int64_t>(options_.checkpoint_every, 1)) {
    LiftDiskFull(slot, "after two checkpoint intervals without a reported failure");
  }
  faults_.OnStep(slot.index, slot.generation, step, slot.disk_full, now - start_);
}

void Supervisor::RecordCheckpoint(Slot& slot, std::int64_t step, const std::string& path) {
  const std::string problem = KeepCheckpoint(slot, step, path, options_.checkpoints_kept);
  if (!problem.empty()) Event(T(), "checkpoint-unreadable", slot.index, problem);
}

void Supervisor::HandleSdcEvent(Slot& slot, const Json& line) {
  ++run_.sdc_count;
  Json event = line;
  event.erase("event");
  event["worker"] = slot.index;
  event["time_s"] = T();
  if (run_.sdc_events.size() < kMaxSdcEvents) run_.sdc_events.push_back(event);
  faults_.OnSdcEvent(slot.index, line, T());
}

void Supervisor::HandleWorkerEvent(Slot& slot, const Json& line) {
  const std::string kind = line["event"].get<std::string>();
  if (kind == "sdc") {
    HandleSdcEvent(slot, line);
  } else if (kind == "planted") {
    faults_.OnPlanted(slot.index, line);
  } else if (kind == "oom") {
    const bool survived = line.value("survived", false);
    Event(T(), "oom", slot.index, OomEventMessage(slot.index, line));
    if (survived) {
      SetSoftLimit(slot.pid, RLIMIT_AS, RLIM_INFINITY);
      slot.kill_expected = false;
    }
  } else if (kind == "stopped" && line.contains("checkpoint") && line["checkpoint"].is_string()) {
    RecordCheckpoint(slot, line.value("step", std::int64_t{0}),
                     line["checkpoint"].get<std::string>());
  } else if (kind == "error") {
    slot.last_error = line.value("message", std::string());
    Event(T(), "worker-error", slot.index, slot.last_error);
  }
}

void Supervisor::LiftDiskFull(Slot& slot, const std::string& why) {
  if (slot.pid > 0) SetSoftLimit(slot.pid, RLIMIT_FSIZE, RLIM_INFINITY);
  slot.disk_full = false;
  Event(T(), "disk-full-lifted", slot.index, "the file size limit is lifted " + why);
}

void Supervisor::Restart(Slot& slot, double delay) {
  slot.state = SlotState::kBackoff;
  slot.restart_at = Now() + delay;
}

void Supervisor::HandleExit(Slot& slot) {
  const int status = slot.exit_status;
  const std::string how = DescribeExit(status);
  OnProcessEnded(slot);
  const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  Event(T(), "worker-exit", slot.index,
        fmt::format("worker {} ended ({}) at step {}", slot.index, how, slot.ledger.last()));
  if (std::optional<Status> error = StartError(slot, how)) {
    fatal_ = std::move(error);
    slot.state = SlotState::kFailed;
    return;
  }
  if (stopping_ && !HasOpenFaults(slot)) {
    slot.state = SlotState::kDone;
    return;
  }
  if (slot.restart_after_stop ||
      (clean && slot.boundary > 0 && slot.ledger.last() >= slot.boundary)) {
    Restart(slot, 0.0);
    return;
  }
  if (clean && !slot.kill_expected) {
    if (!options_.steps || slot.ledger.last() >= *options_.steps) {
      slot.state = SlotState::kDone;
      return;
    }
  }
  HandleFailure(slot, how);
}

void Supervisor::HandleFailure(Slot& slot, const std::string& how) {
  if (!slot.kill_expected && !slot.watchdog_fired) {
    faults_.OpenUnplanned(Unplanned(slot, "worker-crash",
                                    fmt::format("worker {} ended by itself ({}){}", slot.index, how,
                                                slot.tail.empty() ? "" : ": " + slot.tail.back())),
                          slot.generation, how);
  }
  ++slot.consecutive_failures;
  if (slot.consecutive_failures > options_.max_restarts) {
    slot.state = SlotState::kFailed;
    slot.failure = fmt::format("given up after {} restarts without a completed step (last: {})",
                               options_.max_restarts, how);
    Event(T(), "worker-failed", slot.index, slot.failure);
    return;
  }
  ++slot.restarts;
  Restart(slot, RestartDelay(slot.consecutive_failures));
}

FaultTarget Supervisor::TargetOf(const Slot& slot) const {
  FaultTarget target;
  target.worker = slot.index;
  target.pid = slot.pid;
  target.control_fd = slot.in_fd;
  target.builtin = !exec_;
  target.step = slot.ledger.last();
  target.running = slot.state == SlotState::kRunning && !slot.exited;
  target.settling = slot.stop_sent || slot.kill_expected || slot.watchdog_fired;
  target.steps_this_process = slot.steps_this_process;
  if (!slot.checkpoints.empty()) {
    target.newest_checkpoint = {slot.checkpoints.back().step, slot.checkpoints.back().path};
  }
  target.disk_full = slot.disk_full;
  return target;
}

void Supervisor::Fire(const DueFault& due, Slot& slot) {
  const FiredFault fired = FireFault(due, TargetOf(slot), options_.seed);
  FaultRecord record;
  record.kind = std::string(FaultKindName(due.kind));
  record.worker = slot.index;
  record.time = T();
  record.detail = fired.detail;
  if (fired.kill_expected) slot.kill_expected = true;
  if (fired.resume_at_most) slot.resume_at_most = fired.resume_at_most;
  if (fired.disk_full) {
    slot.disk_full = true;
    slot.disk_full_since_step = slot.ledger.last();
  }
  Event(record.time, "fault", slot.index, record.kind + ": " + record.detail);
  faults_.OpenInjected(std::move(record), slot.generation, fired);
}

void Supervisor::Sample() {
  if (sampler_ == nullptr) return;
  monitor::Sample sample = sampler_->Take(UnixNow(), Now());
  ++run_.telemetry_samples;
  if (rules_ == nullptr) return;
  for (monitor::Alert& alert : rules_->Evaluate(sample)) {
    if (options_.forward_output || alert.severity == monitor::Severity::kFatal) {
      std::fprintf(stderr, "parity: alert: %s\n", alert.message.c_str());
    }
    if (run_.alerts.size() < kMaxAlerts) run_.alerts.push_back(std::move(alert));
  }
}

Status Supervisor::StartWorkers() {
  slots_.resize(options_.workers);
  for (int k = 0; k < options_.workers; ++k) {
    Slot& slot = slots_[k];
    slot.index = k;
    slot.device = k % std::max(options_.devices, 1);
    slot.dir = fmt::format("{}/worker-{}", options_.checkpoint_dir, k);
    PARITY_RETURN_IF_ERROR(MakeDirectories(slot.dir));
    PARITY_RETURN_IF_ERROR(Spawn(slot));
  }
  return Status::Ok();
}

void Supervisor::CheckStop(double now, bool interrupted) {
  const double t = now - start_;
  if (!stopping_ && (interrupted || (options_.duration && t >= *options_.duration) || fatal_)) {
    stopping_ = true;
    stop_time_ = now;
    run_.interrupted = interrupted;
    Event(t, "stop", -1,
          run_.interrupted ? "interrupted: stopping the workers with a final checkpoint"
          : fatal_         ? "stopping: " + fatal_->message()
                           : "duration reached: stopping the workers");
  }
  if (stopping_ && !run_.interrupted && interrupted) run_.interrupted = true;
}

void Supervisor::StopWorkers(double now) {
  // All of them once stopping, except one still recovering from a fault (it gets
  // hang_timeout + stop_grace more seconds, unless interrupted).
  const bool hurry =
      run_.interrupted || fatal_ || now - stop_time_ > options_.hang_timeout + options_.stop_grace;
  for (Slot& slot : slots_) {
    if (slot.state == SlotState::kBackoff && (hurry || !HasOpenFaults(slot))) {
      slot.state = SlotState::kDone;
    }
    if (slot.state == SlotState::kRunning && !slot.stop_sent && (hurry || !HasOpenFaults(slot))) {
      Signal(slot, SIGCONT);
      Signal(slot, SIGTERM);
      slot.stop_sent = true;
      slot.restart_after_stop = false;
      slot.stop_deadline = now + options_.stop_grace;
    }
  }
}

void Supervisor::RestartDue(double now) {
  for (Slot& slot : slots_) {
    if (slot.state != SlotState::kBackoff || now < slot.restart_at) continue;
    if (Status s = Spawn(slot); !s.ok()) {
      if (!slot.ever_stepped && !fatal_) fatal_ = s;
      slot.state = SlotState::kFailed;
      slot.failure = s.message();
      Event(T(), "worker-failed", slot.index, s.message());
    }
  }
}

void Supervisor::PollOutput() {
  std::vector<pollfd> fds;
  std::vector<std::pair<int, bool>> owners;  // slot, stdout
  for (Slot& slot : slots_) {
    if (slot.out_fd >= 0) {
      fds.push_back({slot.out_fd, POLLIN, 0});
      owners.emplace_back(slot.index, true);
    }
    if (slot.err_fd >= 0) {
      fds.push_back({slot.err_fd, POLLIN, 0});
      owners.emplace_back(slot.index, false);
    }
  }
  ::poll(fds.data(), fds.size(), 20);
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents != 0) ReadOutput(slots_[owners[i].first], owners[i].second, false);
  }
}

void Supervisor::ReapExits() {
  while (true) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) break;
    for (Slot& slot : slots_) {
      if (slot.pid == pid) {
        slot.exited = true;
        slot.exit_status = status;
      }
    }
  }
  // Their output drained before the exit is judged.
  for (Slot& slot : slots_) {
    if (slot.state != SlotState::kRunning || !slot.exited) continue;
    if (slot.out_fd >= 0) ReadOutput(slot, true, true);
    if (slot.err_fd >= 0) ReadOutput(slot, false, true);
    slot.out_reader.Clear();
    slot.err_reader.Clear();
    HandleExit(slot);
  }
}

void Supervisor::Watchdog() {
  const double after = Now();
  for (Slot& slot : slots_) {
    if (slot.state != SlotState::kRunning || slot.exited) continue;
    if (slot.stop_sent && after > slot.stop_deadline && !slot.kill_expected) {
      Signal(slot, SIGKILL);
      slot.kill_expected = true;
      Event(T(), "stop-timeout", slot.index,
            fmt::format("worker {} did not stop within {} s: killed", slot.index,
                        options_.stop_grace));
    } else if (!slot.stop_sent && !slot.watchdog_fired &&
               after - slot.last_progress > options_.hang_timeout) {
      Signal(slot, SIGKILL);
      slot.watchdog_fired = true;
      const bool injected = faults_.HasOpenHang(slot.index);
      Event(T(), "watchdog", slot.index,
            fmt::format("worker {} completed no step for {} s: killed", slot.index,
                        options_.hang_timeout));
      if (!injected) {
        faults_.OpenUnplanned(Unplanned(slot, "worker-hang",
                                        fmt::format("no step completed for {} s (at step {})",
                                                    options_.hang_timeout, slot.ledger.last())),
                              slot.generation, "");
      }
    }
  }
}

void Supervisor::FireDueFaults() {
  // Each fired on its worker once that worker can take it.
  double steps = 0.0;
  for (const Slot& slot : slots_) steps += static_cast<double>(slot.ledger.last());
  for (const DueFault& due : schedule_.Due(T(), steps / slots_.size())) pending_.push_back(due);
  for (auto it = pending_.begin(); it != pending_.end();) {
    Slot& slot = slots_[it->worker];
    if (slot.state == SlotState::kDone || slot.state == SlotState::kFailed) {
      Event(
          T(), "fault-skipped", slot.index,
          fmt::format("{} not injected: worker {} has ended", FaultKindName(it->kind), slot.index));
      it = pending_.erase(it);
    } else if (CanFire(it->kind, TargetOf(slot))) {
      Fire(*it, slot);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
}

void Supervisor::ApplyMatrix() {
  // A worker whose parameters change is stopped and resumed with the new ones.
  for (Slot& slot : slots_) {
    if (slot.state != SlotState::kRunning || slot.stop_sent || slot.kill_expected ||
        slot.watchdog_fired || slot.steps_this_process < 1 || HasOpenFaults(slot)) {
      continue;
    }
    // Step boundaries of built-in workers are theirs to stop at.
    if (slot.boundary > 0 && slot.ledger.last() >= slot.boundary) continue;
    if (ValuesFor(slot) == slot.values) continue;
    Signal(slot, SIGTERM);
    slot.stop_sent = true;
    slot.restart_after_stop = true;
    slot.stop_deadline = Now() + options_.stop_grace;
  }
}

Status Supervisor::Supervise() {
  const ScopedStopFlag stop_flag;
  ::signal(SIGPIPE, SIG_IGN);
  PARITY_RETURN_IF_ERROR(MakeDirectories(options_.checkpoint_dir));
  start_ = Now();
  if (sampler_) run_.sources = sampler_->opened();
  PARITY_RETURN_IF_ERROR(StartWorkers());
  double next_sample = Now();
  const auto ended = [](const Slot& s) {
    return s.state == SlotState::kDone || s.state == SlotState::kFailed;
  };
  while (true) {
    const double now = Now();
    CheckStop(now, StopRequested());
    if (stopping_) StopWorkers(now);
    RestartDue(now);
    PollOutput();
    ReapExits();
    Watchdog();
    if (!stopping_) FireDueFaults();
    if (matrix_ && !stopping_) ApplyMatrix();
    if (sampler_ && Now() >= next_sample) {
      Sample();
      next_sample = std::max(next_sample + options_.telemetry_interval, Now());
    }
    if (std::all_of(slots_.begin(), slots_.end(), ended)) break;
  }
  if (sampler_) Sample();
  return Status::Ok();
}

Result<StressRun> Supervisor::Run() {
  PARITY_RETURN_IF_ERROR(Supervise());
  if (fatal_) return *fatal_;
  run_.seconds = Now() - start_;
  faults_.Finish(run_.interrupted);
  for (const Slot& slot : slots_) {
    run_.workers.push_back(Summarize(slot, run_.interrupted));
    run_.steps += run_.workers.back().steps;
  }
  run_.reasons = FailReasons(run_, options_);
  return std::move(run_);
}

}  // namespace

Result<StressRun> RunStress(const StressOptions& options, monitor::Sampler* sampler,
                            monitor::RuleEngine* rules) {
  if (options.workers < 1) return Status::Invalid("--workers", "must be at least 1");
  std::string unit = "steps";
  if (options.workload != "exec") {
    PARITY_ASSIGN_OR_RETURN(const WorkloadInfo* info, FindWorkload(options.workload));
    if (info->create != nullptr) unit = std::string(info->create()->work_unit());
  }
  Supervisor supervisor(options, sampler, rules);
  auto run = supervisor.Run();
  if (run.ok()) run->unit = unit;
  return run;
}

}  // namespace parity::stress
