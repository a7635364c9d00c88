// SPDX-License-Identifier: Apache-2.0
#include "stress/worker_slot.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "stress/checkpoint.h"

namespace parity::stress {

namespace {

constexpr std::size_t kTailLines = 20;

}  // namespace

void OnProcessStarted(Slot& slot, const StartedProcess& process, double now) {
  slot.pid = process.pid;
  slot.out_fd = process.stdout_fd;
  slot.err_fd = process.stderr_fd;
  slot.in_fd = process.stdin_fd;
  slot.exited = false;
  slot.state = SlotState::kRunning;
  slot.started = slot.last_progress = now;
  slot.steps_this_process = 0;
  slot.stop_sent = slot.restart_after_stop = slot.kill_expected = slot.watchdog_fired = false;
  slot.disk_full = false;
  slot.process_work = 0.0;
  ++slot.generation;
}

void OnStep(Slot& slot, const StepLine& line, double now) {
  slot.ledger.Record(line.step, line.loss);
  slot.last_progress = now;
  slot.ever_stepped = true;
  slot.consecutive_failures = 0;
  ++slot.steps_this_process;
  if (slot.steps_this_process == 1) {
    slot.first_step_time = now;
  } else {
    slot.process_work += line.work;
  }
  slot.last_step_time = now;
}

void KeepTail(Slot& slot, const std::string& line) {
  slot.tail.push_back(line.substr(0, 400));
  if (slot.tail.size() > kTailLines) slot.tail.pop_front();
}

void OnProcessEnded(Slot& slot) {
  slot.pid = -1;
  for (int* fd : {&slot.out_fd, &slot.err_fd, &slot.in_fd}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  if (slot.steps_this_process >= 2) slot.busy += slot.last_step_time - slot.first_step_time;
  slot.work += slot.process_work;
}

std::optional<Status> StartError(const Slot& slot, const std::string& how) {
  const int status = slot.exit_status;
  if (slot.ever_stepped || slot.generation != 1 || !WIFEXITED(status) || slot.kill_expected ||
      (WEXITSTATUS(status) != 2 && WEXITSTATUS(status) != 3)) {
    return std::nullopt;
  }
  const std::string message =
      slot.last_error.empty() ? (slot.tail.empty() ? how : slot.tail.back()) : slot.last_error;
  return WEXITSTATUS(status) == 2
             ? Status::Invalid("", fmt::format("worker {}: {}", slot.index, message))
             : Status::Unavailable(fmt::format("worker {}: {}", slot.index, message));
}

double RestartDelay(int consecutive_failures) {
  return consecutive_failures <= 1 ? 0.0
                                   : std::min(10.0, 0.25 * std::pow(2.0, consecutive_failures - 2));
}

std::string KeepCheckpoint(Slot& slot, std::int64_t step, const std::string& path,
                           std::size_t kept) {
  auto digest = FileDigest(path);
  if (!digest.ok()) return digest.status().message();
  slot.checkpoints.push_back({step, path, *digest});
  while (slot.checkpoints.size() > std::max<std::size_t>(kept, 1)) slot.checkpoints.pop_front();
  return "";
}

CheckpointRef ChooseResume(Slot& slot, std::vector<std::string>* rejected) {
  if (slot.resume_at_most) {
    while (!slot.checkpoints.empty() && slot.checkpoints.back().step > *slot.resume_at_most) {
      slot.checkpoints.pop_back();
    }
    slot.resume_at_most.reset();
  }
  while (!slot.checkpoints.empty()) {
    const CheckpointRecord newest = slot.checkpoints.back();  // a copy: popped below
    auto digest = FileDigest(newest.path);
    if (digest.ok() && *digest == newest.digest) return {newest.step, newest.path};
    const std::string why =
        digest.ok() ? "its digest changed since it was written" : digest.status().message();
    slot.checkpoints.pop_back();
    rejected->push_back(fmt::format(
        "checkpoint of step {} ({}) not used: {}; {}", newest.step, newest.path, why,
        slot.checkpoints.empty() ? std::string("starting from step 0")
                                 : fmt::format("using step {}", slot.checkpoints.back().step)));
  }
  return {0, ""};
}

WorkerSummary Summarize(const Slot& slot, bool interrupted) {
  WorkerSummary summary;
  summary.index = slot.index;
  summary.device = slot.device;
  summary.steps = slot.ledger.last();
  summary.restarts = slot.restarts;
  summary.lost = slot.ledger.lost();
  summary.duplicated = slot.ledger.duplicated();
  summary.redone = slot.ledger.redone();
  summary.redo_mismatches = slot.ledger.redo_mismatches();
  summary.first_redo_mismatch = slot.ledger.first_mismatch();
  summary.work = slot.work;
  summary.busy_seconds = slot.busy;
  summary.state = slot.state == SlotState::kFailed ? "failed" : interrupted ? "stopped" : "done";
  summary.failure = slot.failure;
  return summary;
}

}  // namespace parity::stress
