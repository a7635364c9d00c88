// SPDX-License-Identifier: Apache-2.0
#include "core/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

namespace parity {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

[[noreturn]] void ChildFail(int fd, int err) {
  [[maybe_unused]] ssize_t n = ::write(fd, &err, sizeof err);
  ::_exit(127);
}

/// Everything a child needs to exec, prepared before fork: after it, only async-signal-safe
/// calls. Filled in place: argv and envp point into spec and env_strings.
struct ExecImage {
  std::string program;  ///< "" when argv[0] has no '/' and PATH has no such command
  std::vector<char*> argv;
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
};

/// The first executable regular file `name` in PATH; "" when there is none.
std::string FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t colon = dirs.find(':', start);
    const std::string_view dir =
        std::string_view(dirs).substr(start, colon == std::string::npos ? colon : colon - start);
    const std::string candidate =
        fmt::format("{}/{}", dir.empty() ? std::string_view(".") : dir, name);
    if (::access(candidate.c_str(), X_OK) == 0) {
      struct stat st {};
      if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return candidate;
    }
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return "";
}

void PrepareExec(const ProcessSpec& spec, ExecImage* image) {
  for (const std::string& word : spec.argv) image->argv.push_back(const_cast<char*>(word.c_str()));
  image->argv.push_back(nullptr);
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (spec.env.count(name)) continue;
    if (!spec.env_unset_prefix.empty() && name.starts_with(spec.env_unset_prefix)) continue;
    image->env_strings.push_back(entry);
  }
  for (const auto& [name, value] : spec.env)
    image->env_strings.push_back(fmt::format("{}={}", name, value));
  for (std::string& e : image->env_strings) image->envp.push_back(e.data());
  image->envp.push_back(nullptr);
  // PATH lookup happens here (execve does none); a name with a '/' is used as it is.
  const std::string& program = spec.argv[0];
  image->program = program.find('/') == std::string::npos ? FindInPath(program) : program;
}

/// In the child, before exec: its own process group, SIGKILL when `parent` dies, default
/// signal handling, and the given descriptors as stdin (when >= 0), stdout and stderr.
void SetUpChild(pid_t parent, int in_fd, int out_fd, int err_fd) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);
  if (in_fd >= 0) ::dup2(in_fd, STDIN_FILENO);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(err_fd, STDERR_FILENO);
}

/// Waits for the child to end, stopping its group (SIGTERM, then SIGKILL after stop_grace)
/// once the time limit passes or *stop becomes true; its waitpid status.
int WaitStopping(pid_t pid, const ProcessSpec& spec, const std::atomic<bool>* stop, double start,
                 ProcessResult* result) {
  std::optional<double> kill_at;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    const double now = Now();
    if (!kill_at) {
      const bool over = spec.timeout && now - start > *spec.timeout;
      const bool stopped = stop != nullptr && stop->load();
      if (over || stopped) {
        result->timed_out = over && !stopped;
        result->interrupted = stopped;
        ::kill(-pid, SIGTERM);
        kill_at = now + spec.stop_grace;
      }
    } else if (now >= *kill_at) {
      ::kill(-pid, SIGKILL);
      kill_at = now + 1e9;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(now - start < 1.0 ? 2 : 10));
  }
  return status;
}

void ClosePipe(int fds[2]) {
  for (int i = 0; i < 2; ++i) {
    if (fds[i] >= 0) ::close(fds[i]);
    fds[i] = -1;
  }
}

}  // namespace

std::string ProcessResult::Describe() const {
  if (!started) return fmt::format("did not start: {}", error);
  if (timed_out) return fmt::format("timed out after {:.0f} s", seconds);
  if (interrupted) return "stopped: the collect was interrupted";
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  return fmt::format("exit {}", exit_code);
}

