// SPDX-License-Identifier: Apache-2.0
#include "stress/supervisor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>

#include "stress/checkpoint.h"
#include "stress/command_template.h"
#include "stress/ledger.h"
#include "stress/workload.h"

namespace parity::stress {
namespace {

constexpr std::size_t kMaxLine = std::size_t{1} << 20;
constexpr std::size_t kMaxEvents = 10000;
constexpr std::size_t kMaxSdcEvents = 1000;
constexpr std::size_t kMaxAlerts = 1000;
constexpr int kTailLines = 20;

std::atomic<bool> g_interrupted{false};
extern "C" void ParityStressOnInterrupt(int) { g_interrupted.store(true); }

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return fmt::format("exit {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return fmt::format("signal {} ({})", sig, ::strsignal(sig));
  }
  return fmt::format("status {}", status);
}

/// VmSize of a process, in bytes, from /proc/PID/status; 0 when unreadable.
std::uint64_t VirtualSize(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string key;
  while (in >> key) {
    if (key == "VmSize:") {
      std::uint64_t kib = 0;
      in >> kib;
      return kib * 1024;
    }
    std::getline(in, key);
  }
  return 0;
}

bool SetSoftLimit(pid_t pid, int resource, rlim_t soft) {
  struct rlimit old {};
  if (::prlimit(pid, static_cast<__rlimit_resource>(resource), nullptr, &old) != 0) return false;
  struct rlimit limit = old;
  limit.rlim_cur = std::min(soft, old.rlim_max);
  return ::prlimit(pid, static_cast<__rlimit_resource>(resource), &limit, nullptr) == 0;
}

Status MakeDirectories(const std::string& path) {
  std::string partial;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    const std::size_t slash = path.find('/', pos);
    partial = path.substr(0, slash);
    pos = slash == std::string::npos ? path.size() + 1 : slash + 1;
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::Invalid(path,
                             fmt::format("cannot create directory: {}", std::strerror(errno)));
    }
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::Invalid(path, "not a directory");
  }
  return Status::Ok();
}

/// A checkpoint a worker reported, with the digest it had then.
struct CheckpointRecord {
  std::int64_t step = 0;
  std::string path;
  std::string digest;
};

enum class SlotState { kRunning, kBackoff, kDone, kFailed };

