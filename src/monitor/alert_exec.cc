// SPDX-License-Identifier: Apache-2.0
#include "monitor/alert_exec.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

extern char** environ;

namespace parity::monitor {

AlertRunner::AlertRunner(std::vector<std::string> argv, double timeout_seconds)
    : argv_(std::move(argv)), timeout_(timeout_seconds) {}

AlertRunner::~AlertRunner() { Finish(0.0); }

Status AlertRunner::Run(const std::string& json, double now_seconds) {
  Poll(now_seconds);
  if (children_.size() >= 16) {
    return Status::Unavailable("--alert-exec: 16 alert programs still running; alert not sent");
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Status::Unavailable(std::string("--alert-exec: pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
  std::vector<char*> argv;
  for (std::string& word : argv_) argv.push_back(word.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[0]);
  if (rc != 0) {
    ::close(fds[1]);
    return Status::Unavailable("--alert-exec: can't run " + argv_[0] + ": " + std::strerror(rc));
  }
  children_.push_back({pid, now_seconds});
  // An alert is a few hundred bytes, well inside a pipe's buffer: this write does not block
  // on a child that never reads. A child that exits first gives EPIPE here: SIGPIPE is blocked
  // in this thread around the write, and one it raised is taken off before unblocking.
  const std::string line = json + "\n";
  sigset_t pipe_signal, old_mask;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &old_mask);
  std::size_t written = 0;
  bool broken = false;
  while (written < line.size()) {
    const ssize_t n = ::write(fds[1], line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) broken = true;
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  if (broken && !sigismember(&old_mask, SIGPIPE)) {
    const struct timespec now {};
    while (::sigtimedwait(&pipe_signal, nullptr, &now) == SIGPIPE) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::close(fds[1]);
  return Status::Ok();
}

std::vector<std::string> AlertRunner::Poll(double now_seconds) {
  std::vector<std::string> problems;
  for (auto it = children_.begin(); it != children_.end();) {
    int status = 0;
    const pid_t done = ::waitpid(it->pid, &status, WNOHANG);
    if (done == it->pid) {
      if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        problems.push_back("--alert-exec: " + argv_[0] + " exited with status " +
                           std::to_string(WEXITSTATUS(status)));
      } else if (WIFSIGNALED(status)) {
        problems.push_back("--alert-exec: " + argv_[0] + " was killed by signal " +
                           std::to_string(WTERMSIG(status)));
      }
      it = children_.erase(it);
      continue;
    }
    if (done < 0) {
      it = children_.erase(it);
      continue;
    }
    if (now_seconds - it->started > timeout_) {
      ::kill(it->pid, SIGKILL);
      ::waitpid(it->pid, &status, 0);
      problems.push_back("--alert-exec: " + argv_[0] + " still running after " +
                         std::to_string(static_cast<int>(timeout_)) + " s: killed");
      it = children_.erase(it);
      continue;
    }
    ++it;
  }
  return problems;
}

std::vector<std::string> AlertRunner::Finish(double seconds) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> problems;
  while (!children_.empty()) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto more = Poll(0.0);
    problems.insert(problems.end(), more.begin(), more.end());
    if (children_.empty() || elapsed >= seconds) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (const Child& child : children_) {
    int status = 0;
    ::kill(child.pid, SIGKILL);
    ::waitpid(child.pid, &status, 0);
  }
  children_.clear();
  return problems;
}

}  // namespace parity::monitor
