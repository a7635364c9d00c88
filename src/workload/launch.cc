// SPDX-License-Identifier: Apache-2.0
#include "workload/launch.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

extern char** environ;

namespace parity::workload {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kWhatCanBeCaptured =
    "parity capture runs `python SCRIPT`, `python -m MODULE`, `torchrun ...`, or a program "
    "whose #! line names python";

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// argv[0] as execvp would find it; "" when it can't be.
std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return IsExecutableFile(name) ? name : "";
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    const std::string candidate = fmt::format("{}/{}", dir.empty() ? "." : dir, name);
    if (IsExecutableFile(candidate)) return candidate;
    if (colon == std::string_view::npos) return "";
    rest.remove_prefix(colon + 1);
  }
}

// The #! line of `path` ("" when it has none or can't be read); at most 256 bytes.
std::string ShebangLine(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char buffer[256] = {};
  in.read(buffer, sizeof(buffer));
  const std::string head(buffer, static_cast<std::size_t>(in.gcount()));
  if (head.rfind("#!", 0) != 0) return "";
  return head.substr(0, head.find('\n'));
}

bool IsDistributedLauncherModule(const std::string& module) {
  return module == "torch.distributed.run" || module == "torch.distributed.launch";
}

// The interpreter's own options, up to the script, -m or -c: a flag that keeps the capture
// out is an error; -m torch.distributed.run makes the command a torchrun.
Status ScanInterpreterOptions(const std::vector<std::string>& argv, PythonCommand* command) {
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "-m") {
      if (i + 1 < argv.size() && IsDistributedLauncherModule(argv[i + 1])) {
        command->workers_only = true;
      }
      return Status::Ok();
    }
    if (a == "-c" || a == "-" || a.empty() || a[0] != '-') return Status::Ok();
    if (a == "-W" || a == "-X") {  // these take the next argument
      ++i;
      continue;
    }
    if (a.rfind("--", 0) == 0) continue;
    for (std::size_t k = 1; k < a.size(); ++k) {
      const char c = a[k];
      if (c == 'I' || c == 'S' || c == 'E') {
        return Status::Invalid(
            argv[0], fmt::format("python -{} keeps the capture out ({}): run it without", c,
                                 c == 'S'   ? "no sitecustomize"
                                 : c == 'E' ? "PYTHONPATH ignored"
                                            : "isolated mode ignores PYTHONPATH"));
      }
      if (c == 'm' || c == 'c' || c == 'W' || c == 'X') break;  // the rest is its argument
    }
  }
  return Status::Ok();
}

std::atomic<pid_t> g_child{0};

// Passes on what was sent to this process alone; a terminal's signal (si_code SI_KERNEL)
// reached the child already, through the process group.
void Forward(int signal_number, siginfo_t* info, void*) {
  const pid_t child = g_child.load();
  if (child > 0 && info != nullptr && info->si_code <= 0) ::kill(child, signal_number);
}

}  // namespace

Result<PythonCommand> ClassifyCommand(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty()) return Status::Invalid("", "no command to capture");
  PythonCommand command;
  command.program = FindProgram(argv[0]);
  if (command.program.empty()) {
    return Status::Invalid(argv[0], "command not found (not an executable file, nor on PATH)");
  }
  const std::string base = fs::path(command.program).filename().string();
  static const std::regex kInterpreter(R"(python[0-9.]*)");
  if (std::regex_match(base, kInterpreter)) {
    PARITY_RETURN_IF_ERROR(ScanInterpreterOptions(argv, &command));
    return command;
  }
  const std::string shebang = ShebangLine(command.program);
  if (shebang.find("python") == std::string::npos) {
    return Status::Invalid(
        argv[0], fmt::format("not a Python interpreter or Python script: {}", kWhatCanBeCaptured));
  }
  command.workers_only = base == "torchrun";
  return command;
}

Status PrepareDumpRoot(const std::string& dir) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) return Status::Invalid(dir, "exists and is not a directory");
    if (fs::directory_iterator(dir, ec) != fs::directory_iterator()) {
      return Status::Invalid(dir, "not empty (a capture needs a new or empty directory)");
    }
    if (ec) return Status::Invalid(dir, fmt::format("cannot be read ({})", ec.message()));
  } else if (!fs::create_directories(dir, ec) || ec) {
    return Status::Invalid(
        dir, fmt::format("cannot be created ({})", ec ? ec.message() : "unknown reason"));
  }
  const std::string probe = dir + "/.parity_write_probe";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::Invalid(dir, fmt::format("not writable ({})", std::strerror(errno)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return Status::Ok();
}

Result<int> RunPassingThrough(const std::vector<std::string>& argv,
                              const std::map<std::string, std::string>& env) {
  const std::string program = FindProgram(argv[0]);
  if (program.empty()) return Status::Invalid(argv[0], "command not found");
  std::vector<std::string> entries;
  std::set<std::string> overridden;
  for (const auto& [name, value] : env) {
    entries.push_back(name + "=" + value);
    overridden.insert(name);
  }
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (!overridden.contains(std::string(entry.substr(0, entry.find('='))))) {
      entries.emplace_back(entry);
    }
  }
  std::vector<char*> envp;
  for (std::string& entry : entries) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  struct sigaction forward {};
  forward.sa_sigaction = Forward;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  ::sigaction(SIGINT, &forward, &old_int);
  ::sigaction(SIGTERM, &forward, &old_term);
  const pid_t pid = ::fork();
  if (pid == 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGINT, &dfl, nullptr);
    ::sigaction(SIGTERM, &dfl, nullptr);
    ::execve(program.c_str(), cargv.data(), envp.data());
    std::fprintf(stderr, "parity: error: cannot run %s: %s\n", argv[0].c_str(),
                 std::strerror(errno));
    ::_exit(127);
  }
  if (pid < 0) {
    const int err = errno;
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
    return Status::Invalid(argv[0], fmt::format("cannot start ({})", std::strerror(err)));
  }
  g_child.store(pid);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child.store(0);
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace parity::workload