struct Slot {
  int index = 0;
  int device = 0;
  std::string dir;
  SlotState state = SlotState::kBackoff;
  pid_t pid = -1;
  int out_fd = -1, err_fd = -1, in_fd = -1;
  std::string out_buffer, err_buffer;
  bool exited = false;
  int exit_status = 0;
  std::int64_t generation = 0;  // processes started so far
  double started = 0.0, last_progress = 0.0, restart_at = 0.0;
  std::int64_t steps_this_process = 0;
  int consecutive_failures = 0;
  std::int64_t restarts = 0;
  StepLedger ledger;
  std::deque<CheckpointRecord> checkpoints;
  Json values = Json::object();  // parameters the process runs with
  bool ever_stepped = false;
  // What the supervisor did to the process, so that its end is understood.
  bool stop_sent = false;  // SIGTERM sent: a graceful stop
  double stop_deadline = 0.0;
  bool restart_after_stop = false;  // a parameter change
  std::int64_t boundary = 0;        // built-in: the worker stops here for a matrix epoch; 0 none
  bool kill_expected = false;       // a fault or the watchdog killed it
  // A corrupt-checkpoint drill: the newest checkpoint when it fired. One the worker reports
  // after that was written while it was being killed, and is not resumed from: the drill's
  // restart must read the corrupted one.
  std::optional<std::int64_t> resume_at_most;
  bool watchdog_fired = false;
  bool disk_full = false;
  std::int64_t disk_full_since_step = 0;
  std::deque<std::string> tail;  // the last lines of output that were not protocol
  std::string last_error;        // the last {"event":"error"} message
  // Throughput of the current process.
  double first_step_time = 0.0, last_step_time = 0.0, process_work = 0.0;
  double work = 0.0, busy = 0.0;
  std::string failure;
};

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
  struct PendingFault {
    DueFault due;
  };
  struct OpenFault {
    std::size_t record = 0;  // index in run_.faults
    int worker = 0;
    double time = 0.0;
    std::int64_t generation = 0;  // recovered by a step of a later process when set
    bool needs_new_process = false;
    bool needs_lift = false;  // disk-full: recovered once the limit is lifted
    bool sdc = false;
    std::uint64_t plant_seed = 0;
    std::optional<std::int64_t> sdc_step;  // the step the flip was planted in
  };

  /// Records a fault nobody injected, recovered by the next process's first step.
  void RecordUnplanned(const Slot& slot, std::string kind, std::string detail) {
    FaultRecord record;
    record.kind = std::move(kind);
    record.injected = false;
    record.worker = slot.index;
    record.time = T();
    record.detail = std::move(detail);
    run_.faults.push_back(std::move(record));
    OpenFault open;
    open.record = run_.faults.size() - 1;
    open.worker = slot.index;
    open.time = run_.faults.back().time;
    open.generation = slot.generation;
    open.needs_new_process = true;
    open_.push_back(open);
  }
  void Event(double t, const std::string& kind, int worker, const std::string& message) {
    if (run_.events.size() < kMaxEvents) {
      Json event = {{"time_s", t}, {"kind", kind}};
      if (worker >= 0) event["worker"] = worker;
      event["message"] = message;
      run_.events.push_back(std::move(event));
    }
  }
  double T() const { return Now() - start_; }
  Json ValuesFor(const Slot& slot) const;
  Status Spawn(Slot& slot);
  void Signal(Slot& slot, int sig) {
    if (slot.pid > 0) ::kill(-slot.pid, sig);
  }
  void ReadOutput(Slot& slot, int fd, std::string& buffer, bool is_stdout, bool drain);
  void HandleLine(Slot& slot, const std::string& line);
  void HandleStep(Slot& slot, const Json& line);
  void HandleWorkerEvent(Slot& slot, const Json& line);
  /// A checkpoint the worker reported: its digest taken now, the newest few kept.
  void RecordCheckpoint(Slot& slot, std::int64_t step, const std::string& path);
  void HandleExit(Slot& slot);
  void CloseFds(Slot& slot);
  void Restart(Slot& slot, double delay);
  void Fire(const DueFault& due, Slot& slot);
  bool Eligible(const DueFault& due, const Slot& slot) const;
  void LiftDiskFull(Slot& slot, const std::string& why);
  /// Tells a built-in worker to flip a bit in its next result.
  void Plant(Slot& slot, std::uint64_t seed) {
    const std::string message = Json{{"plant", "sdc"}, {"seed", seed}}.dump() + "\n";
    (void)!::write(slot.in_fd, message.data(), message.size());
  }
  void Sample();
  bool HasOpenFaults(const Slot& slot) const {
    return std::any_of(open_.begin(), open_.end(),
                       [&](const OpenFault& f) { return f.worker == slot.index && !f.sdc; });
  }

  const StressOptions& options_;
  monitor::Sampler* sampler_;
  monitor::RuleEngine* rules_;
  FaultSchedule schedule_;
  std::optional<MatrixSampler> matrix_;
  bool exec_ = false;
  double start_ = 0.0;
  std::vector<Slot> slots_;
  std::vector<PendingFault> pending_;
  std::vector<OpenFault> open_;
  StressRun run_;
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
  // The checkpoint to resume from: the newest reported one whose digest still matches.
  std::string resume;
  std::int64_t resume_step = 0;
  if (slot.resume_at_most) {
    while (!slot.checkpoints.empty() && slot.checkpoints.back().step > *slot.resume_at_most) {
      slot.checkpoints.pop_back();
    }
    slot.resume_at_most.reset();
  }
  while (!slot.checkpoints.empty()) {
    const CheckpointRecord newest = slot.checkpoints.back();  // a copy: popped below
    auto digest = FileDigest(newest.path);
    if (digest.ok() && *digest == newest.digest) {
      resume = newest.path;
      resume_step = newest.step;
      break;
    }
    ++run_.corrupt_checkpoints;
    const std::string why =
        digest.ok() ? "its digest changed since it was written" : digest.status().message();
    slot.checkpoints.pop_back();
    Event(T(), "checkpoint-rejected", slot.index,
          fmt::format("checkpoint of step {} ({}) not used: {}; {}", newest.step, newest.path, why,
                      slot.checkpoints.empty()
                          ? std::string("starting from step 0")
                          : fmt::format("using step {}", slot.checkpoints.back().step)));
  }
  slot.ledger.Resume(resume_step);
  const Json values = ValuesFor(slot);
  // A worker started at the last step runs no step with new values: no change to record.
  const bool runs_a_step = !options_.steps || resume_step < *options_.steps;
  if (slot.generation > 0 && values != slot.values && runs_a_step &&
      run_.parameter_changes.size() < kMaxEvents) {
    run_.parameter_changes.push_back(
        {{"worker", slot.index}, {"time_s", T()}, {"step", resume_step}, {"values", values}});
  }
  slot.values = values;
  // A built-in worker stops by itself where a step-scheduled parameter changes, so that new
  // values start exactly at the boundary; `exec` commands and time schedules get SIGTERM.
  slot.boundary = 0;
  std::int64_t stop_at = options_.steps.value_or(0);
  if (matrix_ && !exec_) {
    if (const auto next = matrix_->NextStepBoundary(resume_step);
        next && (stop_at == 0 || *next < stop_at)) {
      slot.boundary = *next;
      stop_at = *next;
    }
  }

  std::vector<std::string> argv;
  if (exec_) {
    Json values = slot.values;
    values["checkpoint"] = resume;
    values["checkpoint_dir"] = slot.dir;
    values["worker"] = slot.index;
    values["device"] = slot.device;
    values["step"] = resume_step;
    values["steps"] = options_.steps.value_or(0);
    values["seed"] = options_.seed;
    PARITY_ASSIGN_OR_RETURN(argv, ExpandCommand(options_.command, values));
  } else {
    argv = {options_.parity_exe,
            "stress",
            "--worker",
            "--workload",
            options_.workload,
            "--backend",
            options_.backend,
            "--device",
            std::to_string(slot.device),
            "--params",
            slot.values.dump(),
            "--checkpoint-dir",
            slot.dir,
            "--checkpoint-every",
            std::to_string(options_.checkpoint_every),
            "--keep-checkpoints",
            std::to_string(options_.checkpoints_kept),
            "--steps",
            std::to_string(stop_at)};
    if (!resume.empty()) argv.insert(argv.end(), {"--resume", resume});
    if (options_.worker_threads > 0) {
      argv.insert(argv.end(), {"--threads", std::to_string(options_.worker_threads)});
    }
  }
  std::vector<std::string> env_strings = {fmt::format("PARITY_STRESS_WORKER={}", slot.index),
                                          fmt::format("PARITY_STRESS_DEVICE={}", slot.device),
                                          fmt::format("PARITY_STRESS_CHECKPOINT_DIR={}", slot.dir)};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "PARITY_STRESS_", 14) != 0) env_strings.emplace_back(*e);
  }
  std::vector<char*> cargv, cenv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (std::string& e : env_strings) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  int out[2], err[2], in[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Status::Internal("pipe failed");
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]), ::close(out[1]);
    return Status::Internal("pipe failed");
  }
  if (::pipe2(in, O_CLOEXEC) != 0) {
    ::close(out[0]), ::close(out[1]), ::close(err[0]), ::close(err[1]);
    return Status::Internal("pipe failed");
  }
  const int devnull = exec_ ? ::open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::setpgid(0, 0);
    ::dup2(exec_ ? devnull : in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::execvpe(cargv[0], cargv.data(), cenv.data());
    const std::string message =
        fmt::format("parity: error: cannot run {}: {}\n", cargv[0], std::strerror(errno));
    (void)!::write(2, message.data(), message.size());
    ::_exit(127);
  }
  if (devnull >= 0) ::close(devnull);
  ::close(out[1]);
  ::close(err[1]);
  ::close(in[0]);
  if (pid < 0) {
    ::close(out[0]), ::close(err[0]), ::close(in[1]);
    return Status::Internal(fmt::format("fork failed: {}", std::strerror(errno)));
  }
  ::setpgid(pid, pid);
  ::fcntl(out[0], F_SETFL, O_NONBLOCK);
  ::fcntl(err[0], F_SETFL, O_NONBLOCK);
  ::fcntl(in[1], F_SETFL, O_NONBLOCK);
  slot.pid = pid;
  slot.out_fd = out[0];
  slot.err_fd = err[0];
  slot.in_fd = in[1];
  slot.exited = false;
  slot.state = SlotState::kRunning;
  slot.started = slot.last_progress = Now();
  slot.steps_this_process = 0;
  slot.stop_sent = slot.restart_after_stop = slot.kill_expected = slot.watchdog_fired = false;
  slot.disk_full = false;
  slot.process_work = 0.0;
  ++slot.generation;
  // A flip asked of the previous process that it did not live to plant: asked again.
  for (const OpenFault& fault : open_) {
    if (fault.sdc && fault.worker == slot.index && !fault.sdc_step) Plant(slot, fault.plant_seed);
  }
  Event(T(), "worker-start", slot.index,
        fmt::format("worker {} started (pid {}) from {}", slot.index, pid,
                    resume.empty() ? std::string("the beginning")
                                   : fmt::format("the checkpoint of step {}", resume_step)));
  return Status::Ok();
}

