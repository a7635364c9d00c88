// SPDX-License-Identifier: Apache-2.0
// Firing injected faults: which worker can take a fault now, and what each kind does to a
// real child process (signals, resource limits), to a checkpoint file, and on the control
// pipe of a built-in worker.
#include "stress/fault_firing.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "core/process.h"
#include "testdata.h"

namespace parity::stress {
namespace {

using ::parity::testing::TempDir;

/// A child that sleeps until it is killed, in its own process group.
class Sleeper {
 public:
  Sleeper() {
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", "exec sleep 600"};
    Result<StartedProcess> started = StartProcess(spec, false);
    EXPECT_TRUE(started.ok());
    if (started.ok()) process_ = *started;
  }
  ~Sleeper() {
    if (process_.pid > 0) {
      ::kill(-process_.pid, SIGKILL);
      ::waitpid(process_.pid, nullptr, 0);
    }
    ::close(process_.stdout_fd);
    ::close(process_.stderr_fd);
  }
  int pid() const { return process_.pid; }
  /// Waits for it to stop or end; the waitpid status.
  int Wait() {
    int status = 0;
    EXPECT_EQ(::waitpid(process_.pid, &status, WUNTRACED), process_.pid);
    if (!WIFSTOPPED(status)) process_.pid = -1;
    return status;
  }