ProcessResult RunProcess(const ProcessSpec& spec, const std::atomic<bool>* stop) {
  ProcessResult result;
  if (spec.argv.empty() || spec.argv[0].empty()) {
    result.error = "no command";
    return result;
  }
  ExecImage image;
  PrepareExec(spec, &image);
  if (image.program.empty()) {
    result.error = fmt::format("{}: not found in PATH", spec.argv[0]);
    return result;
  }
  int log_fd = -1;
  if (!spec.log_path.empty()) {
    log_fd = ::open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  } else {
    log_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  }
  if (log_fd < 0) {
    result.error = fmt::format("{}: {}", spec.log_path, std::strerror(errno));
    return result;
  }
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    result.error = std::strerror(errno);
    ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    return result;
  }
  const pid_t parent = ::getpid();
  const double start = Now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.error = fmt::format("fork: {}", std::strerror(errno));
    ::close(log_fd);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    if (null_fd >= 0) ::close(null_fd);
    return result;
  }
  if (pid == 0) {
    SetUpChild(parent, null_fd, log_fd, log_fd);
    if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) ChildFail(pipe_fds[1], errno);
    ::execve(image.program.c_str(), image.argv.data(), image.envp.data());
    ChildFail(pipe_fds[1], errno);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before any kill below
  ::close(pipe_fds[1]);
  ::close(log_fd);
  if (null_fd >= 0) ::close(null_fd);
  int child_errno = 0;
  const ssize_t n = ::read(pipe_fds[0], &child_errno, sizeof child_errno);
  ::close(pipe_fds[0]);
  result.started = n != static_cast<ssize_t>(sizeof child_errno);
  if (!result.started) {
    result.error = fmt::format("{}: {}", spec.argv[0], std::strerror(child_errno));
    ::waitpid(pid, nullptr, 0);
    return result;
  }
  if (spec.on_start) spec.on_start(static_cast<int>(pid));
  const int status = WaitStopping(pid, spec, stop, start, &result);
  // Anything the command left behind in its group goes with it.
  ::kill(-pid, SIGKILL);
  result.seconds = Now() - start;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

Result<StartedProcess> StartProcess(const ProcessSpec& spec, bool stdin_pipe) {
  if (spec.argv.empty() || spec.argv[0].empty()) return Status::Internal("no command");
  ExecImage image;
  PrepareExec(spec, &image);
  const std::string failure = fmt::format("parity: error: cannot run {}: ", spec.argv[0]);
  int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 ||
      (stdin_pipe && ::pipe2(in, O_CLOEXEC) != 0)) {
    ClosePipe(out), ClosePipe(err), ClosePipe(in);
    return Status::Internal("pipe failed");
  }
  if (!stdin_pipe) in[0] = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    SetUpChild(parent, in[0], out[1], err[1]);
    if (spec.cwd.empty() || ::chdir(spec.cwd.c_str()) == 0) {
      ::execve(image.program.c_str(), image.argv.data(), image.envp.data());
    }
    const char* reason = std::strerror(errno);
    (void)!::write(STDERR_FILENO, failure.data(), failure.size());
    (void)!::write(STDERR_FILENO, reason, std::strlen(reason));
    (void)!::write(STDERR_FILENO, "\n", 1);
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  if (in[0] >= 0) ::close(in[0]);
  if (pid < 0) {
    const int error = errno;
    ::close(out[0]), ::close(err[0]);
    if (in[1] >= 0) ::close(in[1]);
    return Status::Internal(fmt::format("fork failed: {}", std::strerror(error)));
  }
  ::setpgid(pid, pid);  // also here, so the group exists before any kill
  StartedProcess started{static_cast<int>(pid), in[1], out[0], err[0]};
  for (int fd : {started.stdin_fd, started.stdout_fd, started.stderr_fd}) {
    if (fd >= 0) ::fcntl(fd, F_SETFL, O_NONBLOCK);
  }
  return started;
}

std::string LogTail(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return "";
  const std::streamoff from = size > static_cast<std::streamoff>(max_bytes)
                                  ? size - static_cast<std::streamoff>(max_bytes)
                                  : 0;
  in.seekg(from);
  std::string text(static_cast<std::size_t>(size - from), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

std::string LastParityError(const std::string& log) {
  constexpr std::string_view kPrefix = "parity: error: ";
  std::size_t at = std::string::npos;
  for (std::size_t pos = log.find(kPrefix); pos != std::string::npos;
       pos = log.find(kPrefix, pos + 1)) {
    if (pos == 0 || log[pos - 1] == '\n') at = pos;
  }
  if (at == std::string::npos) return "";
  const std::size_t end = log.find('\n', at);
  return log.substr(at + kPrefix.size(),
                    end == std::string::npos ? end : end - at - kPrefix.size());
}

}  // namespace parity