void Supervisor::CloseFds(Slot& slot) {
  for (int* fd : {&slot.out_fd, &slot.err_fd, &slot.in_fd}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void Supervisor::ReadOutput(Slot& slot, int fd, std::string& buffer, bool is_stdout, bool drain) {
  char chunk[65536];
  for (int reads = 0; drain || reads < 16; ++reads) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(n));
    std::size_t begin = 0, newline;
    while ((newline = buffer.find('\n', begin)) != std::string::npos) {
      std::string line = buffer.substr(begin, newline - begin);
      begin = newline + 1;
      if (is_stdout) {
        HandleLine(slot, line);
      } else {
        if (options_.forward_output)
          std::fprintf(stderr, "[worker %d] %s\n", slot.index, line.c_str());
        slot.tail.push_back(line.substr(0, 400));
        if (slot.tail.size() > kTailLines) slot.tail.pop_front();
      }
    }
    buffer.erase(0, begin);
    if (buffer.size() > kMaxLine) {
      Event(T(), "output-dropped", slot.index, "a line over 1 MiB was dropped");
      buffer.clear();
    }
  }
}

void Supervisor::HandleLine(Slot& slot, const std::string& line) {
  Json json = Json::parse(line, nullptr, false);
  if (!exec_ && json.is_object() && json.contains("event") && json["event"].is_string()) {
    HandleWorkerEvent(slot, json);
    return;
  }
  if (json.is_object() && json.contains("step") && json["step"].is_number_integer()) {
    HandleStep(slot, json);
    return;
  }
  // Anything else is the workload's own output: logged, not interpreted.
  if (options_.forward_output) std::fprintf(stderr, "[worker %d] %s\n", slot.index, line.c_str());
  slot.tail.push_back(line.substr(0, 400));
  if (slot.tail.size() > kTailLines) slot.tail.pop_front();
}