 private:
  StartedProcess process_;
};

FaultTarget Running(int pid) {
  FaultTarget target;
  target.worker = 1;
  target.pid = pid;
  target.step = 12;
  target.running = true;
  target.steps_this_process = 3;
  return target;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// What was written to the read end of a pipe so far.
std::string Drain(int fd) {
  char buffer[4096];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
}

TEST(CanFire, OnlyAtARunningWorkerThatHasStepped) {
  const FaultTarget ready = Running(100);
  EXPECT_TRUE(CanFire(FaultKind::kKill, ready));
  FaultTarget target = ready;
  target.running = false;
  EXPECT_FALSE(CanFire(FaultKind::kKill, target));
  target = ready;
  target.pid = -1;
  EXPECT_FALSE(CanFire(FaultKind::kHang, target));
  target = ready;
  target.settling = true;
  EXPECT_FALSE(CanFire(FaultKind::kOom, target));
  target = ready;
  target.steps_this_process = 0;
  EXPECT_FALSE(CanFire(FaultKind::kSdc, target));
}

TEST(CanFire, CorruptCheckpointNeedsOneAndDiskFullNeedsNoLimitYet) {
  FaultTarget target = Running(100);
  EXPECT_FALSE(CanFire(FaultKind::kCorruptCheckpoint, target));
  target.newest_checkpoint = CheckpointRef{10, "/ck/step-10.ckpt"};
  EXPECT_TRUE(CanFire(FaultKind::kCorruptCheckpoint, target));
  EXPECT_TRUE(CanFire(FaultKind::kDiskFull, target));
  target.disk_full = true;
  EXPECT_FALSE(CanFire(FaultKind::kDiskFull, target));
  EXPECT_TRUE(CanFire(FaultKind::kKill, target));
}

TEST(FireFault, KillSendsSigkillAndNeedsANewProcess) {
  Sleeper child;
  const FiredFault fired = FireFault({0, 0, FaultKind::kKill, 1}, Running(child.pid()), 1);
  EXPECT_TRUE(fired.kill_expected);
  EXPECT_TRUE(fired.needs_new_process);
  EXPECT_EQ(fired.detail, fmt::format("SIGKILL to worker 1 (pid {}) at step 12", child.pid()));
  const int status = child.Wait();
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

TEST(FireFault, HangStopsTheWorkerForTheWatchdog) {
  Sleeper child;
  const FiredFault fired = FireFault({0, 0, FaultKind::kHang, 1}, Running(child.pid()), 1);
  EXPECT_FALSE(fired.kill_expected);
  EXPECT_TRUE(fired.needs_new_process);
  const int status = child.Wait();
  ASSERT_TRUE(WIFSTOPPED(status));
  EXPECT_EQ(WSTOPSIG(status), SIGSTOP);
}

TEST(FireFault, CorruptCheckpointFlipsBytesThenKills) {
  TempDir dir;
  const std::string path = dir.path() + "/step-10.ckpt";
  const std::string original(256, 'a');
  std::ofstream(path, std::ios::binary) << original;
  Sleeper child;
  FaultTarget target = Running(child.pid());
  target.newest_checkpoint = CheckpointRef{10, path};
  const FiredFault fired = FireFault({0, 3, FaultKind::kCorruptCheckpoint, 1}, target, 99);
  EXPECT_TRUE(fired.kill_expected);
  EXPECT_EQ(fired.resume_at_most, 10);
  EXPECT_EQ(fired.detail,
            "checkpoint of step 10 (" + path +
                "): 8 bytes flipped; worker 1 killed so that its restart must read it");
  EXPECT_NE(ReadAll(path), original);
  EXPECT_TRUE(WIFSIGNALED(child.Wait()));
}

TEST(CorruptFile, IsDeterministicForASeed) {
  TempDir dir;
  const std::string a = dir.path() + "/a", b = dir.path() + "/b";
  const std::string original(1000, '\0');
  std::ofstream(a, std::ios::binary) << original;
  std::ofstream(b, std::ios::binary) << original;
  EXPECT_EQ(CorruptFile(a, 7), "8 bytes flipped");
  EXPECT_EQ(CorruptFile(b, 7), "8 bytes flipped");
  EXPECT_EQ(ReadAll(a), ReadAll(b));
  EXPECT_NE(ReadAll(a), original);
  EXPECT_EQ(CorruptFile(dir.path() + "/missing", 7), "could not open it");
}

TEST(FireFault, DiskFullSetsAFileSizeLimitOfZero) {
  Sleeper child;
  const FiredFault fired = FireFault({0, 0, FaultKind::kDiskFull, 1}, Running(child.pid()), 1);
  EXPECT_TRUE(fired.disk_full);
  EXPECT_FALSE(fired.kill_expected);
  EXPECT_EQ(fired.detail, "file size limit 0 on worker 1: its next checkpoint write fails");
  struct rlimit limit {};
  ASSERT_EQ(::prlimit(child.pid(), RLIMIT_FSIZE, nullptr, &limit), 0);
  EXPECT_EQ(limit.rlim_cur, 0u);
  ASSERT_TRUE(SetSoftLimit(child.pid(), RLIMIT_FSIZE, RLIM_INFINITY));
  ASSERT_EQ(::prlimit(child.pid(), RLIMIT_FSIZE, nullptr, &limit), 0);
  EXPECT_EQ(limit.rlim_cur, limit.rlim_max);
}

TEST(FireFault, OomLimitsTheAddressSpaceAndTellsABuiltinWorker) {
  Sleeper child;
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  FaultTarget target = Running(child.pid());
  target.control_fd = pipe_fds[1];
  const std::uint64_t vm = VirtualSize(child.pid());
  ASSERT_GT(vm, 0u);
  const FiredFault fired = FireFault({0, 0, FaultKind::kOom, 1}, target, 1);
  EXPECT_TRUE(fired.kill_expected);
  EXPECT_TRUE(fired.needs_new_process);
  EXPECT_NE(fired.detail.find("; told to allocate past it"), std::string::npos) << fired.detail;
  EXPECT_EQ(Drain(pipe_fds[0]), "{\"oom\":{\"limit_bytes\":1073741824}}\n");
  struct rlimit limit {};
  ASSERT_EQ(::prlimit(child.pid(), RLIMIT_AS, nullptr, &limit), 0);
  EXPECT_GT(limit.rlim_cur, vm);
  EXPECT_NE(limit.rlim_cur, RLIM_INFINITY);

  // An `exec` command is only limited: no message, and it may well survive.
  target.builtin = false;
  const FiredFault exec = FireFault({0, 1, FaultKind::kOom, 1}, target, 1);
  EXPECT_FALSE(exec.needs_new_process);
  EXPECT_EQ(exec.detail.find("told to"), std::string::npos);
  ::close(pipe_fds[1]);
  EXPECT_EQ(Drain(pipe_fds[0]), "");
  ::close(pipe_fds[0]);
}

TEST(FireFault, SdcAsksForAFlipWithASeedOfTheOccurrence) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  FaultTarget target = Running(0);
  target.control_fd = pipe_fds[1];
  const FiredFault first = FireFault({0, 0, FaultKind::kSdc, 1}, target, 5);
  const FiredFault again = FireFault({0, 0, FaultKind::kSdc, 1}, target, 5);
  const FiredFault second = FireFault({0, 1, FaultKind::kSdc, 1}, target, 5);
  EXPECT_TRUE(first.sdc);
  EXPECT_FALSE(first.kill_expected);
  EXPECT_EQ(first.plant_seed, again.plant_seed);
  EXPECT_NE(first.plant_seed, second.plant_seed);
  const std::string sent = Drain(pipe_fds[0]);
  EXPECT_EQ(sent.substr(0, sent.find('\n') + 1),
            fmt::format("{{\"plant\":\"sdc\",\"seed\":{}}}\n", first.plant_seed));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

}  // namespace
}  // namespace parity::stress