void Supervisor::HandleStep(Slot& slot, const Json& line) {
  const double now = Now();
  const std::int64_t step = line["step"].get<std::int64_t>();
  std::optional<double> loss;
  if (line.contains("loss") && line["loss"].is_number()) loss = line["loss"].get<double>();
  slot.ledger.Record(step, loss);
  slot.last_progress = now;
  slot.ever_stepped = true;
  slot.consecutive_failures = 0;
  ++slot.steps_this_process;
  const double work =
      line.contains("work") && line["work"].is_number() ? line["work"].get<double>() : 1.0;
  if (slot.steps_this_process == 1) {
    slot.first_step_time = now;
  } else {
    slot.process_work += work;
  }
  slot.last_step_time = now;
  if (line.contains("sdc_unlisted") && line["sdc_unlisted"].is_number_integer()) {
    run_.sdc_count += std::max<std::int64_t>(line["sdc_unlisted"].get<std::int64_t>(), 0);
  }
  if (line.contains("nondeterministic") && line["nondeterministic"].is_number_integer()) {
    run_.nondeterministic += line["nondeterministic"].get<std::int64_t>();
  }
  if (line.contains("checkpoint") && line["checkpoint"].is_string()) {
    RecordCheckpoint(slot, step, line["checkpoint"].get<std::string>());
  }
  if (line.contains("checkpoint_error")) {
    ++run_.checkpoint_failures;
    const std::string message = line["checkpoint_error"].is_string()
                                    ? line["checkpoint_error"].get<std::string>()
                                    : std::string("(no message)");
    Event(T(), "checkpoint-failed", slot.index,
          fmt::format("checkpoint of step {} failed, the run goes on: {}", step, message));
    if (slot.disk_full) LiftDiskFull(slot, "after the failed checkpoint");
  }
  // Two intervals: the worker may be steps ahead of the lines read so far, past the checkpoint
  // the limit was meant for, so the first one it writes under the limit can be a full interval
  // after the step the limit was set at.
  if (slot.disk_full && slot.ledger.last() - slot.disk_full_since_step >
                            2 * std::max<std::int64_t>(options_.checkpoint_every, 1)) {
    LiftDiskFull(slot, "after two checkpoint intervals without a reported failure");
  }
  // Recoveries: the first step after the fault (of a new process, for faults that end one).
  for (auto it = open_.begin(); it != open_.end();) {
    OpenFault& fault = *it;
    FaultRecord& record = run_.faults[fault.record];
    bool close = false;
    if (fault.worker != slot.index) {
    } else if (fault.sdc) {
      if (fault.sdc_step && step >= *fault.sdc_step) {
        record.recovered = false;
        record.detail +=
            fmt::format("; the flip planted in step {} was not reported", *fault.sdc_step);
        close = true;
      }
    } else if ((!fault.needs_new_process || slot.generation > fault.generation) &&
               !(fault.needs_lift && slot.disk_full)) {
      record.recovered = true;
      record.recovery_seconds = (now - start_) - fault.time;
      close = true;
    }
    it = close ? open_.erase(it) : it + 1;
  }
}

void Supervisor::RecordCheckpoint(Slot& slot, std::int64_t step, const std::string& path) {
  auto digest = FileDigest(path);
  if (!digest.ok()) {
    Event(T(), "checkpoint-unreadable", slot.index, digest.status().message());
    return;
  }
  slot.checkpoints.push_back({step, path, *digest});
  while (slot.checkpoints.size() > std::max<std::size_t>(options_.checkpoints_kept, 1)) {
    slot.checkpoints.pop_front();
  }
}

void Supervisor::HandleWorkerEvent(Slot& slot, const Json& line) {
  const std::string kind = line["event"].get<std::string>();
  if (kind == "sdc") {
    ++run_.sdc_count;
    Json event = line;
    event.erase("event");
    event["worker"] = slot.index;
    event["time_s"] = T();
    if (run_.sdc_events.size() < kMaxSdcEvents) run_.sdc_events.push_back(event);
    // A planted flip is found when an event names its step and position.
    for (auto it = open_.begin(); it != open_.end(); ++it) {
      if (!it->sdc || it->worker != slot.index || !it->sdc_step) continue;
      FaultRecord& record = run_.faults[it->record];
      if (line.value("step", std::int64_t{-1}) == *it->sdc_step &&
          line.value("position", Json()) == record.planted.value("position", Json()) &&
          line.value("array", std::string()) == record.planted.value("array", std::string())) {
        record.recovered = true;
        record.recovery_seconds = T() - it->time;
        record.detail += "; reported at that position";
        open_.erase(it);
        break;
      }
    }
  } else if (kind == "planted") {
    for (OpenFault& fault : open_) {
      if (fault.sdc && fault.worker == slot.index && !fault.sdc_step) {
        fault.sdc_step = line.value("step", std::int64_t{0});
        FaultRecord& record = run_.faults[fault.record];
        record.planted = {{"step", *fault.sdc_step},
                          {"array", line.value("array", std::string())},
                          {"position", line.value("position", Json::array())},
                          {"bit", line.value("bit", 0)}};
        record.detail = fmt::format("bit {} of {}{} flipped in step {}", line.value("bit", 0),
                                    line.value("array", std::string()),
                                    line.value("position", Json::array()).dump(), *fault.sdc_step);
        break;
      }
    }
  } else if (kind == "oom") {
    const bool survived = line.value("survived", false);
    Event(T(), "oom", slot.index,
          survived ? fmt::format("worker {} allocated {} bytes past its limit without failing",
                                 slot.index, line.value("allocated_bytes", std::uint64_t{0}))
                   : fmt::format("worker {} ran out of memory after {} more bytes", slot.index,
                                 line.value("allocated_bytes", std::uint64_t{0})));
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
  const std::string how = DescribeStatus(status);
  slot.pid = -1;
  CloseFds(slot);
  if (slot.steps_this_process >= 2) slot.busy += slot.last_step_time - slot.first_step_time;
  slot.work += slot.process_work;
  const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  Event(T(), "worker-exit", slot.index,
        fmt::format("worker {} ended ({}) at step {}", slot.index, how, slot.ledger.last()));
  // A usage error or an unavailable backend before any step of the run is the run's error.
  if (!slot.ever_stepped && slot.generation == 1 && WIFEXITED(status) &&
      (WEXITSTATUS(status) == 2 || WEXITSTATUS(status) == 3) && !slot.kill_expected) {
    const std::string message =
        slot.last_error.empty() ? (slot.tail.empty() ? how : slot.tail.back()) : slot.last_error;
    fatal_ = WEXITSTATUS(status) == 2
                 ? Status::Invalid("", fmt::format("worker {}: {}", slot.index, message))
                 : Status::Unavailable(fmt::format("worker {}: {}", slot.index, message));
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
  const bool planned = slot.kill_expected || slot.watchdog_fired;
  // A worker failing again before any step is the same fault, still open: counted on it.
  const auto open = std::find_if(open_.begin(), open_.end(), [&](const OpenFault& f) {
    return f.worker == slot.index && !run_.faults[f.record].injected;
  });
  if (!planned && open != open_.end()) {
    FaultRecord& record = run_.faults[open->record];
    ++record.repeats;
    record.detail =
        fmt::format("{} (and {} more times: last {})",
                    record.detail.substr(0, record.detail.find(" (and ")), record.repeats, how);
  } else if (!planned) {
    RecordUnplanned(slot, "worker-crash",
                    fmt::format("worker {} ended by itself ({}){}", slot.index, how,
                                slot.tail.empty() ? "" : ": " + slot.tail.back()));
  }
  ++slot.consecutive_failures;
  if (slot.consecutive_failures > options_.max_restarts) {
    slot.state = SlotState::kFailed;
    slot.failure = fmt::format("given up after {} restarts without a completed step (last: {})",
                               options_.max_restarts, how);
    Event(T(), "worker-failed", slot.index, slot.failure);
    return;
  }
  // Backoff: the first restart at once, then 0.25 s doubling up to 10 s while none succeeds.
  const double delay = slot.consecutive_failures <= 1
                           ? 0.0
                           : std::min(10.0, 0.25 * std::pow(2.0, slot.consecutive_failures - 2));
  ++slot.restarts;
  Restart(slot, delay);
}

bool Supervisor::Eligible(const DueFault& due, const Slot& slot) const {
  if (slot.state != SlotState::kRunning || slot.pid <= 0 || slot.exited || slot.stop_sent ||
      slot.kill_expected || slot.watchdog_fired || slot.steps_this_process < 1) {
    return false;
  }
  if (due.kind == FaultKind::kCorruptCheckpoint && slot.checkpoints.empty()) return false;
  if (due.kind == FaultKind::kDiskFull && slot.disk_full) return false;
  return true;
}

void Supervisor::Fire(const DueFault& due, Slot& slot) {
  FaultRecord record;
  record.kind = std::string(FaultKindName(due.kind));
  record.worker = slot.index;
  record.time = T();
  OpenFault open;
  open.worker = slot.index;
  open.time = record.time;
  open.generation = slot.generation;
  switch (due.kind) {
    case FaultKind::kKill:
      Signal(slot, SIGKILL);
      slot.kill_expected = true;
      open.needs_new_process = true;
      record.detail = fmt::format("SIGKILL to worker {} (pid {}) at step {}", slot.index, slot.pid,
                                  slot.ledger.last());
      break;
    case FaultKind::kHang:
      Signal(slot, SIGSTOP);
      open.needs_new_process = true;
      record.detail = fmt::format("SIGSTOP to worker {} (pid {}) at step {}", slot.index, slot.pid,
                                  slot.ledger.last());
      break;
    case FaultKind::kCorruptCheckpoint: {
      const CheckpointRecord& newest = slot.checkpoints.back();
      std::string done = "could not open it";
      const int fd = ::open(newest.path.c_str(), O_RDWR | O_CLOEXEC);
      if (fd >= 0) {
        struct stat st {};
        ::fstat(fd, &st);
        const auto size = static_cast<std::uint64_t>(std::max<off_t>(st.st_size, 0));
        int flipped = 0;
        for (int i = 0; i < 8 && size > 0; ++i) {
          const std::uint64_t at = Mix(options_.seed ^ (due.occurrence << 8) ^ i) % size;
          unsigned char byte = 0;
          if (::pread(fd, &byte, 1, static_cast<off_t>(at)) == 1) {
            byte ^= 0xff;
            if (::pwrite(fd, &byte, 1, static_cast<off_t>(at)) == 1) ++flipped;
          }
        }
        ::close(fd);
        done = fmt::format("{} bytes flipped", flipped);
      }
      Signal(slot, SIGKILL);
      slot.kill_expected = true;
      slot.resume_at_most = newest.step;
      open.needs_new_process = true;
      record.detail = fmt::format(
          "checkpoint of step {} ({}): {}; worker {} killed so that its "
          "restart must read it",
          newest.step, newest.path, done, slot.index);
      break;
    }
    case FaultKind::kDiskFull:
      if (SetSoftLimit(slot.pid, RLIMIT_FSIZE, 0)) {
        slot.disk_full = true;
        slot.disk_full_since_step = slot.ledger.last();
        open.needs_lift = true;
        record.detail = fmt::format(
            "file size limit 0 on worker {}: its next checkpoint write "
            "fails",
            slot.index);
      } else {
        record.detail = fmt::format("prlimit(RLIMIT_FSIZE) on worker {} failed: {}", slot.index,
                                    std::strerror(errno));
      }
      break;
    case FaultKind::kOom: {
      const std::uint64_t vm = VirtualSize(slot.pid);
      const std::uint64_t headroom = std::uint64_t{64} << 20;
      const bool limited = vm > 0 && SetSoftLimit(slot.pid, RLIMIT_AS, vm + headroom);
      if (!exec_) {
        const std::string message =
            Json{{"oom", {{"limit_bytes", std::uint64_t{1} << 30}}}}.dump() + "\n";
        (void)!::write(slot.in_fd, message.data(), message.size());
      }
      slot.kill_expected = true;
      open.needs_new_process = !exec_;
      record.detail =
          limited
              ? fmt::format(
                    "address space of worker {} limited to {} MiB (64 MiB above what "
                    "it maps){}",
                    slot.index, (vm + headroom) >> 20, exec_ ? "" : "; told to allocate past it")
              : fmt::format("prlimit(RLIMIT_AS) on worker {} failed", slot.index);
      break;
    }
    case FaultKind::kSdc: {
      open.plant_seed = Mix(options_.seed ^ 0x5344430000ULL ^ due.occurrence);
      Plant(slot, open.plant_seed);
      open.sdc = true;
      record.detail = "one bit of one result to be flipped in the next step";
      break;
    }
  }
  run_.faults.push_back(record);
  open.record = run_.faults.size() - 1;
  open_.push_back(open);
  Event(record.time, "fault", slot.index, record.kind + ": " + record.detail);
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

Result<StressRun> Supervisor::Run() {
  struct sigaction action {};
  action.sa_handler = ParityStressOnInterrupt;
  sigemptyset(&action.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  ::sigaction(SIGINT, &action, &old_int);
  ::sigaction(SIGTERM, &action, &old_term);
  ::signal(SIGPIPE, SIG_IGN);
  g_interrupted.store(false);

  PARITY_RETURN_IF_ERROR(MakeDirectories(options_.checkpoint_dir));
  start_ = Now();
  if (sampler_) run_.sources = sampler_->opened();
  slots_.resize(options_.workers);
  for (int k = 0; k < options_.workers; ++k) {
    Slot& slot = slots_[k];
    slot.index = k;
    slot.device = k % std::max(options_.devices, 1);
    slot.dir = fmt::format("{}/worker-{}", options_.checkpoint_dir, k);
    PARITY_RETURN_IF_ERROR(MakeDirectories(slot.dir));
    if (Status s = Spawn(slot); !s.ok()) return s;
  }
  double next_sample = Now();
  while (true) {
    const double now = Now();
    const double t = now - start_;
    if (!stopping_ &&
        (g_interrupted.load() || (options_.duration && t >= *options_.duration) || fatal_)) {
      stopping_ = true;
      stop_time_ = now;
      run_.interrupted = g_interrupted.load();
      Event(t, "stop", -1,
            run_.interrupted ? "interrupted: stopping the workers with a final checkpoint"
            : fatal_         ? "stopping: " + fatal_->message()
                             : "duration reached: stopping the workers");
    }
    if (stopping_ && !run_.interrupted && g_interrupted.load()) run_.interrupted = true;
    // Workers to stop: all of them once stopping, except one still recovering from a fault
    // (it gets hang_timeout + stop_grace more seconds, unless interrupted).
    if (stopping_) {
      const bool hurry = run_.interrupted || fatal_ ||
                         now - stop_time_ > options_.hang_timeout + options_.stop_grace;
      for (Slot& slot : slots_) {
        if (slot.state == SlotState::kBackoff && (hurry || !HasOpenFaults(slot))) {
          slot.state = SlotState::kDone;
        }
        if (slot.state == SlotState::kRunning && !slot.stop_sent &&
            (hurry || !HasOpenFaults(slot))) {
          Signal(slot, SIGCONT);
          Signal(slot, SIGTERM);
          slot.stop_sent = true;
          slot.restart_after_stop = false;
          slot.stop_deadline = now + options_.stop_grace;
        }
      }
    }
    for (Slot& slot : slots_) {
      if (slot.state == SlotState::kBackoff && now >= slot.restart_at) {
        if (Status s = Spawn(slot); !s.ok()) {
          if (!slot.ever_stepped && !fatal_) fatal_ = s;
          slot.state = SlotState::kFailed;
          slot.failure = s.message();
          Event(T(), "worker-failed", slot.index, s.message());
        }
      }
    }
    // Output.
    std::vector<pollfd> fds;
    std::vector<std::pair<int, bool>> owners;
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
      if (fds[i].revents == 0) continue;
      Slot& slot = slots_[owners[i].first];
      if (owners[i].second) {
        ReadOutput(slot, slot.out_fd, slot.out_buffer, true, false);
      } else {
        ReadOutput(slot, slot.err_fd, slot.err_buffer, false, false);
      }
    }
    // Exits: reaped, then their output drained before the exit is judged.
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
    for (Slot& slot : slots_) {
      if (slot.state != SlotState::kRunning || !slot.exited) continue;
      if (slot.out_fd >= 0) ReadOutput(slot, slot.out_fd, slot.out_buffer, true, true);
      if (slot.err_fd >= 0) ReadOutput(slot, slot.err_fd, slot.err_buffer, false, true);
      slot.out_buffer.clear();
      slot.err_buffer.clear();
      HandleExit(slot);
    }
    // Watchdog and stop deadlines.
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
        const bool injected = std::any_of(open_.begin(), open_.end(), [&](const OpenFault& f) {
          return f.worker == slot.index && run_.faults[f.record].kind == "hang";
        });
        Event(T(), "watchdog", slot.index,
              fmt::format("worker {} completed no step for {} s: killed", slot.index,
                          options_.hang_timeout));
        if (!injected) {
          RecordUnplanned(slot, "worker-hang",
                          fmt::format("no step completed for {} s (at step {})",
                                      options_.hang_timeout, slot.ledger.last()));
        }
      }
    }
    // Faults due, each fired on its worker once that worker can take it.
    if (!stopping_) {
      double steps = 0.0;
      for (const Slot& slot : slots_) steps += static_cast<double>(slot.ledger.last());
      for (const DueFault& due : schedule_.Due(T(), steps / slots_.size())) {
        pending_.push_back({due});
      }
      for (auto it = pending_.begin(); it != pending_.end();) {
        Slot& slot = slots_[it->due.worker];
        if (slot.state == SlotState::kDone || slot.state == SlotState::kFailed) {
          Event(T(), "fault-skipped", slot.index,
                fmt::format("{} not injected: worker {} has ended", FaultKindName(it->due.kind),
                            slot.index));
          it = pending_.erase(it);
        } else if (Eligible(it->due, slot)) {
          Fire(it->due, slot);
          it = pending_.erase(it);
        } else {
          ++it;
        }
      }
    }
    // The matrix: a worker whose parameters change is stopped and resumed with the new ones.
    if (matrix_ && !stopping_) {
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
    if (sampler_ && Now() >= next_sample) {
      Sample();
      next_sample = std::max(next_sample + options_.telemetry_interval, Now());
    }
    if (std::all_of(slots_.begin(), slots_.end(), [](const Slot& s) {
          return s.state == SlotState::kDone || s.state == SlotState::kFailed;
        })) {
      break;
    }
  }
  if (sampler_) Sample();
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  if (fatal_) return *fatal_;

  run_.seconds = Now() - start_;
  for (const OpenFault& fault : open_) {
    FaultRecord& record = run_.faults[fault.record];
    if (!record.recovered) {
      record.detail += run_.interrupted ? "; the run was interrupted before it recovered"
                                        : "; not recovered by the end of the run";
    }
  }
  for (const Slot& slot : slots_) {
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
    summary.state = slot.state == SlotState::kFailed ? "failed"
                    : run_.interrupted               ? "stopped"
                                                     : "done";
    summary.failure = slot.failure;
    run_.steps += summary.steps;
    run_.workers.push_back(summary);
    if (summary.state == "failed") {
      run_.reasons.push_back(fmt::format("worker {} failed: {}", slot.index, slot.failure));
    } else if (options_.steps && summary.steps < *options_.steps && !run_.interrupted &&
               !options_.duration) {
      run_.reasons.push_back(fmt::format("worker {} ended at step {} of {}", slot.index,
                                         summary.steps, *options_.steps));
    }
    if (summary.lost > 0) {
      run_.reasons.push_back(fmt::format("worker {}: {} steps lost", slot.index, summary.lost));
    }
    if (summary.duplicated > 0) {
      run_.reasons.push_back(
          fmt::format("worker {}: {} steps done twice", slot.index, summary.duplicated));
    }
  }
  if (run_.sdc_count > 0) {
    run_.reasons.push_back(fmt::format("{} silent-data-corruption events", run_.sdc_count));
  }
  std::int64_t unrecovered = 0;
  for (const FaultRecord& record : run_.faults) {
    if (!record.recovered && !run_.interrupted) ++unrecovered;
  }
  if (unrecovered > 0) run_.reasons.push_back(fmt::format("{} faults not recovered", unrecovered));
  std::int64_t fatal_alerts = 0;
  for (const monitor::Alert& alert : run_.alerts) {
    if (alert.severity == monitor::Severity::kFatal && !alert.resolved) ++fatal_alerts;
  }
  if (fatal_alerts > 0) {
    run_.reasons.push_back(fmt::format("{} fatal rule alerts", fatal_alerts));
  }
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
